import { z } from 'zod';
import { csvText, jsonOrCsv, sendCsv, wantsCsv } from '../../platform/http/csv.js';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { principalOf, readCtx, reportCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { journalEntrySchema } from '../../modules/ledger/index.js';
import {
  exportQuery,
  journalEntriesQuery,
  ledgerAccountSchema,
  reconciliationRunSchema,
  reconciliationReportSchema,
  revenueQuery,
  revenueSchema,
  startRunBody,
  trialBalanceQuery,
  trialBalanceSchema,
} from '../../modules/finance/index.js';
import { getLatestRun, getRun, listReconciliationRuns, requestRun } from '../../modules/finance/index.js';
import { chartOfAccounts, exportGeneralLedger, listJournalEntries, rangeOf, reportZone, trialBalance } from '../../modules/finance/index.js';
import { revenueReport } from '../../modules/finance/index.js';
import { tdsReport, tdsReportCsvRows, tdsReportQuery, tdsReportSchema, TDS_REPORT_CSV_COLUMNS } from '../../modules/finance/index.js';

export function registerFinanceRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/finance/reconciliation/runs',
    {
      schema: {
        errors: ['not_found'],
        tags: ['finance'],
        summary: 'Start a reconciliation run (billing → journal → secondary ledger); it runs in the job queue',
        body: startRunBody,
        response: { 202: dataEnvelope(reconciliationRunSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 202,
        body: { data: await requestRun(ctx, request.body ?? {}, principalOf(request).apiKeyId) },
      })),
  );

  app.get(
    '/v1/finance/reconciliation/runs',
    {
      schema: {
        tags: ['finance'],
        summary: 'List reconciliation runs, newest first (without their discrepancies)',
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(reconciliationRunSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { runs, total } = await listReconciliationRuns(readCtx(deps, request), page);
      return listResponse(runs, total, page);
    },
  );

  app.get(
    '/v1/finance/reconciliation/runs/:id',
    {
      schema: {
        tags: ['finance'],
        summary: 'Get a reconciliation run with its discrepancies (SPEC 4.11)',
        params: idParams,
        response: { 200: dataEnvelope(reconciliationRunSchema) },
      },
    },
    async (request) => ({ data: await getRun(readCtx(deps, request), request.params.id) }),
  );

  app.get(
    '/v1/finance/reconciliation',
    {
      schema: {
        tags: ['finance'],
        summary: 'The latest reconciliation run with its discrepancies (the empty report, status not_run, before the first run)',
        response: { 200: dataEnvelope(reconciliationReportSchema) },
      },
    },
    async (request) => ({ data: await getLatestRun(readCtx(deps, request)) }),
  );

  app.get(
    '/v1/finance/revenue',
    {
      schema: {
        tags: ['finance'],
        summary: 'Revenue recognized per month and revenue still deferred, in one currency',
        querystring: revenueQuery,
        response: { 200: dataEnvelope(revenueSchema) },
      },
    },
    async (request) => {
      const ctx = reportCtx(deps, request);
      const zone = await reportZone(ctx, undefined);
      const { from, to } = rangeOf(request.query, zone);
      return { data: await revenueReport(ctx, { from, to, currency: request.query.currency }, zone) };
    },
  );

  app.get(
    '/v1/tds/report',
    {
      schema: {
        errors: ['not_found'],
        tags: ['finance'],
        summary:
          'TDS customers deducted from an entity’s invoices in a TDS quarter, per customer: certified (Form 16A; Form 131 from 1 April 2026) and pending, with sections and Income-tax Act 2025 payment codes — to reconcile with Form 26AS/AIS',
        querystring: tdsReportQuery,
        response: { 200: jsonOrCsv(dataEnvelope(tdsReportSchema)) },
      },
    },
    async (request, reply) => {
      const report = await tdsReport(reportCtx(deps, request), request.query);
      if (wantsCsv(request)) return sendCsv(reply, `TDS-${report.quarter}.csv`, TDS_REPORT_CSV_COLUMNS, tdsReportCsvRows(report));
      return { data: report };
    },
  );

  app.get(
    '/v1/ledger/accounts',
    { schema: { tags: ['ledger'], summary: 'The chart of accounts', response: { 200: dataEnvelope(z.array(ledgerAccountSchema)) } } },
    async () => ({ data: chartOfAccounts() }),
  );

  app.get(
    '/v1/ledger/trial-balance',
    {
      schema: {
        errors: ['not_found'],
        tags: ['ledger'],
        summary: 'Trial balance of one entity × currency as of a date',
        querystring: trialBalanceQuery,
        response: { 200: dataEnvelope(trialBalanceSchema) },
      },
    },
    async (request) => ({ data: await trialBalance(reportCtx(deps, request), request.query) }),
  );

  app.get(
    '/v1/ledger/journal-entries',
    {
      schema: {
        tags: ['ledger'],
        summary: 'List journal entries with their lines (oldest first), filtered',
        querystring: journalEntriesQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(journalEntrySchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { entries, total } = await listJournalEntries(reportCtx(deps, request), request.query, page);
      return listResponse(entries, total, page);
    },
  );

  app.get(
    '/v1/ledger/export',
    {
      schema: {
        tags: ['ledger'],
        summary: 'General-ledger export: one CSV row per journal line, streamed',
        querystring: exportQuery,
        response: { 200: { description: 'The general ledger, one row per journal line', content: { 'text/csv': { schema: csvText } } } },
      },
    },
    async (request, reply) => {
      const ctx = reportCtx(deps, request);
      const stream = exportGeneralLedger(ctx, request.query, await reportZone(ctx, request.query.entity_id));
      // Streamed: the document's string is the concatenation of the stream's chunks.
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="general-ledger.csv"')
        .send(stream as unknown as string);
    },
  );
}
