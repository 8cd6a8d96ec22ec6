import { z } from 'zod';

const month = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])(-\d{2})?$/, 'must be a month YYYY-MM (or a date YYYY-MM-DD)')
  .describe('YYYY-MM (a date YYYY-MM-DD is taken as its month)');
const currency = z
  .string()
  .regex(/^[A-Za-z]{3}$/, 'must be a three-letter ISO 4217 code')
  .optional()
  .describe('ISO 4217; default the tenant base currency');
const format = z.enum(['json', 'csv']).optional().describe('csv answers the table as text/csv (so does Accept: text/csv)');

export const rangeQuery = z.object({ currency, from: month.max(10).optional(), to: month.max(10).optional(), format });

export const movementKind = z.enum(['new', 'expansion', 'contraction', 'churned', 'reactivated']);
export const waterfallQuery = rangeQuery.extend({ bucket: movementKind.optional(), month: month.max(10).optional() });

export const agingBucket = z.enum(['current', '1_30', '31_60', '61_90', '90_plus']);
export const agingQuery = z.object({ currency, bucket: agingBucket.optional(), format });

export const mrrSchema = z
  .object({
    currency: z.string(),
    from: z.string(),
    to: z.string(),
    months: z.array(z.object({ month: z.string(), mrr: z.int(), subscriptions: z.int(), customers: z.int(), snapshot_date: z.string().nullable() })),
  })
  .meta({ id: 'MrrSeries' });

const counts = z.object({ new: z.int(), expansion: z.int(), contraction: z.int(), churned: z.int(), reactivated: z.int() });

export const waterfallSchema = z
  .object({
    currency: z.string(),
    from: z.string(),
    to: z.string(),
    months: z.array(
      z.object({
        month: z.string(),
        starting_mrr: z.int(),
        new: z.int(),
        expansion: z.int(),
        contraction: z.int(),
        churned: z.int(),
        reactivated: z.int(),
        net_change: z.int(),
        ending_mrr: z.int(),
        counts,
      }),
    ),
  })
  .meta({ id: 'MrrWaterfall' });

export const movementSchema = z
  .object({
    id: z.uuid().describe('The movement (the cursor for starting_after / ending_before)'),
    subscription_id: z.uuid(),
    customer_id: z.uuid(),
    currency: z.string(),
    month: z.string(),
    effective_date: z.string(),
    kind: z.string(),
    previous_mrr: z.int(),
    mrr: z.int(),
    change: z.int(),
  })
  .meta({ id: 'MrrMovement' });

export const churnSchema = z
  .object({
    currency: z.string(),
    from: z.string(),
    to: z.string(),
    months: z.array(
      z.object({
        month: z.string(),
        customers_start: z.int(),
        customers_churned: z.int(),
        logo_churn_rate: z.number().nullable(),
        starting_mrr: z.int(),
        churned_mrr: z.int(),
        contraction_mrr: z.int(),
        expansion_mrr: z.int(),
        gross_revenue_churn_rate: z.number().nullable(),
        net_revenue_retention: z.number().nullable(),
      }),
    ),
  })
  .meta({ id: 'ChurnReport' });

export const cohortsSchema = z
  .object({
    currency: z.string(),
    from: z.string(),
    to: z.string(),
    cohorts: z.array(
      z.object({
        cohort: z.string(),
        customers: z.int(),
        mrr: z.int(),
        months: z.array(z.object({ month: z.string(), customers: z.int(), mrr: z.int(), customer_retention: z.number().nullable() })),
      }),
    ),
  })
  .meta({ id: 'CohortReport' });

export const agingSchema = z
  .object({
    currency: z.string(),
    as_of: z.string(),
    total: z.int(),
    buckets: z.array(z.object({ bucket: agingBucket, amount: z.int(), count: z.int() })),
  })
  .meta({ id: 'InvoiceAging' });

export const agingInvoiceSchema = z
  .object({
    invoice_id: z.uuid().describe('The invoice (the cursor for starting_after / ending_before)'),
    number: z.string().nullable(),
    customer_id: z.uuid(),
    currency: z.string(),
    due_date: z.string().nullable(),
    days_past_due: z.int(),
    amount_due: z.int(),
    bucket: agingBucket,
  })
  .meta({ id: 'AgingInvoice' });

export const snapshotSchema = z.object({ snapshot_date: z.string(), subscriptions: z.int(), movements: z.int() }).meta({ id: 'MrrSnapshotRun' });
