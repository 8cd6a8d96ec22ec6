import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { createPlanBody, listPlansQuery, planSchema } from '../../modules/plans/index.js';
import { createPlan, getPlan, listPlans } from '../../modules/plans/index.js';

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
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createPlan(ctx, request.body) } })),
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
}
