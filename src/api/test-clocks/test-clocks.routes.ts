import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { errors } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, runTwoPhaseAction, type KoshApp } from '../../platform/http/server.js';
import { advanceTestClock } from '../../flows/test-clocks/advance-test-clock.js';
import {
  advanceTestClockBody,
  createTestClock,
  createTestClockBody,
  deletedTestClockSchema,
  deleteTestClock,
  getTestClock,
  listTestClocks,
  startTestClockAdvance,
  testClockSchema,
} from '../../modules/test-clocks/index.js';

const tags = ['test-clocks'];

/** Test clocks exist in test mode only (DESIGN §24): a live deployment refuses them with 400. */
function testModeOnly(deps: AppDeps): void {
  if (deps.config.mode === 'live') throw errors.validation('test clocks exist in test mode only', undefined, 'test_clock_live_mode');
}

export function registerTestClockRoutes(app: KoshApp, deps: AppDeps): void {
  const one = { 200: dataEnvelope(testClockSchema) };
  app.post(
    '/v1/test-clocks',
    {
      schema: {
        tags,
        summary: 'Create a test clock (test mode): customers created on it are billed at its time, as it advances',
        body: createTestClockBody,
        response: { 201: dataEnvelope(testClockSchema) },
      },
    },
    (request, reply) => {
      testModeOnly(deps);
      return runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createTestClock(ctx, request.body) } }));
    },
  );

  app.get(
    '/v1/test-clocks',
    { schema: { tags, summary: 'List test clocks', querystring: z.object(paginationQuery()), response: { 200: listEnvelope(testClockSchema) } } },
    async (request) => {
      testModeOnly(deps);
      const page = toPage(request.query);
      const { clocks, total } = await listTestClocks(readCtx(deps, request), page);
      return listResponse(clocks, total, page);
    },
  );

  app.get('/v1/test-clocks/:id', { schema: { tags, summary: 'Get a test clock', params: idParams, response: one } }, async (request) => {
    testModeOnly(deps);
    return { data: await getTestClock(readCtx(deps, request), request.params.id) };
  });

  app.post(
    '/v1/test-clocks/:id/advance',
    {
      schema: {
        errors: ['conflict'],
        tags,
        summary:
          'Advance a test clock to `to`: everything due for its customers in between runs in time order (renewals, trial ends, usage, dunning), then it answers, status ready. 409 while another advance runs',
        params: idParams,
        body: advanceTestClockBody,
        response: one,
      },
    },
    (request, reply) => {
      testModeOnly(deps);
      const to = new Date(request.body.to);
      return runTwoPhaseAction(deps, request, reply, {
        intent: async (ctx) => {
          const row = await startTestClockAdvance(ctx, request.params.id, to);
          return { tenant_id: row.tenant_id, id: row.id };
        },
        call: async (intent, firstTime) => {
          if (!firstTime) return;
          const env = { db: deps.db, clock: deps.clock, config: deps.config, logger: deps.logger, secrets: deps.secrets, scope: deps.scope };
          await advanceTestClock(env, deps.jobHandlers ?? {}, intent.tenant_id, intent.id, to);
        },
        answer: async (intent) => ({ status: 200, body: { data: await getTestClock(readCtx(deps, request), intent.id) } }),
      });
    },
  );

  app.delete(
    '/v1/test-clocks/:id',
    {
      schema: {
        errors: ['conflict'],
        tags,
        summary: 'Delete a test clock (its customers stay on it, frozen)',
        params: idParams,
        response: { 200: dataEnvelope(deletedTestClockSchema) },
      },
    },
    (request, reply) => {
      testModeOnly(deps);
      return runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await deleteTestClock(ctx, request.params.id) } }));
    },
  );
}
