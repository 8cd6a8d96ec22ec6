import { validatorCompiler } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { errors, KoshError } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { customerDailyUsage, dailyUsageQuery } from '../../flows/usage/daily-usage.js';
import { recordUsageEvents } from '../../flows/usage/record-usage-events.js';
import {
  billableMetricSchema,
  createBillableMetricBody,
  createMetric,
  dailyUsageSchema,
  getMetric,
  isPlainBatchBody,
  listMetrics,
  usageEventAcceptedSchema,
  usageEventBatchBody,
  usageEventBody,
  usageIngestResultSchema,
  type EventRefusal,
} from '../../modules/usage/index.js';

function refusalError(refusal: EventRefusal): KoshError {
  // The refusal's words are already a sentence ("no customer with external_id 'x'"): not wrapped again.
  if (refusal.status === 404) return new KoshError('not_found', refusal.error);
  if (refusal.status === 409) return errors.conflict(refusal.error, 'usage_period_closed');
  return errors.validation(refusal.error);
}

export function registerUsageRoutes(app: KoshApp, deps: AppDeps): void {
  const tags = ['usage'];
  app.post(
    '/v1/billable-metrics',
    {
      schema: {
        tags,
        summary: 'Create a billable metric (what metered prices bill: count, sum, max, unique_count or latest of events)',
        body: createBillableMetricBody,
        response: { 201: dataEnvelope(billableMetricSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createMetric(ctx, request.body) } })),
  );

  app.get(
    '/v1/billable-metrics',
    {
      schema: { tags, summary: 'List billable metrics', querystring: z.object(paginationQuery()), response: { 200: listEnvelope(billableMetricSchema) } },
    },
    async (request) => {
      const page = toPage(request.query);
      const { metrics, total } = await listMetrics(readCtx(deps, request), page);
      return listResponse(metrics, total, page);
    },
  );

  app.get(
    '/v1/billable-metrics/:id',
    { schema: { tags, summary: 'Get a billable metric', params: idParams, response: { 200: dataEnvelope(billableMetricSchema) } } },
    async (request) => ({ data: await getMetric(readCtx(deps, request), request.params.id) }),
  );

  app.get(
    '/v1/usage/daily',
    {
      schema: {
        errors: ['not_found'],
        tags,
        summary: "A customer's usage of one metric per calendar day over a range (at most 92 days), every day listed",
        querystring: dailyUsageQuery,
        response: { 200: dataEnvelope(dailyUsageSchema) },
      },
    },
    async (request) => ({ data: await customerDailyUsage(readCtx(deps, request), request.query) }),
  );

  app.post(
    '/v1/usage/events',
    {
      schema: {
        errors: ['not_found'],
        tags,
        summary: 'Record one usage event (a repeated transaction_id is a duplicate, not an error)',
        body: usageEventBody,
        response: { 202: dataEnvelope(usageEventAcceptedSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const recorded = await recordUsageEvents(ctx, [request.body]);
        const refusal = recorded.refusals[0];
        if (refusal) throw refusalError(refusal);
        return { status: 202, body: { data: { transaction_id: request.body.transaction_id, duplicate: recorded.duplicates > 0 } } };
      }),
  );

  app.post(
    '/v1/usage/events/batch',
    {
      schema: {
        tags,
        summary: 'Record up to 1 000 usage events: invalid ones are rejected by index, the others accepted',
        body: usageEventBatchBody,
        response: { 202: dataEnvelope(usageIngestResultSchema) },
      },
      // The plain batch is taken as it came (one loop over the events); anything else is parsed by
      // the schema as every route's body is, with the same errors. Each event is checked after.
      validatorCompiler: (route) => {
        const parse = validatorCompiler({ ...route, schema: route.schema as unknown as typeof usageEventBatchBody });
        return (body) => (isPlainBatchBody(body) ? { value: body } : parse(body));
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const { accepted, duplicates, rejected } = await recordUsageEvents(ctx, request.body.events);
        return { status: 202, body: { data: { accepted, duplicates, rejected } } };
      }),
  );
}
