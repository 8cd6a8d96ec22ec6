import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  accessSchema,
  campaignSchema,
  collectionItemSchema,
  createCampaignBody,
  createStepBody,
  deleteCampaignQuery,
  executionSchema,
  listExecutionsQuery,
  overviewQuery,
  overviewSchema,
  weightsSchema,
  stepParams,
  stepSchema,
  updateCampaignBody,
  updateStepBody,
} from '../../modules/dunning/index.js';
import {
  addStep,
  createCampaign,
  customerAccess,
  deleteCampaign,
  deleteStep,
  dunningOverview,
  dunningWeights,
  getCampaign,
  listCampaigns,
  listCollections,
  listExecutions,
  updateCampaign,
  updateStep,
} from '../../modules/dunning/index.js';

const tags = ['dunning'];

export function registerDunningRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/dunning-campaigns',
    { schema: { tags, summary: 'Create a dunning campaign (SPEC 4.6)', body: createCampaignBody, response: { 201: dataEnvelope(campaignSchema) } } },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createCampaign(ctx, request.body) } })),
  );

  app.get(
    '/v1/dunning-campaigns',
    { schema: { tags, summary: 'List dunning campaigns with their steps', response: { 200: listEnvelope(campaignSchema) } } },
    async (request) => {
      const campaigns = await listCampaigns(readCtx(deps, request));
      return { data: campaigns, object: 'list' as const, has_more: false, total_count: campaigns.length };
    },
  );

  app.get(
    '/v1/dunning-campaigns/:id',
    { schema: { tags, summary: 'Get a dunning campaign', params: idParams, response: { 200: dataEnvelope(campaignSchema) } } },
    async (request) => ({ data: await getCampaign(readCtx(deps, request), request.params.id) }),
  );

  app.patch(
    '/v1/dunning-campaigns/:id',
    {
      schema: {
        tags,
        summary: 'Update a dunning campaign (making it the default unsets the old one)',
        params: idParams,
        body: updateCampaignBody,
        response: { 200: dataEnvelope(campaignSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateCampaign(ctx, request.params.id, request.body) } })),
  );

  app.delete(
    '/v1/dunning-campaigns/:id',
    {
      schema: {
        tags,
        summary: 'Delete a campaign; one dunning invoices needs ?cancel_executions=true (one with history is deactivated instead)',
        params: idParams,
        querystring: deleteCampaignQuery,
        response: { 200: dataEnvelope(campaignSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await deleteCampaign(ctx, request.params.id, request.query.cancel_executions === 'true') },
      })),
  );

  app.post(
    '/v1/dunning-campaigns/:id/steps',
    { schema: { tags, summary: 'Add a step (step_order is assigned)', params: idParams, body: createStepBody, response: { 201: dataEnvelope(stepSchema) } } },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await addStep(ctx, request.params.id, request.body) } })),
  );

  app.patch(
    '/v1/dunning-campaigns/:id/steps/:step_id',
    { schema: { tags, summary: 'Update a step', params: stepParams, body: updateStepBody, response: { 200: dataEnvelope(stepSchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await updateStep(ctx, request.params.id, request.params.step_id, request.body) },
      })),
  );

  app.delete(
    '/v1/dunning-campaigns/:id/steps/:step_id',
    { schema: { tags, summary: 'Delete a step', params: stepParams, response: { 200: dataEnvelope(stepSchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await deleteStep(ctx, request.params.id, request.params.step_id) } })),
  );

  app.get(
    '/v1/dunning-executions',
    {
      schema: {
        tags,
        summary: 'Dunning executions with their actions, newest first',
        querystring: listExecutionsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(executionSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { executions, total } = await listExecutions(readCtx(deps, request), request.query, page);
      return listResponse(executions, total, page);
    },
  );

  app.get(
    '/v1/customers/:id/access',
    { schema: { tags, summary: 'Whether a payment wall blocks the customer (DESIGN §12)', params: idParams, response: { 200: dataEnvelope(accessSchema) } } },
    async (request) => ({ data: await customerAccess(readCtx(deps, request), request.params.id) }),
  );

  app.get(
    '/v1/analytics/dunning/overview',
    {
      schema: {
        tags,
        summary: 'Dunning results over a period (SPEC 4.14, both shapes)',
        querystring: overviewQuery,
        response: { 200: dataEnvelope(overviewSchema) },
      },
    },
    async (request) => ({ data: await dunningOverview(readCtx(deps, request), request.query) }),
  );

  app.get(
    '/v1/analytics/dunning/weights',
    {
      schema: {
        tags,
        summary: "Dunning weights (SPEC 4.16): the expected reward of each retry action per context, learned from this tenant's retries",
        description:
          "A context is the failure code × amount band × payment method type of the invoice a retry is for. Each action's weight is the posterior mean chance that a retry run that way recovers the invoice (Thompson sampling chooses the next retry by drawing from these posteriors; docs/decisions/0310).",
        response: { 200: dataEnvelope(weightsSchema) },
      },
    },
    async (request) => ({ data: await dunningWeights(readCtx(deps, request)) }),
  );

  app.get(
    '/v1/collections',
    {
      schema: {
        tags,
        summary: 'Overdue invoices, oldest first, with their dunning state',
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(collectionItemSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { items, total } = await listCollections(readCtx(deps, request), page);
      return listResponse(items, total, page);
    },
  );
}
