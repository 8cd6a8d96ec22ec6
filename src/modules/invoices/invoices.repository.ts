import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { paginate } from '../../platform/db/paginate.js';
import type { LockFlag, Tx, WriteTx } from '../../platform/db/schema.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { Page } from '../../platform/http/envelope.js';
import type { InvoiceLinesTable, InvoicesTable, InvoiceStatus, InvoiceTdsCertificatesTable } from './invoices.tables.js';
import './invoices.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type InvoiceRow = Selectable<InvoicesTable>;
export type InvoiceLineRow = Selectable<InvoiceLinesTable>;

export async function insertInvoice(tx: Tx, invoice: Insertable<InvoicesTable>, lines: Insertable<InvoiceLinesTable>[]): Promise<void> {
  await tx.insertInto('invoices').values(invoice).execute();
  await tx.insertInto('invoice_lines').values(lines).execute();
}

/** A draft line's tax, recomputed at finalization; nothing in the action reads it back. */
export async function updateInvoiceLineTax(tx: WriteTx, tenantId: string, lineId: string, patch: Updateable<InvoiceLinesTable>): Promise<void> {
  await deferWrite(tx, tx.updateTable('invoice_lines').set(patch).where('tenant_id', '=', tenantId).where('id', '=', lineId));
}

/** Adds discounts to a draft's lines and their sum to the draft's discount (discountDraftLines). */
export async function addDraftLineDiscounts(
  tx: Tx,
  tenantId: string,
  invoiceId: string,
  discounts: { lineId: string; amount: number }[],
  now: Date,
): Promise<void> {
  const items = JSON.stringify(discounts.map((d) => ({ id: d.lineId, amount: d.amount })));
  await sql`
    UPDATE invoice_lines l SET discount_amount = l.discount_amount + v.amount
    FROM jsonb_to_recordset(${items}::jsonb) AS v(id uuid, amount bigint)
    WHERE l.tenant_id = ${tenantId} AND l.invoice_id = ${invoiceId} AND l.id = v.id`.execute(tx);
  const total = discounts.reduce((sum, d) => sum + d.amount, 0);
  await sql`UPDATE invoices SET discount_amount = discount_amount + ${total}, updated_at = ${now}
    WHERE tenant_id = ${tenantId} AND id = ${invoiceId} AND status = 'draft'`.execute(tx);
}

export async function findInvoice<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<InvoiceRow | undefined> {
  let q = tx.selectFrom('invoices').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

/** Draft invoices of an entity created in `[from, to)` (a period being closed lists them). */
export async function draftInvoicesOfEntity(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<{ id: string }[]> {
  return tx
    .selectFrom('invoices')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .where('status', '=', 'draft')
    .where('created_at', '>=', from)
    .where('created_at', '<', to)
    .orderBy('created_at')
    .limit(100)
    .execute();
}

export async function linesOfInvoices(tx: Tx, tenantId: string, invoiceIds: string[]): Promise<InvoiceLineRow[]> {
  if (invoiceIds.length === 0) return [];
  return tx
    .selectFrom('invoice_lines')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .orderBy('invoice_id')
    .orderBy('position')
    .execute();
}

/**
 * The priced lines each subscription has billed within a window (decision 0540): lines of its
 * finalized invoices (open, paid, uncollectible: not drafts, not void) whose own period lies
 * inside [start, end) and that name a price — the plan's fee, items, usage — so one-off charges
 * (no period) and true-up lines (no price) are left out. One statement for the batch.
 */
export async function pricedLinesWithin(
  tx: Tx,
  tenantId: string,
  windows: { subscriptionId: string; start: Date; end: Date }[],
): Promise<{ subscription_id: string; invoice_id: string; id: string; price_id: string; amount: number }[]> {
  if (windows.length === 0) return [];
  const rows = await tx
    .selectFrom('invoice_lines as l')
    .innerJoin('invoices as i', (join) => join.onRef('i.tenant_id', '=', 'l.tenant_id').onRef('i.id', '=', 'l.invoice_id'))
    // A line names its subscription itself on a parent's consolidated invoice (decision 0550).
    .select((eb) => [eb.fn.coalesce('l.subscription_id', 'i.subscription_id').as('subscription_id'), 'l.invoice_id', 'l.id', 'l.price_id', 'l.amount'])
    .where('l.tenant_id', '=', tenantId)
    .where('i.status', 'in', ['open', 'paid', 'uncollectible'])
    .where('l.price_id', 'is not', null)
    .where((eb) =>
      eb.or(
        windows.map((w) =>
          eb.and([
            eb(eb.fn.coalesce('l.subscription_id', 'i.subscription_id'), '=', w.subscriptionId),
            eb('l.period_start', '>=', w.start),
            eb('l.period_end', '<=', w.end),
          ]),
        ),
      ),
    )
    .execute();
  return rows.map((r) => ({ subscription_id: r.subscription_id!, invoice_id: r.invoice_id, id: r.id, price_id: r.price_id!, amount: r.amount }));
}

/** `statuses`: any of these (the customer portal lists every invoice but drafts). */
export type InvoiceFilter = {
  q?: string;
  status?: InvoiceStatus;
  customer_id?: string;
  entity_id?: string;
  subscription_id?: string;
  statuses?: InvoiceStatus[];
};

export async function listInvoiceRows(tx: Tx, tenantId: string, filter: InvoiceFilter, page: Page): Promise<{ rows: InvoiceRow[]; total: number }> {
  let q = tx.selectFrom('invoices').where('tenant_id', '=', tenantId);
  if (filter.status) q = q.where('status', '=', filter.status);
  if (filter.statuses) q = q.where('status', 'in', filter.statuses);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  if (filter.entity_id) q = q.where('entity_id', '=', filter.entity_id);
  if (filter.subscription_id) q = q.where('subscription_id', '=', filter.subscription_id);
  if (filter.q) {
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    q = q.where('number', 'ilike', pattern);
  }
  return paginate<InvoiceRow>(tx, q, { tenantId, table: 'invoices', page });
}

/**
 * For the subscriptions billing run's delinquency check: per subscription of the tenant, whether it
 * has an invoice open past its due date (`overdue`) or marked uncollectible. Subscriptions with
 * neither are absent.
 */
export async function unsettledSubscriptionInvoices(
  tx: Tx,
  tenantId: string,
  now: Date,
): Promise<{ subscription_id: string; overdue: boolean; uncollectible: boolean }[]> {
  const { rows } = await sql<{ subscription_id: string; overdue: boolean; uncollectible: boolean }>`
    SELECT subscription_id, overdue, uncollectible FROM (${unsettledBySubscription(now, tenantId)}) s`.execute(tx);
  return rows;
}

/**
 * Per subscription, whether it has an invoice open past its due date (`overdue`) or uncollectible,
 * among the invoices in the test clock scope: a subscription's own invoices, and the consolidated
 * invoices of a parent (decision 0550), whose lines name the children's subscriptions they bill.
 * Columns tenant_id, subscription_id, overdue, uncollectible; only the tenant `tenantId` when given.
 */
function unsettledBySubscription(now: Date, tenantId?: string): RawBuilder<unknown> {
  const unsettled = sql<boolean>`((i.status = 'open' AND i.due_date <= ${now}) OR i.status = 'uncollectible')`;
  const tenant = tenantId === undefined ? sql<boolean>`TRUE` : sql<boolean>`i.tenant_id = ${tenantId}`;
  const scope = testClockScope('i.tenant_id', 'i.customer_id');
  return sql`
    SELECT s.tenant_id, s.subscription_id, bool_or(s.status = 'open') AS overdue, bool_or(s.status = 'uncollectible') AS uncollectible
    FROM (
      SELECT i.tenant_id, i.subscription_id, i.status FROM invoices i
      WHERE ${tenant} AND i.subscription_id IS NOT NULL AND ${unsettled} AND ${scope}
      UNION ALL
      SELECT DISTINCT i.tenant_id, l.subscription_id, i.status FROM invoices i
      JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.subscription_id IS NOT NULL
      WHERE ${tenant} AND i.subscription_id IS NULL AND ${unsettled} AND ${scope}
    ) s
    GROUP BY s.tenant_id, s.subscription_id`;
}

/**
 * Whether the billing run's delinquency pass (settleDelinquency) would move a subscription at
 * `now`, in the test clock scope: one with an uncollectible invoice in a status `unpaidFrom`, one
 * with an overdue invoice and none uncollectible in a status `pastDueFrom`, or a delinquent one
 * (past_due or unpaid, invoiced by Kosh) with neither. The statuses come from the subscription
 * state table. An advance skips the pass while none would move.
 */
export function delinquencyMovesInClockScope(
  now: Date,
  from: { unpaid: readonly string[]; pastDue: readonly string[]; recover: readonly string[] },
): RawBuilder<boolean> {
  return sql<boolean>`(WITH u AS (${unsettledBySubscription(now)})
    SELECT EXISTS (
      SELECT 1 FROM u JOIN subscriptions s ON s.tenant_id = u.tenant_id AND s.id = u.subscription_id
      WHERE (u.uncollectible AND s.status IN (${sql.join(from.unpaid)}))
         OR (u.overdue AND NOT u.uncollectible AND s.status IN (${sql.join(from.pastDue)})))
    OR EXISTS (
      SELECT 1 FROM subscriptions s
      WHERE s.status IN (${sql.join(from.recover)}) AND s.latest_invoice_id IS NOT NULL
        AND ${testClockScope('s.tenant_id', 's.customer_id')}
        AND NOT EXISTS (SELECT 1 FROM u WHERE u.tenant_id = s.tenant_id AND u.subscription_id = s.id)))`;
}

/** The tenants that have a subscription invoice overdue or uncollectible (the billing run's discovery). */
export async function tenantsWithOverdueSubscriptionInvoices(tx: Tx, mode: Mode | null, now: Date): Promise<string[]> {
  const rows = await tx
    .selectFrom('invoices')
    .select('tenant_id')
    .distinct()
    .where(
      sql<boolean>`(invoices.subscription_id IS NOT NULL OR EXISTS (SELECT 1 FROM invoice_lines l WHERE l.tenant_id = invoices.tenant_id AND l.invoice_id = invoices.id AND l.subscription_id IS NOT NULL))`,
    )
    .where((eb) => eb.or([eb.and([eb('status', '=', 'open'), eb('due_date', '<=', now)]), eb('status', '=', 'uncollectible')]))
    .where(inMode(mode))
    .where(testClockScope('invoices.tenant_id', 'invoices.customer_id'))
    .execute();
  return rows.map((r) => r.tenant_id);
}

/** Many invoices and their lines in two statements (issueInvoices). */
export async function insertInvoices(tx: WriteTx, invoices: Insertable<InvoicesTable>[], lines: Insertable<InvoiceLinesTable>[]): Promise<void> {
  if (invoices.length === 0) return;
  // Deferred (platform/db/pipeline): sent with the transaction's next statement.
  await deferWrite(tx, tx.insertInto('invoices').values(invoices));
  // A consolidated invoice (decision 0550) may carry thousands of lines: at most LINES_PER_INSERT a
  // statement keeps each under PostgreSQL's 65 535 bind parameters (about 30 a line).
  for (let i = 0; i < lines.length; i += LINES_PER_INSERT) await deferWrite(tx, tx.insertInto('invoice_lines').values(lines.slice(i, i + LINES_PER_INSERT)));
}

const LINES_PER_INSERT = 1_000;

export async function insertTdsCertificate(tx: WriteTx, row: Insertable<InvoiceTdsCertificatesTable>): Promise<void> {
  await deferWrite(tx, tx.insertInto('invoice_tds_certificates').values(row));
}

/** Many invoices by id; `forUpdate` locks them in id order (two batches never wait on each other in a cycle). */
export async function findInvoices<T extends Tx>(tx: T, tenantId: string, ids: string[], forUpdate?: LockFlag<T>): Promise<InvoiceRow[]> {
  if (ids.length === 0) return [];
  let q = tx.selectFrom('invoices').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).orderBy('id');
  if (forUpdate) q = q.forUpdate();
  return q.execute();
}

/** Sets (or clears, with a null error) last_payment_error of many invoices in one statement. */
export async function updateLastPaymentErrors(
  tx: Tx,
  tenantId: string,
  items: { id: string; error: { code: string; message: string } | null }[],
  now: Date,
): Promise<InvoiceRow[]> {
  if (items.length === 0) return [];
  const { rows } = await sql<InvoiceRow>`
    UPDATE invoices i SET last_payment_error = v.error, updated_at = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(items)}::jsonb) AS v(id uuid, error jsonb)
    WHERE i.tenant_id = ${tenantId} AND i.id = v.id
    RETURNING i.*`.execute(tx);
  return rows;
}

/**
 * What each customer was invoiced (totals of finalized invoices, not void, top-ups of prepaid
 * credit aside) in a currency since a moment: the spend_threshold alerts read it.
 */
export async function invoicedSince(tx: Tx, tenantId: string, items: { customerId: string; currency: string; since: Date }[]): Promise<number[]> {
  if (items.length === 0) return [];
  const { rows } = await sql<{ i: number; spent: string | null }>`
    SELECT v.i, (SELECT sum(total) FROM invoices
                  WHERE tenant_id = ${tenantId} AND customer_id = v.c AND currency = v.cur AND issued_at >= v.s
                    AND status IN ('open', 'paid', 'uncollectible') AND billing_reason <> 'credit_top_up') AS spent
    FROM jsonb_to_recordset(${JSON.stringify(items.map((x, i) => ({ i, c: x.customerId, cur: x.currency, s: x.since.toISOString() })))}::jsonb)
      AS v(i int, c uuid, cur text, s timestamptz)`.execute(tx);
  const out = items.map(() => 0);
  for (const r of rows) out[r.i] = Number(r.spent ?? 0);
  return out;
}

/** The currencies a customer is invoiced in: those of its invoices that are not void (credit top-ups left out). */
export async function invoiceCurrenciesOfCustomer(tx: Tx, tenantId: string, customerId: string): Promise<string[]> {
  const rows = await tx
    .selectFrom('invoices')
    .select('currency')
    .distinct()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('status', '<>', 'void')
    .where('billing_reason', '<>', 'credit_top_up')
    .execute();
  return rows.map((r) => r.currency);
}

/**
 * Just after the earliest due date after `after` of an open invoice in the test clock scope (an
 * advance steps there: the delinquency pass takes `due_date <= now`, the overdue scan `due_date < now`).
 */
export async function nextInvoiceDueInClockScope(tx: Tx, after: Date): Promise<Date | null> {
  const row = await tx
    .selectFrom('invoices')
    .select((eb) => eb.fn.min('due_date').as('at'))
    .where('status', '=', 'open')
    .where('due_date', '>=', after)
    .where(testClockScope('invoices.tenant_id', 'invoices.customer_id'))
    .executeTakeFirst();
  return row?.at ? new Date(new Date(row.at).getTime() + 1) : null;
}
