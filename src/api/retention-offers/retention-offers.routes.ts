import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  createRetentionOffer,
  createRetentionOfferBody,
  getRetentionOffer,
  listRetentionOffers,
  listRetentionOffersQuery,
  retentionOfferSchema,
  updateRetentionOffer,
  updateRetentionOfferBody,
} from '../../modules/coupons/index.js';

/** Retention offers (DESIGN §24, decision 0560): a coupon the portal offers a customer who starts to cancel for chosen reasons. */
export function registerRetentionOfferRoutes(app: KoshApp, deps: AppDeps): void {
  const tags = ['coupons'];
  const one = { 200: dataEnvelope(retentionOfferSchema) };
  app.post(
    '/v1/retention-offers',
    {
      schema: {
        errors: ['not_found', 'conflict'],
        tags,
        summary: 'Offer a coupon to customers who start to cancel in the portal for one of these reasons (a reason has at most one active offer)',
        body: createRetentionOfferBody,
        response: { 201: dataEnvelope(retentionOfferSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createRetentionOffer(ctx, request.body) } })),
  );
  app.get(
    '/v1/retention-offers',
    {
      schema: {
        tags,
        summary: 'List retention offers (filter: active)',
        querystring: listRetentionOffersQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(retentionOfferSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { offers, total } = await listRetentionOffers(readCtx(deps, request), request.query, page);
      return listResponse(offers, total, page);
    },
  );
  app.get('/v1/retention-offers/:id', { schema: { tags, summary: 'Get a retention offer', params: idParams, response: one } }, async (request) => ({
    data: await getRetentionOffer(readCtx(deps, request), request.params.id),
  }));
  app.patch(
    '/v1/retention-offers/:id',
    {
      schema: {
        errors: ['conflict'],
        tags,
        summary: 'Change the reasons or message of a retention offer, or (de)activate it; its coupon never changes',
        params: idParams,
        body: updateRetentionOfferBody,
        response: one,
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateRetentionOffer(ctx, request.params.id, request.body) } })),
  );
}
