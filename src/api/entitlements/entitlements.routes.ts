import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { blockingAlert } from '../../modules/alerts/index.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { principalOf, readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  computeCustomerEntitlements,
  createFeature,
  createFeatureBody,
  customerEntitlementsSchema,
  EntitlementCache,
  entitlementListSchema,
  featureSchema,
  getPlanEntitlements,
  listFeatures,
  putEntitlementsBody,
  putPlanEntitlements,
  putSubscriptionEntitlements,
  toFeature,
} from '../../modules/entitlements/index.js';

export function registerEntitlementRoutes(app: KoshApp, deps: AppDeps): void {
  // This app instance's cache: other processes' changes reach it through the change feed.
  const cache = new EntitlementCache(deps.changes);

  app.post(
    '/v1/features',
    {
      schema: {
        tags: ['entitlements'],
        summary: 'Create a feature (boolean, quantity or enum)',
        body: createFeatureBody,
        response: { 201: dataEnvelope(featureSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: toFeature(await createFeature(ctx, request.body)) } })),
  );

  app.get(
    '/v1/features',
    { schema: { tags: ['entitlements'], summary: 'List features', response: { 200: z.object({ data: z.array(featureSchema) }) } } },
    async (request) => ({
      data: (await listFeatures(readCtx(deps, request))).map(toFeature),
    }),
  );

  app.put(
    '/v1/plans/:id/entitlements',
    {
      schema: {
        tags: ['entitlements'],
        summary: "Set a plan's entitlements (replaces them all)",
        params: idParams,
        body: putEntitlementsBody,
        response: { 200: entitlementListSchema },
      },
    },
    async (request, reply) => {
      const answer = await runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await putPlanEntitlements(ctx, request.params.id, request.body) },
      }));
      cache.forget(principalOf(request).tenantId);
      return answer;
    },
  );

  app.get(
    '/v1/plans/:id/entitlements',
    { schema: { tags: ['entitlements'], summary: "A plan's entitlements", params: idParams, response: { 200: entitlementListSchema } } },
    async (request) => ({ data: await getPlanEntitlements(readCtx(deps, request), request.params.id) }),
  );

  app.put(
    '/v1/subscriptions/:id/entitlements',
    {
      schema: {
        tags: ['entitlements'],
        summary: "Set a subscription's entitlement overrides (replaces them all; they win over its plan's)",
        params: idParams,
        body: putEntitlementsBody,
        response: { 200: entitlementListSchema },
      },
    },
    async (request, reply) => {
      const answer = await runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await putSubscriptionEntitlements(ctx, request.params.id, request.body) },
      }));
      cache.forget(principalOf(request).tenantId);
      return answer;
    },
  );

  app.get(
    '/v1/customers/:id/entitlements',
    {
      schema: {
        tags: ['entitlements'],
        summary:
          'What the customer may use now, and whether it is blocked (payment wall, alert caps): served from memory, current within a second of any change',
        params: idParams,
        response: { 200: dataEnvelope(customerEntitlementsSchema) },
      },
    },
    async (request) => {
      const ctx = readCtx(deps, request);
      return { data: await cache.get(ctx, request.params.id, () => computeCustomerEntitlements(ctx, request.params.id, blockingAlert)) };
    },
  );
}
