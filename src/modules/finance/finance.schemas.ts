import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const discrepancySchema = z
  .object({
    type: z.string(),
    invoice_id: z.uuid().nullable(),
    transaction_id: z.uuid().nullable(),
    reference_id: z.uuid().nullable(),
    account_code: z.int(),
    currency: z.string().nullable(),
    expected_amount: z.int(),
    found_amount: z.int(),
    expected: z.int(),
    found: z.int(),
    detail: z.string(),
  })
  .meta({ id: 'ReconciliationDiscrepancy' });

export type Discrepancy = z.infer<typeof discrepancySchema>;

export const reconciliationRunSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    entity_id: z.uuid().nullable(),
    status: z.enum(['running', 'completed', 'failed']),
    run_by: z.uuid().nullable(),
    run_at: fields.timestamp(),
    started_at: fields.timestamp(),
    completed_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    invoices_checked: z.int(),
    paid_invoices_checked: z.int(),
    total_discrepancies: z.int(),
    discrepancy_count: z.int(),
    tb_compared: z.boolean(),
    tb_accounts_checked: z.int(),
    tb_transfers_checked: z.int(),
    checked: z.object({
      invoices: z.int(),
      payments: z.int(),
      credit_notes: z.int(),
      journal_entries: z.int(),
      transfers: z.int(),
      accounts: z.int(),
    }),
    discrepancies_truncated: z.boolean(),
    failure: z.string().nullable(),
    discrepancies: z.array(discrepancySchema).optional(),
  })
  .meta({ id: 'ReconciliationRun' });

export type ReconciliationRun = z.infer<typeof reconciliationRunSchema>;

/**
 * `GET /v1/finance/reconciliation`: the latest run, or — on a tenant that has never run one — the
 * empty report (`status: not_run`, no id or times, nothing checked, no discrepancies).
 */
export const reconciliationReportSchema = reconciliationRunSchema
  .extend({
    id: z.uuid().nullable(),
    status: z.enum(['running', 'completed', 'failed', 'not_run']),
    run_at: fields.timestamp().nullable(),
    started_at: fields.timestamp().nullable(),
    created_at: fields.timestamp().nullable(),
  })
  .meta({ id: 'ReconciliationReport' });

export type ReconciliationReport = z.infer<typeof reconciliationReportSchema>;

export const startRunBody = z.object({ entity_id: z.uuid().optional() }).optional().default({});

/** A date (YYYY-MM-DD, the whole day) or an RFC 3339 date-time. */
const DATE_OR_TIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
const dateOrTime = z
  .string()
  .regex(DATE_OR_TIME, 'must be a date like 2026-04-01 or an RFC 3339 date-time like 2026-04-01T09:30:00Z')
  .refine((v) => !Number.isNaN(Date.parse(v)), 'must be a date like 2026-04-01 or an RFC 3339 date-time like 2026-04-01T09:30:00Z');

export const trialBalanceQuery = z.object({
  entity_id: z.uuid().optional(),
  currency: fields.currency().optional(),
  as_of: dateOrTime.optional(),
  basis: z
    .enum(['transaction', 'functional'])
    .optional()
    .describe(
      "transaction (default): one transaction currency's amounts; functional: every entry in the entity's functional currency (INR), each account with its transaction-currency balances beside",
    ),
});

export const trialBalanceSchema = z
  .object({
    entity_id: z.uuid(),
    currency: z.string(),
    as_of: fields.timestamp(),
    basis: z.enum(['transaction', 'functional']),
    accounts: z.array(
      z.object({
        code: z.int(),
        name: z.string(),
        debit: z.int(),
        credit: z.int(),
        balance: z.int(),
        transaction_balances: z
          .array(z.object({ currency: z.string(), balance: z.int() }))
          .optional()
          .describe('functional basis: the net (debit − credit) in each transaction currency'),
      }),
    ),
    total_debit: z.int(),
    total_credit: z.int(),
    balanced: z.boolean(),
    unvalued_entries: z.int().optional().describe('functional basis: foreign entries booked without a known rate (not in the totals)'),
  })
  .meta({ id: 'TrialBalance' });

export const ledgerAccountSchema = z
  .object({ code: z.int(), name: z.string(), type: z.enum(['asset', 'liability', 'revenue', 'contra_revenue']), normal_balance: z.enum(['debit', 'credit']) })
  .meta({ id: 'LedgerAccount' });

export const journalEntriesQuery = z.object({
  from: dateOrTime.optional(),
  to: dateOrTime.optional(),
  entity_id: z.uuid().optional(),
  currency: fields.currency().optional(),
  kind: z.string().max(100).optional(),
  account_code: z.coerce.number().int().min(1).max(65_535).optional(),
  invoice_id: z.uuid().optional(),
});

export const exportQuery = z.object({
  from: dateOrTime.optional(),
  to: dateOrTime.optional(),
  entity_id: z.uuid().optional(),
  currency: fields.currency().optional(),
});

export const revenueQuery = z.object({
  from: dateOrTime.optional(),
  to: dateOrTime.optional(),
  currency: fields.currency().optional(),
});

export const revenueSchema = z
  .object({
    currency: z.string(),
    from: fields.timestamp().nullable(),
    to: fields.timestamp().nullable(),
    recognized_total: z.int(),
    deferred_total: z.int(),
    months: z.array(z.object({ month: z.string(), recognized: z.int() })),
  })
  .meta({ id: 'RevenueReport' });
