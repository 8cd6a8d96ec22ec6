import { sql, type Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import type { CreditNotesTable, CreditNoteStatus } from './credit-notes.tables.js';
import type { CreditNoteRow } from './credit-notes.repository.js';

/**
 *   (create) ──> pending_approval ──approve──> issued ──spend(balance→0)──> used
 *        │              │──reject──> rejected     │──void (unspent only)──> void
 *        │              └──void_pending (its invoice voided)──> void
 *        └──(no governance)──> issued             └──expire (at expires_at)──> expired
 */
export const creditNoteTransitions = {
  approve: { from: ['pending_approval'], to: 'issued' },
  reject: { from: ['pending_approval'], to: 'rejected' },
  void: { from: ['issued'], to: 'void' },
  /** Only with its invoice's void (a pending note is never voided on its own: reject it). */
  void_pending: { from: ['pending_approval'], to: 'void' },
  expire: { from: ['issued'], to: 'expired' },
} as const satisfies Record<string, { from: readonly CreditNoteStatus[]; to: CreditNoteStatus }>;

export type CreditNoteEvent = keyof typeof creditNoteTransitions;

async function refuse(tx: Tx, tenantId: string, id: string, what: string): Promise<never> {
  const current = await tx.selectFrom('credit_notes').select('status').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!current) throw errors.notFound('credit note');
  throw errors.conflict(`cannot ${what} a credit note whose status is ${current.status}`, 'invalid_credit_note_state');
}

/**
 * The guarded transition. `unspentOnly` adds `balance = amount` to the guard (void is allowed only
 * while nothing of the note has been applied).
 */
export async function transitionCreditNote(
  tx: Tx,
  tenantId: string,
  id: string,
  event: CreditNoteEvent,
  patch: Updateable<CreditNotesTable> = {},
  options: { unspentOnly?: boolean } = {},
): Promise<CreditNoteRow> {
  const t = creditNoteTransitions[event];
  let q = baseUpdate(tx, tenantId, id).set({ ...patch, status: t.to }).where('status', 'in', [...t.from]);
  if (options.unspentOnly) q = q.whereRef('balance', '=', 'amount');
  const row = await q.returningAll().executeTakeFirst();
  if (row) return row;
  if (options.unspentOnly) {
    const current = await tx.selectFrom('credit_notes').select(['status', 'balance', 'amount']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
    if (current?.status === 'issued' && current.balance !== current.amount) {
      throw errors.conflict('cannot void a credit note that has been partly applied', 'credit_note_applied');
    }
  }
  return refuse(tx, tenantId, id, event === 'void_pending' ? 'void' : event);
}

function baseUpdate(tx: Tx, tenantId: string, id: string) {
  return tx.updateTable('credit_notes').where('tenant_id', '=', tenantId).where('id', '=', id);
}

/**
 * Spends balance atomically: never below zero however many applications race, and `used`
 * exactly when it reaches zero. Zero rows → 404 / 409 (state) / 409 (more than the balance).
 */
export async function spendCreditBalance(tx: Tx, tenantId: string, id: string, amount: number, now: Date): Promise<CreditNoteRow> {
  const row = await baseUpdate(tx, tenantId, id)
    .set({
      balance: sql`balance - ${amount}`,
      status: sql`CASE WHEN balance = ${amount} THEN 'used' ELSE status END`,
      updated_at: now,
    })
    .where('status', '=', 'issued')
    .where('balance', '>=', amount)
    .returningAll()
    .executeTakeFirst();
  if (row) return row;
  const current = await tx.selectFrom('credit_notes').select(['status', 'balance']).where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  if (!current) throw errors.notFound('credit note');
  if (current.status !== 'issued') throw errors.conflict(`cannot apply a credit note whose status is ${current.status}`, 'invalid_credit_note_state');
  throw errors.conflict(`${amount} exceeds the credit note's balance of ${current.balance}`, 'amount_exceeds_balance');
}
