import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { createReferralBody, listReferralsQuery, referralListEnvelope, referralSchema } from '../../modules/referrals/index.js';
import { cancelReferral, createReferral, getReferral, listReferrals, toReferral } from '../../modules/referrals/index.js';

export function registerReferralRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/referrals',
    {
      schema: {
        errors: ['not_found'],
        tags: ['referrals'],
        summary: 'Create a pending referral',
        body: createReferralBody,
        response: { 201: dataEnvelope(referralSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: toReferral(await createReferral(ctx, request.body)) } })),
  );

  app.get(
    '/v1/referrals',
    {
      schema: {
        tags: ['referrals'],
        summary: 'List referrals, newest first (SPEC 4.7 paging: limit/per_page, page, offset; or a cursor, starting_after / ending_before)',
        querystring: listReferralsQuery,
        response: { 200: referralListEnvelope },
      },
    },
    async (request) => {
      const { referrals, total, page, perPage, hasMore } = await listReferrals(readCtx(deps, request), request.query);
      return {
        data: referrals,
        object: 'list' as const,
        has_more: hasMore,
        total_count: total,
        meta: { page, per_page: perPage, total, total_pages: Math.ceil(total / perPage) },
      };
    },
  );

  app.get(
    '/v1/referrals/:id',
    { schema: { tags: ['referrals'], summary: 'Get a referral', params: idParams, response: { 200: dataEnvelope(referralSchema) } } },
    async (request) => ({ data: await getReferral(readCtx(deps, request), request.params.id) }),
  );

  app.post(
    '/v1/referrals/:id/cancel',
    { schema: { tags: ['referrals'], summary: 'Cancel a pending referral', params: idParams, response: { 200: dataEnvelope(referralSchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: toReferral(await cancelReferral(ctx, request.params.id)) } })),
  );
}
