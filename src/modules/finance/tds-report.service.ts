import { z } from 'zod';
import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { findEntity } from '../entities/index.js';
import { localDay, startOfLocalDay } from '../tax/index.js';

/**
 * TDS a customer deducted from an entity's invoices, per customer and TDS quarter, to reconcile with
 * the entity's Form 26AS / AIS (docs/decisions/0510). One row per deduction: TDS withheld with a
 * payment (pending: no certificate recorded for it) and TDS certified after the payment (Form 16A,
 * Form 131 from 1 April 2026). A quarter is the financial year's (Q1 April–June … Q4 January–March),
 * the one the deductor's quarterly statement and 26AS use; days are the entity's (India's).
 */

export const tdsReportQuery = z.object({
  entity_id: z.uuid(),
  quarter: z
    .string()
    .regex(/^\d{4}-\d{2}-Q[1-4]$/, 'must be a financial year and its quarter, e.g. 2026-27-Q1 (April–June 2026)')
    .describe('financial year and TDS quarter: 2026-27-Q1 is April–June 2026, 2026-27-Q4 January–March 2027')
    .meta({ example: '2026-27-Q1' }),
  customer_id: z.uuid().optional(),
  format: z.enum(['json', 'csv']).optional().describe('csv: one row per deduction'),
});
export type TdsReportQuery = z.infer<typeof tdsReportQuery>;

const tdsRowSchema = z.object({
  invoice_id: z.uuid(),
  invoice_number: z.string().nullable(),
  invoice_date: z.string().nullable().describe('YYYY-MM-DD, the issue date in the entity’s zone'),
  currency: z.string(),
  invoice_total: z.int(),
  deducted_on: z.string().describe('YYYY-MM-DD: the payment’s day, or the day the certificate says the customer deducted'),
  amount_paid: z.int().describe('cash received with this deduction (0 for TDS certified after the payment)'),
  tds_amount: z.int(),
  status: z.enum(['certified', 'pending']).describe('certified: a certificate is recorded; pending: withheld with a payment, certificate not yet recorded'),
  section: z.string().nullable(),
  payment_code: z.string().nullable().describe('the Income-tax Act 2025 payment code (mapped for an old section; null when unknown)'),
  certificate_form: z.enum(['Form 16A', 'Form 131']),
  certificate_number: z.string().nullable(),
  payment_id: z.uuid().nullable(),
});

const totalsSchema = z.object({ amount_paid: z.int(), tds_deducted: z.int(), tds_certified: z.int(), tds_pending: z.int() });

export const tdsReportSchema = z.object({
  entity_id: z.uuid(),
  quarter: z.string(),
  from: z.string().describe('first day, YYYY-MM-DD'),
  to: z.string().describe('last day, YYYY-MM-DD'),
  customers: z.array(
    z.object({
      customer_id: z.uuid(),
      customer_name: z.string().nullable(),
      customer_gstin: z.string().nullable(),
      totals: totalsSchema,
      rows: z.array(tdsRowSchema),
    }),
  ),
  totals: totalsSchema,
});
export type TdsReport = z.infer<typeof tdsReportSchema>;
type TdsRow = z.infer<typeof tdsRowSchema>;
type Totals = z.infer<typeof totalsSchema>;

/** Form 16A under the 1961 Act, Form 131 from 1 April 2026 (as invoices' certificateFormOn; finance does not import invoices). */
const certificateFormOn = (day: string): 'Form 16A' | 'Form 131' => (day >= '2026-04-01' ? 'Form 131' : 'Form 16A');

const pad = (n: number) => String(n).padStart(2, '0');

/** `2026-27-Q1` → its first and last day (the two years must be consecutive). */
export function quarterDays(quarter: string): { from: string; to: string; start: [number, number]; endExclusive: [number, number] } {
  const [fy, q] = quarter.split('-Q') as [string, string];
  const startYear = Number(fy.slice(0, 4));
  if (Number(fy.slice(5, 7)) !== (startYear + 1) % 100) throw errors.invalidField('quarter', 'the financial year runs April to March: 2026-27');
  const n = Number(q);
  // Q1 April–June, Q2 July–September, Q3 October–December of the first year; Q4 January–March of the next.
  const month = n === 4 ? 1 : 4 + (n - 1) * 3;
  const year = n === 4 ? startYear + 1 : startYear;
  const lastDay = new Date(Date.UTC(year, month - 1 + 3, 0)).getUTCDate();
  return {
    from: `${year}-${pad(month)}-01`,
    to: `${year}-${pad(month + 2)}-${pad(lastDay)}`,
    start: [year, month],
    endExclusive: month + 3 > 12 ? [year + 1, month + 3 - 12] : [year, month + 3],
  };
}

const zero = (): Totals => ({ amount_paid: 0, tds_deducted: 0, tds_certified: 0, tds_pending: 0 });
function add(t: Totals, row: TdsRow): void {
  t.amount_paid += row.amount_paid;
  t.tds_deducted += row.tds_amount;
  if (row.status === 'certified') t.tds_certified += row.tds_amount;
  else t.tds_pending += row.tds_amount;
}

export async function tdsReport(ctx: ReadCtx, query: TdsReportQuery): Promise<TdsReport> {
  const entity = await findEntity(ctx.tx, ctx.tenantId, query.entity_id);
  if (!entity) throw errors.notFound('entity');
  const zone = entity.time_zone;
  const q = quarterDays(query.quarter);
  const startAt = startOfLocalDay(q.start[0], q.start[1], 1, zone);
  const endAt = startOfLocalDay(q.endExclusive[0], q.endExclusive[1], 1, zone);

  let withheld = ctx.tx
    .selectFrom('payments as p')
    .innerJoin('invoices as i', (j) => j.onRef('i.tenant_id', '=', 'p.tenant_id').onRef('i.id', '=', 'p.invoice_id'))
    .select([
      'p.id as payment_id',
      'p.amount',
      'p.tds_amount',
      'p.recorded_at',
      'i.id as invoice_id',
      'p.tds_certified_at',
      'p.tds_certificate_number',
      'p.tds_section',
      'p.tds_payment_code',
      'p.tds_certificate_form',
      'p.tds_deducted_on',
    ])
    .where('p.tenant_id', '=', ctx.tenantId)
    .where('i.entity_id', '=', entity.id)
    .where('p.tds_amount', '>', 0)
    // The quarter of the deduction: the certificate's day once recorded, else the payment's (decision 0770).
    .where((w) =>
      w.or([
        w.and([w('p.tds_deducted_on', 'is', null), w('p.recorded_at', '>=', startAt), w('p.recorded_at', '<', endAt)]),
        w.and([w('p.tds_deducted_on', '>=', q.from), w('p.tds_deducted_on', '<=', q.to)]),
      ]),
    );
  let certified = ctx.tx
    .selectFrom('invoice_tds_certificates as c')
    .innerJoin('invoices as i', (j) => j.onRef('i.tenant_id', '=', 'c.tenant_id').onRef('i.id', '=', 'c.invoice_id'))
    .select(['c.tds_amount', 'c.deducted_on', 'c.section', 'c.payment_code', 'c.certificate_form', 'c.certificate_number', 'i.id as invoice_id'])
    .where('c.tenant_id', '=', ctx.tenantId)
    .where('i.entity_id', '=', entity.id)
    .where('c.deducted_on', '>=', q.from)
    .where('c.deducted_on', '<=', q.to);
  if (query.customer_id) {
    withheld = withheld.where('i.customer_id', '=', query.customer_id);
    certified = certified.where('i.customer_id', '=', query.customer_id);
  }
  const [payments, certificates] = await Promise.all([withheld.execute(), certified.execute()]);
  const invoiceIds = [...new Set([...payments, ...certificates].map((r) => r.invoice_id))];
  const invoices = invoiceIds.length
    ? await ctx.tx
        .selectFrom('invoices')
        .select(['id', 'number', 'issued_at', 'currency', 'total', 'customer_id', 'customer_details'])
        .where('tenant_id', '=', ctx.tenantId)
        .where('id', 'in', invoiceIds)
        .execute()
    : [];
  const byId = new Map(invoices.map((i) => [i.id, i]));

  const rows: { customerId: string; row: TdsRow }[] = [];
  const base = (invoiceId: string) => {
    const inv = byId.get(invoiceId)!;
    return {
      customerId: inv.customer_id,
      fields: {
        invoice_id: inv.id,
        invoice_number: inv.number,
        invoice_date: inv.issued_at ? localDay(inv.issued_at, zone) : null,
        currency: inv.currency,
        invoice_total: Number(inv.total),
      },
    };
  };
  for (const p of payments) {
    const { customerId, fields } = base(p.invoice_id);
    // Withheld with the payment; certified once its certificate is recorded (decision 0770).
    const deductedOn = p.tds_deducted_on ?? localDay(p.recorded_at, zone);
    const certified = p.tds_certified_at !== null;
    rows.push({
      customerId,
      row: {
        ...fields,
        deducted_on: deductedOn,
        amount_paid: Number(p.amount),
        tds_amount: Number(p.tds_amount),
        status: certified ? 'certified' : 'pending',
        section: p.tds_section,
        payment_code: p.tds_payment_code,
        certificate_form: p.tds_certificate_form ?? certificateFormOn(deductedOn),
        certificate_number: p.tds_certificate_number,
        payment_id: p.payment_id,
      },
    });
  }
  for (const c of certificates) {
    const { customerId, fields } = base(c.invoice_id);
    rows.push({
      customerId,
      row: {
        ...fields,
        deducted_on: c.deducted_on,
        amount_paid: 0,
        tds_amount: Number(c.tds_amount),
        status: 'certified',
        section: c.section,
        payment_code: c.payment_code,
        certificate_form: c.certificate_form,
        certificate_number: c.certificate_number,
        payment_id: null,
      },
    });
  }
  rows.sort(
    (a, b) =>
      a.row.deducted_on.localeCompare(b.row.deducted_on) ||
      (a.row.invoice_number ?? '').localeCompare(b.row.invoice_number ?? '') ||
      a.row.status.localeCompare(b.row.status),
  );

  const customers = new Map<string, TdsReport['customers'][number]>();
  const totals = zero();
  for (const { customerId, row } of rows) {
    let c = customers.get(customerId);
    if (!c) {
      const snapshot = byId.get(row.invoice_id)!.customer_details;
      c = { customer_id: customerId, customer_name: snapshot?.name ?? null, customer_gstin: snapshot?.gstin ?? null, totals: zero(), rows: [] };
      customers.set(customerId, c);
    }
    c.rows.push(row);
    add(c.totals, row);
    add(totals, row);
  }
  const list = [...customers.values()].sort(
    (a, b) => (a.customer_name ?? '').localeCompare(b.customer_name ?? '') || a.customer_id.localeCompare(b.customer_id),
  );
  return { entity_id: entity.id, quarter: query.quarter, from: q.from, to: q.to, customers: list, totals };
}

export const TDS_REPORT_CSV_COLUMNS = [
  'customer_id',
  'customer_name',
  'customer_gstin',
  'invoice_number',
  'invoice_date',
  'currency',
  'invoice_total',
  'deducted_on',
  'amount_paid',
  'tds_amount',
  'status',
  'section',
  'payment_code',
  'certificate_form',
  'certificate_number',
];

/** One CSV row per deduction, customer first. */
export function tdsReportCsvRows(report: TdsReport): Record<string, unknown>[] {
  return report.customers.flatMap((c) =>
    c.rows.map((r) => ({ customer_id: c.customer_id, customer_name: c.customer_name, customer_gstin: c.customer_gstin, ...r })),
  );
}
