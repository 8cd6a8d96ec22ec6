import { sql, type Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { transition } from '../../platform/db/transition.js';
import type { InvoicesTable, InvoiceStatus } from './invoices.tables.js';
import type { InvoiceRow } from './invoices.repository.js';

/**
 * Every invoice status change, in one table (`from × event → to`). `settle` is the payment/credit
 * event; it moves to `paid` only when the balance reaches zero (see settleInvoiceBalance).
 *
 *   draft ──finalize──> open ──settle(full)──> paid
 *     │                  │ └──mark_uncollectible──> uncollectible ──settle(full)──> paid
 *     └──void──> void <──┴──────────void────────────────┘
 */
export const invoiceTransitions = {
  finalize: { from: ['draft'], to: 'open' },
  void: { from: ['draft', 'open', 'uncollectible'], to: 'void' },
  mark_uncollectible: { from: ['open'], to: 'uncollectible' },
  settle: { from: ['open', 'uncollectible'], to: 'paid' },
} as const satisfies Record<string, { from: readonly InvoiceStatus[]; to: InvoiceStatus }>;

export type InvoiceEvent = keyof typeof invoiceTransitions;

const VERB: Record<InvoiceEvent, string> = {
  finalize: 'finalize',
  void: 'void',
  mark_uncollectible: 'mark uncollectible',
  settle: 'pay or credit',
};

/**
 * The guarded transition: `UPDATE … WHERE status IN (from) RETURNING *`. Zero rows means the
 * invoice is missing (404) or in another state (409) — so "happens exactly once" is a database fact.
 */
export async function transitionInvoice(
  tx: Tx,
  tenantId: string,
  id: string,
  event: Exclude<InvoiceEvent, 'settle'>,
  patch: Updateable<InvoicesTable> = {},
): Promise<InvoiceRow> {
  return transition<InvoiceRow>(tx, {
    table: 'invoices',
    noun: 'invoice',
    tenantId,
    id,
    event,
    transition: invoiceTransitions[event],
    patch,
    refuse: (current) => errors.conflict(`cannot ${VERB[event]} an invoice whose status is ${current.status}`, 'invalid_invoice_state'),
  });
}

export type Settlement = { paid?: number; tds?: number; credited?: number };

/**
 * Applies money to invoices' balances in one guarded UPDATE, whatever the number of invoices: each
 * settlement is applied only while its invoice is open or uncollectible and owes at least that
 * much, so a balance never goes below zero however many payments race, and an invoice becomes
 * `paid` exactly when it reaches zero. `clearPaymentError`: a gateway payment also clears the
 * invoice's `last_payment_error`. Answers the rows settled; an item its invoice refused is absent.
 */
async function settleBalances(
  tx: Tx,
  tenantId: string,
  items: ({ id: string } & Settlement)[],
  now: Date,
  options: { clearPaymentError: boolean },
): Promise<InvoiceRow[]> {
  if (items.length === 0) return [];
  const values = items.map((i) => ({ id: i.id, paid: i.paid ?? 0, tds: i.tds ?? 0, credited: i.credited ?? 0 }));
  const { rows } = await sql<InvoiceRow>`
    UPDATE invoices i SET
      amount_paid = i.amount_paid + v.paid + v.tds,
      amount_tds = i.amount_tds + v.tds,
      amount_credited = i.amount_credited + v.credited,
      amount_due = i.amount_due - (v.paid + v.tds + v.credited),
      status = CASE WHEN i.amount_due = v.paid + v.tds + v.credited THEN 'paid' ELSE i.status END,
      paid_at = CASE WHEN i.amount_due = v.paid + v.tds + v.credited THEN ${now}::timestamptz ELSE i.paid_at END,
      last_payment_error = CASE WHEN ${options.clearPaymentError}::boolean THEN NULL ELSE i.last_payment_error END,
      updated_at = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(values)}::jsonb) AS v(id uuid, paid bigint, tds bigint, credited bigint)
    WHERE i.tenant_id = ${tenantId} AND i.id = v.id AND i.status IN (${sql.join([...invoiceTransitions.settle.from])})
      AND i.amount_due >= v.paid + v.tds + v.credited
    RETURNING i.*`.execute(tx);
  return rows;
}

/**
 * One settlement (a payment recorded offline, TDS, a credit note applied; `{}` closes an invoice
 * with nothing due): settleBalances with one item. Zero rows → 404, 409 (state) or 409 (the amount
 * exceeds what is still due).
 */
export async function settleInvoiceBalance(tx: Tx, tenantId: string, id: string, s: Settlement, now: Date): Promise<InvoiceRow> {
  const [row] = await settleBalances(tx, tenantId, [{ id, ...s }], now, { clearPaymentError: false });
  if (row) return row;
  const applied = (s.paid ?? 0) + (s.tds ?? 0) + (s.credited ?? 0);
  const current = await tx.selectFrom('invoices').select(['status', 'amount_due']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!current) throw errors.notFound('invoice');
  if (!(invoiceTransitions.settle.from as readonly string[]).includes(current.status)) {
    throw errors.conflict(`cannot pay or credit an invoice whose status is ${current.status}`, 'invalid_invoice_state');
  }
  throw errors.conflict(`${applied} exceeds the invoice's amount due of ${current.amount_due}`, 'amount_exceeds_due');
}

/**
 * Many gateway payments at once (the automatic-charging job records a batch): settleBalances,
 * clearing each paid invoice's `last_payment_error` (it has just been paid). The caller holds the
 * invoices' locks, so every row is expected back — a missing one is an error.
 */
export async function settleInvoicePayments(tx: Tx, tenantId: string, items: { id: string; paid: number }[], now: Date): Promise<InvoiceRow[]> {
  const rows = await settleBalances(tx, tenantId, items, now, { clearPaymentError: true });
  if (rows.length !== items.length) {
    const settled = new Set(rows.map((r) => r.id));
    const missed = items.find((i) => !settled.has(i.id))!;
    throw errors.conflict(`invoice ${missed.id} could not take a payment of ${missed.paid}`, 'amount_exceeds_due');
  }
  return rows;
}
