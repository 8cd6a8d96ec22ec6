import type { Kysely } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { sameSecret } from '../../platform/auth/secrets-compare.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { getEntity } from '../../modules/entities/index.js';
import { getInvoiceRow, setLastPaymentError } from '../../modules/invoices/index.js';
import { findAttempt, skipNoticeAttempt, type AttemptRow } from '../../modules/collections/index.js';
import { localDebitTime, skipTokenHash } from './pre-debit-notice.js';

/**
 * The customer's "skip this debit" link of a pre-debit notice (RBI e-mandate framework: the
 * customer may opt out of a particular debit; docs/decisions/0520). The link names the attempt and
 * carries a token whose SHA-256 the attempt keeps. Skipping cancels that one announced debit
 * (never sent to the gateway); the mandate stays, and the invoice stays open for the customer's
 * own payment — the charge job does not debit the mandate for it again.
 */

export const SKIPPED_CODE = 'mandate_debit_skipped';

export type SkippableDebit = {
  attempt: AttemptRow;
  state: 'ready' | 'closed';
  merchant: string;
  invoiceNumber: string;
  notBefore: string;
};

/** The debit a link names, when its token matches; null for an unknown attempt or a wrong token. */
export async function readSkippableDebit(read: ReadCtx, attemptId: string, token: unknown): Promise<SkippableDebit | null> {
  if (typeof token !== 'string' || token.length === 0) return null;
  const attempt = await findAttempt(read.tx, read.tenantId, attemptId);
  if (!attempt?.skip_token_hash || !sameSecret(attempt.skip_token_hash, skipTokenHash(token))) return null;
  const invoice = await getInvoiceRow(read, attempt.invoice_id);
  const entity = await getEntity(read, invoice.entity_id);
  return {
    attempt,
    state: attempt.status === 'pending' && attempt.pending_reason === 'notice' ? 'ready' : 'closed',
    merchant: entity.legal_name,
    invoiceNumber: invoice.number ?? '',
    notBefore: attempt.charge_after ? localDebitTime(attempt.charge_after, entity.time_zone).not_before : '',
  };
}

/**
 * Skips the debit, in the caller's transaction: the guarded `notice` → `canceled` move (a sweep
 * claiming it for the gateway at the same moment wins or loses the row, never both) and the
 * invoice's last_payment_error saying why it was not collected. Undefined: already sent, made,
 * skipped or canceled.
 */
export async function skipMandateDebit(ctx: Ctx, attemptId: string, token: string): Promise<AttemptRow | undefined> {
  const message = 'the customer skipped this debit from the pre-debit notice; the invoice stays open for their own payment';
  const skipped = await skipNoticeAttempt(ctx.tx, ctx.tenantId, attemptId, skipTokenHash(token), { code: SKIPPED_CODE, message }, ctx.now);
  if (skipped) await setLastPaymentError(ctx, skipped.invoice_id, { code: SKIPPED_CODE, message });
  return skipped;
}

/** The link's POST: skipMandateDebit in its own transaction. */
export async function submitSkip(db: Kysely<DB>, tenantId: string, attemptId: string, token: string, now: Date): Promise<AttemptRow | undefined> {
  return db.transaction().execute((tx) => skipMandateDebit({ tx, tenantId, now }, attemptId, token));
}
