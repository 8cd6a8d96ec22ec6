import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { jsonOrCsv, sendCsv, wantsCsv } from '../../platform/http/csv.js';
import { dataEnvelope, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { errors } from '../../platform/errors.js';
import { reportCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  agingInvoiceSchema,
  agingQuery,
  agingSchema,
  churnSchema,
  cohortsSchema,
  movementSchema,
  mrrSchema,
  rangeQuery,
  snapshotSchema,
  waterfallQuery,
  waterfallSchema,
} from '../../modules/analytics/index.js';
import { churnReasonsQuery, churnReasonsSchema, getChurnReasons } from '../../modules/analytics/index.js';
import {
  getChurn,
  getCohorts,
  getInvoiceAging,
  getMrr,
  getWaterfall,
  listAgingBucket,
  listWaterfallBucket,
  snapshotTenant,
} from '../../modules/analytics/index.js';

const tags = ['analytics'];

export function registerAnalyticsRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/analytics/mrr',
    {
      schema: {
        tags,
        summary: 'MRR at the end of each month, normalized by interval (from daily snapshots)',
        querystring: rangeQuery,
        response: { 200: jsonOrCsv(dataEnvelope(mrrSchema)) },
      },
    },
    async (request, reply) => {
      const report = await getMrr(reportCtx(deps, request), request.query);
      if (wantsCsv(request)) {
        return sendCsv(
          reply,
          `mrr-${report.currency}.csv`,
          ['month', 'currency', 'mrr', 'subscriptions', 'customers', 'snapshot_date'],
          report.months.map((m) => ({ ...m, currency: report.currency })),
        );
      }
      return { data: report };
    },
  );

  app.get(
    '/v1/analytics/mrr/waterfall',
    {
      schema: {
        tags,
        summary: 'MRR waterfall per month (new, expansion, contraction, churned, reactivated); with bucket and month, the subscriptions behind one bucket',
        querystring: waterfallQuery.extend(paginationQuery()),
        response: { 200: jsonOrCsv(z.union([dataEnvelope(waterfallSchema), listEnvelope(movementSchema)])) },
      },
    },
    async (request, reply) => {
      const ctx = reportCtx(deps, request);
      const q = request.query;
      if (q.bucket !== undefined || q.month !== undefined) {
        if (!q.bucket) throw errors.invalidField('bucket', 'is required with month');
        if (!q.month) throw errors.invalidField('month', 'is required with bucket');
        const page = toPage(q);
        const { rows, total } = await listWaterfallBucket(ctx, { currency: q.currency, bucket: q.bucket, month: q.month }, page);
        if (wantsCsv(request)) {
          return sendCsv(
            reply,
            `mrr-${q.bucket}-${q.month}.csv`,
            ['month', 'effective_date', 'kind', 'subscription_id', 'customer_id', 'currency', 'previous_mrr', 'mrr', 'change'],
            rows,
          );
        }
        return listResponse(rows, total, page);
      }
      const report = await getWaterfall(ctx, q);
      if (wantsCsv(request)) {
        const columns = ['month', 'currency', 'starting_mrr', 'new', 'expansion', 'reactivated', 'contraction', 'churned', 'net_change', 'ending_mrr'];
        return sendCsv(
          reply,
          `mrr-waterfall-${report.currency}.csv`,
          columns,
          report.months.map((m) => ({ ...m, currency: report.currency })),
        );
      }
      return { data: report };
    },
  );

  app.get(
    '/v1/analytics/churn',
    {
      schema: {
        tags,
        summary: 'Logo churn, revenue churn and net revenue retention per month',
        querystring: rangeQuery,
        response: { 200: jsonOrCsv(dataEnvelope(churnSchema)) },
      },
    },
    async (request, reply) => {
      const report = await getChurn(reportCtx(deps, request), request.query);
      if (wantsCsv(request)) {
        const columns = [
          'month',
          'customers_start',
          'customers_churned',
          'logo_churn_rate',
          'starting_mrr',
          'churned_mrr',
          'contraction_mrr',
          'expansion_mrr',
          'gross_revenue_churn_rate',
          'net_revenue_retention',
        ];
        return sendCsv(reply, `churn-${report.currency}.csv`, columns, report.months);
      }
      return { data: report };
    },
  );

  app.get(
    '/v1/analytics/churn-reasons',
    {
      schema: {
        tags,
        summary: 'Cancellations requested in a range, by reason, with the newest feedback',
        querystring: churnReasonsQuery,
        response: { 200: dataEnvelope(churnReasonsSchema) },
      },
    },
    async (request) => ({ data: await getChurnReasons(reportCtx(deps, request), request.query) }),
  );

  app.get(
    '/v1/analytics/cohorts',
    {
      schema: {
        tags,
        summary: 'Retention by signup cohort (the month a customer first paid)',
        querystring: rangeQuery,
        response: { 200: jsonOrCsv(dataEnvelope(cohortsSchema)) },
      },
    },
    async (request, reply) => {
      const report = await getCohorts(reportCtx(deps, request), request.query);
      if (wantsCsv(request)) {
        const rows = report.cohorts.flatMap((c) => c.months.map((m) => ({ cohort: c.cohort, cohort_customers: c.customers, cohort_mrr: c.mrr, ...m })));
        return sendCsv(
          reply,
          `cohorts-${report.currency}.csv`,
          ['cohort', 'cohort_customers', 'cohort_mrr', 'month', 'customers', 'mrr', 'customer_retention'],
          rows,
        );
      }
      return { data: report };
    },
  );

  app.get(
    '/v1/analytics/invoice-aging',
    {
      schema: {
        tags,
        summary: 'Amounts still due on open invoices by days past due; with bucket, the invoices behind it',
        querystring: agingQuery.extend(paginationQuery()),
        response: { 200: jsonOrCsv(z.union([dataEnvelope(agingSchema), listEnvelope(agingInvoiceSchema)])) },
      },
    },
    async (request, reply) => {
      const ctx = reportCtx(deps, request);
      const q = request.query;
      if (q.bucket) {
        const page = toPage(q);
        const { rows, total } = await listAgingBucket(ctx, { currency: q.currency, bucket: q.bucket }, page);
        if (wantsCsv(request)) {
          return sendCsv(
            reply,
            `aging-${q.bucket}.csv`,
            ['bucket', 'invoice_id', 'number', 'customer_id', 'currency', 'due_date', 'days_past_due', 'amount_due'],
            rows,
          );
        }
        return listResponse(rows, total, page);
      }
      const report = await getInvoiceAging(ctx, q);
      if (wantsCsv(request)) {
        return sendCsv(
          reply,
          `aging-${report.currency}.csv`,
          ['bucket', 'currency', 'amount', 'count'],
          report.buckets.map((b) => ({ ...b, currency: report.currency })),
        );
      }
      return { data: report };
    },
  );

  app.post(
    '/v1/analytics/snapshots',
    {
      schema: {
        tags,
        summary: "Take today's MRR snapshot now (the daily job does this on its own; past days never change)",
        response: { 200: dataEnvelope(snapshotSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await snapshotTenant(ctx) } })),
  );
}
