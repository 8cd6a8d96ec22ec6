import { sql } from 'kysely';
import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { CreditNoteRow } from './credit-notes.repository.js';
import { spendCreditBalance } from './credit-notes.states.js';

/**
 * Paying a note's balance out as money (DESIGN §20, docs/decisions/0250). The note reversed its
 * invoice's tax when it was issued; paying its balance out reverses nothing more, it only turns the
 * customer's credit into cash. The refund flow books it (Dr customer credit, tagged with the note).
 */

/**
 * The credit a customer still holds from an invoice: its issued notes with balance left and not
 * expired, oldest first, locked (a payment refund pays these out before it credits anything anew).
 */
export async function unspentCreditOfInvoice(ctx: Ctx, invoiceId: string): Promise<CreditNoteRow[]> {
  return ctx.tx
    .selectFrom('credit_notes')
    .selectAll()
    .where('tenant_id', '=', ctx.tenantId)
    .where('invoice_id', '=', invoiceId)
    .where('status', '=', 'issued')
    .where('balance', '>', 0)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', ctx.now)]))
    .orderBy('created_at')
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** Takes `amount` off the note's balance for a refund: 409 when the note is not issued, has expired or holds less. */
export async function payOutCreditBalance(ctx: Ctx, id: string, amount: number): Promise<CreditNoteRow> {
  const note = await ctx.tx.selectFrom('credit_notes').selectAll().where('tenant_id', '=', ctx.tenantId).where('id', '=', id).forUpdate().executeTakeFirst();
  if (!note) throw errors.notFound('credit note');
  if (note.expires_at && note.expires_at <= ctx.now) throw errors.conflict('the credit note has expired: there is no balance to refund', 'credit_note_expired');
  if (note.status === 'issued' && amount > note.balance) {
    throw errors.conflict(`${amount} exceeds the credit note's unspent balance of ${note.balance}`, 'amount_exceeds_balance');
  }
  if (note.status !== 'issued') {
    throw errors.conflict(`cannot refund a credit note whose status is ${note.status}: it has no unspent balance`, 'invalid_credit_note_state');
  }
  return spendCreditBalance(ctx.tx, ctx.tenantId, id, amount, ctx.now);
}

/** A refund of the note's balance failed or was refused: the amount is the customer's credit again. */
export async function restoreCreditBalance(ctx: Ctx, id: string, amount: number): Promise<void> {
  await ctx.tx
    .updateTable('credit_notes')
    .set({
      balance: sql`balance + ${amount}`,
      status: sql`CASE WHEN status = 'used' THEN 'issued' ELSE status END`,
      updated_at: ctx.now,
    })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', id)
    .execute();
}
