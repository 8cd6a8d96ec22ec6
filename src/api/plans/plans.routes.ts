import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { createPlanBody, createPriceBody, listPlansQuery, planSchema, priceParams, updatePlanBody } from '../../modules/plans/index.js';
import { archivePrice, getPlan, listPlans, updatePlan } from '../../modules/plans/index.js';
import { createPlanWithPrices } from '../../flows/plans/create-plan.js';
import { addPlanPrice } from '../../flows/plans/add-plan-price.js';

export function registerPlanRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/plans',
    {
      schema: {
        tags: ['plans'],
        summary: 'Create a plan with its prices',
        body: createPlanBody,
        response: { 201: dataEnvelope(planSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createPlanWithPrices(ctx, request.body) } })),
  );

  app.get(
    '/v1/plans',
    {
      schema: {
        tags: ['plans'],
        summary: 'List plans',
        querystring: listPlansQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(planSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { plans, total } = await listPlans(readCtx(deps, request), request.query, page);
      return listResponse(plans, total, page);
    },
  );

  app.get(
    '/v1/plans/:id',
    {
      schema: { tags: ['plans'], summary: 'Get a plan', params: idParams, response: { 200: dataEnvelope(planSchema) } },
    },
    async (request) => ({ data: await getPlan(readCtx(deps, request), request.params.id) }),
  );
  app.patch(
    '/v1/plans/:id',
    {
      schema: {
        tags: ['plans'],
        summary: 'Update a plan (name, description, features, metadata); active: false archives it',
        params: idParams,
        body: updatePlanBody,
        response: { 200: dataEnvelope(planSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updatePlan(ctx, request.params.id, request.body) } })),
  );
  app.post(
    '/v1/plans/:id/prices',
    {
      schema: {
        tags: ['plans'],
        summary: "Add a price (prices are immutable; by default the currency's active price is archived)",
        params: idParams,
        body: createPriceBody,
        response: { 201: dataEnvelope(planSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await addPlanPrice(ctx, request.params.id, request.body) } })),
  );
  app.post(
    '/v1/plans/:id/prices/:price_id/archive',
    {
      schema: {
        tags: ['plans'],
        summary: 'Archive a price: no new subscriptions use it; running subscriptions keep it',
        params: priceParams,
        response: { 200: dataEnvelope(planSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await archivePrice(ctx, request.params.id, request.params.price_id) } })),
  );
}
