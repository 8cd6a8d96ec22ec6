import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope } from '../../platform/http/envelope.js';
import { principalOf, readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { closeEntityPeriod } from '../../flows/periods/close-period.js';
import { recordReturnFiled } from '../../flows/periods/record-gst-filing.js';
import { gstPeriodParams, listPeriods, periodParams, periodSchema, recordFilingBody, reopenPeriodBody, reopenPeriod } from '../../modules/periods/index.js';
import { idParams } from '../../platform/http/envelope.js';

/** Reporting periods and their close (DESIGN §18, docs/ledger.md "Periods and close"). */
export function registerPeriodRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/entities/:id/periods',
    {
      schema: {
        tags: ['entities'],
        summary: "The entity's reporting periods (calendar months in its time zone), newest first, with their close and GST filings",
        params: idParams,
        response: { 200: z.object({ data: z.array(periodSchema) }) },
      },
    },
    async (request) => ({ data: await listPeriods(readCtx(deps, request), request.params.id) }),
  );
  app.post(
    '/v1/entities/:id/periods/:period/close',
    {
      schema: {
        tags: ['entities'],
        summary: 'Close a month that has begun (finance or above): later postings are dated in the first open month; 409 lists draft invoices made in it',
        params: periodParams,
        response: { 200: dataEnvelope(periodSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await closeEntityPeriod(ctx, request.params.id, request.params.period, principalOf(request).actor) },
      })),
  );
  app.post(
    '/v1/entities/:id/periods/:period/reopen',
    {
      schema: {
        tags: ['entities'],
        summary: 'Reopen a closed month (owner only; audited, with a reason). Returns marked filed keep their filed figures',
        params: periodParams,
        body: reopenPeriodBody,
        response: { 200: dataEnvelope(periodSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await reopenPeriod(ctx, request.params.id, request.params.period, principalOf(request).actor, request.body.reason) },
      })),
  );
  for (const kind of ['gstr1', 'gstr3b'] as const) {
    app.post(
      `/v1/gst/returns/${kind}/:period/filed`,
      {
        schema: {
          tags: ['gst'],
          summary: `Record that ${kind.toUpperCase()} of a month (YYYY-MM) was filed: its figures as generated now are kept and answered from then on, and the month closes`,
          params: gstPeriodParams,
          body: recordFilingBody,
          response: { 200: dataEnvelope(periodSchema) },
        },
      },
      (request, reply) =>
        runAction(deps, request, reply, async (ctx) => ({
          status: 200,
          body: { data: await recordReturnFiled(ctx, kind, request.params.period, request.body, principalOf(request).actor) },
        })),
    );
  }
}
