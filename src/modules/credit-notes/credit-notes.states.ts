import { sql, type Updateable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { transition } from '../../platform/db/transition.js';
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
  return transition<CreditNoteRow>(tx, {
    table: 'credit_notes',
    noun: 'credit_note',
    tenantId,
    id,
    event,
    transition: creditNoteTransitions[event],
    patch,
    guard: (q) => (options.unspentOnly ? q.whereRef('balance', '=', 'amount') : q),
    refuse: (current) =>
      options.unspentOnly && current.status === 'issued' && current.balance !== current.amount
        ? errors.conflict('cannot void a credit note that has been partly applied', 'credit_note_applied')
        : errors.conflict(`cannot ${event === 'void_pending' ? 'void' : event} a credit note whose status is ${current.status}`, 'invalid_credit_note_state'),
  });
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
