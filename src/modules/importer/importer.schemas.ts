import { z } from 'zod';
import { fields, inInstantRange } from '../../platform/http/envelope.js';
import { createCustomerBody } from '../customers/index.js';
import type { SubscriptionStatus } from '../subscriptions/index.js';
import { sacCodeField } from '../tax/index.js';
import type { Section } from './import-source.js';

// ── fields ──────────────────────────────────────────────────────────────────────────────────────

/** SPEC 4.17's statuses, which are exactly the subscription states Kosh has. */
export const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'paused', 'canceled', 'past_due', 'unpaid'] as const satisfies readonly SubscriptionStatus[];

/** fields.currency checks the code against the one ISO 4217 table (platform/currencies.ts). */
const isoCurrency = () => fields.currency();

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** An RFC 3339 date-time with its offset (`2026-04-01T00:00:00Z`, `…+05:30`), as a Date. */
export const rfc3339 = () =>
  z.string().transform((value, ctx) => {
    const m = RFC3339.exec(value);
    const [year, month, day, hour, minute, second, offsetHours, offsetMinutes] = m
      ? ([m[1], m[2], m[3], m[4], m[5], m[6], m[8] ?? '0', m[9] ?? '0'].map(Number) as [number, number, number, number, number, number, number, number])
      : [];
    const valid =
      m &&
      month! >= 1 &&
      month! <= 12 &&
      day! >= 1 &&
      day! <= daysInMonth(year!, month!) &&
      hour! <= 23 &&
      minute! <= 59 &&
      second! <= 59 &&
      offsetHours! <= 23 &&
      offsetMinutes! <= 59;
    if (!valid) {
      ctx.addIssue({ code: 'custom', message: 'must be an RFC 3339 date-time with an offset, such as 2026-04-01T00:00:00Z' });
      return z.NEVER;
    }
    if (!inInstantRange(value)) {
      ctx.addIssue({ code: 'custom', message: 'must be between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59Z' });
      return z.NEVER;
    }
    return new Date(value);
  });

const planCode = () =>
  z
    .string()
    .trim()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only');

// ── records ─────────────────────────────────────────────────────────────────────────────────────

export const planRecord = z.strictObject({
  code: planCode(),
  name: fields.requiredText(200),
  interval_unit: z.enum(['day', 'week', 'month', 'year']),
  interval_count: z.int().min(1).max(365).default(1),
  amount: fields.positiveMinorUnits(),
  currency: isoCurrency(),
  hsn_code: z.literal('').or(sacCodeField()).optional(),
});
export type PlanRecord = z.output<typeof planRecord>;

/**
 * The customer fields of `POST /v1/customers`, and the same rule as its service: a GSTIN is an
 * Indian registration, so its customer is billed in India. The GSTIN's state and the billing
 * address's may differ (a head-office GSTIN with a branch address); place of supply follows the GSTIN.
 */
export const customerRecord = createCustomerBody.strict().superRefine((customer, ctx) => {
  const address = customer.billing_address;
  if (!customer.gstin || !address) return;
  if (address.country !== 'IN') {
    ctx.addIssue({ code: 'custom', path: ['gstin'], message: 'a GSTIN belongs to a customer in India (billing_address.country IN)' });
  }
});
export type CustomerRecord = z.output<typeof customerRecord>;

export const subscriptionRecord = z
  .strictObject({
    external_id: fields.requiredText(255),
    customer_email: z.email({ message: 'must be an e-mail address' }).max(254),
    plan_code: planCode(),
    status: z.enum(SUBSCRIPTION_STATUSES, { message: `must be one of ${SUBSCRIPTION_STATUSES.join(', ')}` }),
    current_period_start: rfc3339(),
    current_period_end: rfc3339(),
    trial_end: rfc3339().nullable().optional(),
    cancel_at_period_end: z.boolean().default(false),
  })
  .superRefine((s, ctx) => {
    if (!(s.current_period_end > s.current_period_start)) {
      ctx.addIssue({ code: 'custom', path: ['current_period_end'], message: 'must be after current_period_start' });
    }
    if (s.status === 'trialing' && s.trial_end && !(s.trial_end > s.current_period_start)) {
      ctx.addIssue({ code: 'custom', path: ['trial_end'], message: 'of a trialing subscription must be after current_period_start' });
    }
  });
export type SubscriptionRecord = z.output<typeof subscriptionRecord>;

export const recordSchemas = { plans: planRecord, customers: customerRecord, subscriptions: subscriptionRecord } as const;

/** The matching key of a record as the file gives it (before validation), for reports. */
export function recordKey(section: Section, value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const field = { plans: 'code', customers: 'email', subscriptions: 'external_id' }[section];
  const key = (value as Record<string, unknown>)[field];
  return typeof key === 'string' || typeof key === 'number' ? String(key).trim() : null;
}

/** One line for a row's validation errors: `amount: must be …; currency: …`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.');
      let message = issue.message;
      if (issue.code === 'invalid_type' && /received undefined$/.test(message)) message = 'is required';
      else if (issue.code === 'invalid_type' && issue.expected === 'object' && !path) message = 'must be an object';
      else if (issue.code === 'invalid_type' && (issue.expected === 'int' || issue.expected === 'number')) message = 'must be a whole number';
      else if (issue.code === 'invalid_type' && issue.expected === 'boolean') message = 'must be true or false';
      else if (issue.code === 'too_small' && issue.origin === 'number')
        message = issue.minimum === 1 ? 'must be greater than 0' : `must be at least ${issue.minimum}`;
      else if (issue.code === 'too_big' && issue.origin === 'number') message = `must be at most ${issue.maximum}`;
      else if (issue.code === 'invalid_value') message = `must be one of ${issue.values.map(String).join(', ')}`;
      else if (issue.code === 'unrecognized_keys') return `unknown field${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}`;
      return path ? `${path}: ${message}` : message;
    })
    .join('; ');
}

// ── CSV ─────────────────────────────────────────────────────────────────────────────────────────

/**
 * CSV columns: the JSON field names; a customer's billing address is flattened into
 * `billing_address.line1` … `billing_address.country` (docs/decisions, "import"). An empty cell
 * is an absent value.
 */
export const csvColumns: Record<Section, { required: readonly string[]; optional: readonly string[] }> = {
  plans: { required: ['code', 'name', 'interval_unit', 'amount', 'currency'], optional: ['interval_count', 'hsn_code'] },
  customers: {
    required: ['email'],
    optional: [
      'name',
      'external_id',
      'phone',
      'gstin',
      'billing_address.line1',
      'billing_address.line2',
      'billing_address.city',
      'billing_address.state_code',
      'billing_address.postal_code',
      'billing_address.country',
    ],
  },
  subscriptions: {
    required: ['external_id', 'customer_email', 'plan_code', 'status', 'current_period_start', 'current_period_end'],
    optional: ['trial_end', 'cancel_at_period_end'],
  },
};

const INTEGER_COLUMNS = new Set(['amount', 'interval_count']);

/** A whole number stays a number; anything else stays text, for the schema to refuse by name. */
function csvInteger(cell: string): number | string {
  return /^[+-]?\d{1,16}$/.test(cell.trim()) ? Number(cell.trim()) : cell;
}

function csvBoolean(cell: string): boolean | string {
  const v = cell.trim().toLowerCase();
  return v === 'true' ? true : v === 'false' ? false : cell;
}

/** A CSV row (header → cell) in the shape of the JSON record, for the same schema to judge. */
export function fromCsvRecord(section: Section, record: Record<string, string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  let address: Record<string, string> | undefined;
  for (const [column, cell] of Object.entries(record)) {
    if (cell === '') continue;
    if (column.startsWith('billing_address.')) {
      (address ??= {})[column.slice('billing_address.'.length)] = cell;
    } else if (section === 'plans' && INTEGER_COLUMNS.has(column)) {
      out[column] = csvInteger(cell);
    } else if (section === 'subscriptions' && column === 'cancel_at_period_end') {
      out[column] = csvBoolean(cell);
    } else {
      out[column] = cell;
    }
  }
  if (address) out.billing_address = address;
  return out;
}

// ── reports ─────────────────────────────────────────────────────────────────────────────────────

const counts = z.object({ plans: z.int(), customers: z.int(), subscriptions: z.int() });

export const importReportSchema = z.object({
  dry_run: z.boolean(),
  created: counts,
  skipped: counts,
  failed: z.array(
    z.object({
      kind: z.enum(['plan', 'customer', 'subscription', 'file']),
      key: z.string().nullable(),
      error: z.string(),
      line: z.int().optional(),
      index: z.int().optional(),
    }),
  ),
});
export type ImportReport = z.infer<typeof importReportSchema>;
export type FailedRow = ImportReport['failed'][number];

const value = z.union([z.string(), z.number(), z.boolean(), z.null()]);

export const compareIssueSchema = z.object({
  kind: z.enum(['plan', 'customer', 'subscription', 'file']),
  key: z.string().nullable(),
  field: z.string(),
  expected: value,
  found: value,
});
export type CompareIssue = z.infer<typeof compareIssueSchema>;

const coverageCounts = z.object({
  in_source: z.int().describe('valid records in the source'),
  in_kosh: z.int().describe("the tenant's records in Kosh"),
  matched: z.int().describe('in both (fields may still differ: see issues)'),
  missing: z.int().describe('in the source, not in Kosh'),
  extra: z.int().describe('in Kosh, not in the source'),
});
export type CoverageCounts = z.infer<typeof coverageCounts>;

export const compareReportSchema = z
  .object({
    ready: z.boolean().describe('true only when there are no issues'),
    issues: z.array(compareIssueSchema),
    coverage: z.object({ plans: coverageCounts, customers: coverageCounts, subscriptions: coverageCounts }),
  })
  .meta({ id: 'ImportComparison' });
export type CompareReport = z.infer<typeof compareReportSchema>;

/** The body of `POST /v1/imports/compare`: the import document itself. Records are judged one by one. */
export const compareBody = z.strictObject({
  plans: z.array(z.unknown()).nullable().optional(),
  customers: z.array(z.unknown()).nullable().optional(),
  subscriptions: z.array(z.unknown()).nullable().optional(),
});
export type CompareBody = z.infer<typeof compareBody>;
