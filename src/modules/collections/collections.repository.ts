import { sql, type Insertable, type RawBuilder, type Selectable, type Updateable } from 'kysely';
import { testClockScope } from '../../platform/test-clock-scope.js';
import { paginate } from '../../platform/db/paginate.js';
import type { LockFlag, Tx, WriteTx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type {
  CheckoutSessionsTable,
  GatewayConnectionsTable,
  GatewayEventReview,
  AttemptStatus,
  PaymentAttemptsTable,
  PaymentMethodsTable,
  PaymentSetupSessionsTable,
  RefundCreditNotesTable,
  RefundsTable,
  RefundStatus,
} from './collections.tables.js';
import './collections.tables.js';
import { statusesBefore } from '../../platform/db/transition.js';
import { attemptTransitions, checkoutSessionTransitions, refundTransitions } from './collections.states.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type ConnectionRow = Selectable<GatewayConnectionsTable>;
export type PaymentMethodRow = Selectable<PaymentMethodsTable>;
export type AttemptRow = Selectable<PaymentAttemptsTable>;
export type CheckoutSessionRow = Selectable<CheckoutSessionsTable>;
export type SetupSessionRow = Selectable<PaymentSetupSessionsTable>;
export type RefundRow = Selectable<RefundsTable>;
export type RefundSourceRow = Selectable<RefundCreditNotesTable>;

// Gateway connections

export async function insertConnection(tx: Tx, row: Insertable<GatewayConnectionsTable>): Promise<void> {
  await tx.insertInto('gateway_connections').values(row).execute();
}

export async function listConnectionRows(tx: Tx, tenantId: string): Promise<ConnectionRow[]> {
  return tx.selectFrom('gateway_connections').selectAll().where('tenant_id', '=', tenantId).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

export async function findConnection(tx: Tx, tenantId: string, id: string): Promise<ConnectionRow | undefined> {
  return tx.selectFrom('gateway_connections').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function deleteConnectionRow(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const r = await tx.deleteFrom('gateway_connections').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

/** The newest connection that lists the currency. */
export async function connectionForCurrency(tx: Tx, tenantId: string, currency: string): Promise<ConnectionRow | undefined> {
  return tx
    .selectFrom('gateway_connections')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql<boolean>`currencies @> ${JSON.stringify([currency])}::jsonb`)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/** The newest connection to a provider. */
export async function connectionForProvider(tx: Tx, tenantId: string, provider: string): Promise<ConnectionRow | undefined> {
  return tx
    .selectFrom('gateway_connections')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('provider', '=', provider)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

// Payment methods

export async function insertPaymentMethod(tx: Tx, row: Insertable<PaymentMethodsTable>): Promise<void> {
  await tx.insertInto('payment_methods').values(row).execute();
}

export async function activePaymentMethods(tx: Tx, tenantId: string, customerId: string): Promise<PaymentMethodRow[]> {
  return tx
    .selectFrom('payment_methods')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('status', '=', 'active')
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

export async function findPaymentMethod(tx: Tx, tenantId: string, id: string): Promise<PaymentMethodRow | undefined> {
  return tx.selectFrom('payment_methods').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findPaymentMethodByReference(tx: Tx, tenantId: string, gateway: string, reference: string): Promise<PaymentMethodRow[]> {
  return tx
    .selectFrom('payment_methods')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('gateway', '=', gateway)
    .where('reference', '=', reference)
    .where('status', '=', 'active')
    .execute();
}

export async function defaultPaymentMethod(tx: Tx, tenantId: string, customerId: string): Promise<PaymentMethodRow | undefined> {
  return tx
    .selectFrom('payment_methods')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('status', '=', 'active')
    .where('is_default', '=', true)
    .executeTakeFirst();
}

export async function clearDefault(tx: Tx, tenantId: string, customerId: string, now: Date): Promise<void> {
  await tx
    .updateTable('payment_methods')
    .set({ is_default: false, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('customer_id', '=', customerId)
    .where('is_default', '=', true)
    .execute();
}

export async function updatePaymentMethod(tx: Tx, tenantId: string, id: string, patch: Updateable<PaymentMethodsTable>): Promise<PaymentMethodRow | undefined> {
  return tx.updateTable('payment_methods').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Locks the customer's payment methods so two changes of default queue up. */
export async function lockCustomerPaymentMethods(tx: Tx, tenantId: string, customerId: string): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`payment_methods:${tenantId}:${customerId}`}, 0))`.execute(tx);
}

// Payment attempts

export async function insertAttempt(tx: Tx, row: Insertable<PaymentAttemptsTable>): Promise<void> {
  await tx.insertInto('payment_attempts').values(row).execute();
}

export async function findAttempt<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<AttemptRow | undefined> {
  let q = tx.selectFrom('payment_attempts').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (forUpdate) q = q.forUpdate();
  return q.executeTakeFirst();
}

export async function pendingAttemptOf(tx: Tx, tenantId: string, invoiceId: string): Promise<AttemptRow | undefined> {
  return tx
    .selectFrom('payment_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', '=', invoiceId)
    .where('status', '=', 'pending')
    .executeTakeFirst();
}

export async function attemptsOfInvoice(tx: Tx, tenantId: string, invoiceId: string): Promise<AttemptRow[]> {
  return tx
    .selectFrom('payment_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', '=', invoiceId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function attemptByGatewayPaymentId(tx: Tx, tenantId: string, gatewayPaymentId: string): Promise<AttemptRow | undefined> {
  return tx
    .selectFrom('payment_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('gateway_payment_id', '=', gatewayPaymentId)
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}

/** The guarded transition out of `pending`: zero rows means someone else already settled it. */
export async function finishAttempt(tx: Tx, tenantId: string, id: string, patch: Updateable<PaymentAttemptsTable>): Promise<AttemptRow | undefined> {
  return tx
    .updateTable('payment_attempts')
    .set(patch)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', statusesBefore(attemptTransitions, (patch.status as AttemptStatus | undefined) ?? 'pending'))
    .returningAll()
    .executeTakeFirst();
}

/**
 * A mandate debit still waiting out its pre-debit notice leaves the wait for the gateway: the
 * guarded `notice` → `charging` transition, committed before the call. Undefined: it was canceled
 * (or claimed by someone else) meanwhile, and must not be sent.
 */
export async function claimNoticeAttempt(tx: Tx, tenantId: string, id: string, now: Date): Promise<AttemptRow | undefined> {
  return tx
    .updateTable('payment_attempts')
    .set({ pending_reason: 'charging', updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', attemptTransitions.record.from)
    .where('pending_reason', '=', 'notice')
    .returningAll()
    .executeTakeFirst();
}

/**
 * Cancels the invoice's pending attempt if it has not been sent to the gateway (still `notice`):
 * the guarded transition to `canceled`, with why. Undefined: none, or it is already in flight.
 */
export async function cancelNoticeAttempt(
  tx: Tx,
  tenantId: string,
  invoiceId: string,
  reason: { code: string; message: string },
  now: Date,
): Promise<AttemptRow | undefined> {
  return cancelAttemptInNotice(tx, tenantId, { invoice_id: invoiceId }, reason, now);
}

/** The guarded `notice` → `canceled` transition of the one attempt `which` names, with why. */
function cancelAttemptInNotice(
  tx: Tx,
  tenantId: string,
  which: { invoice_id: string } | { id: string; skip_token_hash: string },
  reason: { code: string; message: string },
  now: Date,
): Promise<AttemptRow | undefined> {
  let query = tx
    .updateTable('payment_attempts')
    .set({ status: 'canceled', pending_reason: null, failure_code: reason.code, failure_message: reason.message, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('status', 'in', attemptTransitions.cancel.from)
    .where('pending_reason', '=', 'notice');
  if ('invoice_id' in which) query = query.where('invoice_id', '=', which.invoice_id);
  else query = query.where('id', '=', which.id).where('skip_token_hash', '=', which.skip_token_hash);
  return query.returningAll().executeTakeFirst();
}

/** Whether an attempt in the test clock scope is pending: a test clock's advance skips the resolver's sweep while none is. */
export function pendingAttemptsInClockScope(): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM payment_attempts WHERE status = 'pending'
    AND ${testClockScope('payment_attempts.tenant_id', 'payment_attempts.customer_id')})`;
}

/** Pending attempts of every tenant whose time has come (the resolver's sweep). */
export async function duePendingAttempts(tx: Tx, mode: Mode | null, before: Date, limit: number): Promise<{ tenant_id: string; id: string }[]> {
  return tx
    .selectFrom('payment_attempts')
    .select(['tenant_id', 'id'])
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('charge_after', 'is', null), eb('charge_after', '<=', before)]))
    .where('updated_at', '<=', before)
    .where(inMode(mode))
    .where(testClockScope('payment_attempts.tenant_id', 'payment_attempts.customer_id'))
    .limit(limit)
    .execute();
}

// Checkout sessions

/** Sessions in one statement (one for a pay request; the pay links of a batch of dunning e-mails). */
export async function insertCheckoutSessions(tx: Tx, rows: Insertable<CheckoutSessionsTable>[]): Promise<void> {
  if (rows.length > 0) await tx.insertInto('checkout_sessions').values(rows).execute();
}

export async function findCheckoutSession(tx: Tx, tenantId: string, id: string): Promise<CheckoutSessionRow | undefined> {
  return tx.selectFrom('checkout_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

/** The session row locked for this transaction: two deliveries announcing its payment are applied one after the other. */
export async function lockCheckoutSession(tx: WriteTx, tenantId: string, id: string): Promise<CheckoutSessionRow | undefined> {
  return tx.selectFrom('checkout_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function completeCheckoutSession(tx: Tx, tenantId: string, id: string, now: Date): Promise<void> {
  await tx
    .updateTable('checkout_sessions')
    .set({ status: checkoutSessionTransitions.complete.to, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', checkoutSessionTransitions.complete.from)
    .execute();
}

// Payment setup sessions (docs/decisions/0730)

export async function insertSetupSession(tx: Tx, row: Insertable<PaymentSetupSessionsTable>): Promise<void> {
  await tx.insertInto('payment_setup_sessions').values(row).execute();
}

export async function findSetupSession<T extends Tx>(tx: T, tenantId: string, id: string, forUpdate?: LockFlag<T>): Promise<SetupSessionRow | undefined> {
  const query = tx.selectFrom('payment_setup_sessions').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  return (forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** open → complete, naming the payment method the completion saved; false when it was complete already. */
export async function completeSetupSession(tx: WriteTx, tenantId: string, id: string, paymentMethodId: string, now: Date): Promise<boolean> {
  const done = await tx
    .updateTable('payment_setup_sessions')
    .set({ status: 'complete', payment_method_id: paymentMethodId, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'open')
    .executeTakeFirst();
  return Number(done.numUpdatedRows) === 1;
}

// Inbound gateway events

/** Records an event id; false when it was seen before (the delivery is a duplicate). */
export async function recordGatewayEvent(
  tx: Tx,
  row: { tenant_id: string; id: string; connection_id: string; provider: string; event_id: string; type: string; received_at: Date },
): Promise<boolean> {
  const inserted = await tx
    .insertInto('gateway_events')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'connection_id', 'event_id']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Keeps a received event for review instead of applying it (docs/decisions/0242): what was expected, what arrived. */
export async function holdGatewayEventForReview(tx: Tx, tenantId: string, id: string, review: GatewayEventReview): Promise<void> {
  await tx
    .updateTable('gateway_events')
    .set({ review: JSON.stringify(review) })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}

// Refunds

export async function insertRefund(tx: Tx, row: Insertable<RefundsTable>): Promise<void> {
  await tx.insertInto('refunds').values(row).execute();
}

export async function findRefund(tx: Tx, tenantId: string, id: string): Promise<RefundRow | undefined> {
  return tx.selectFrom('refunds').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function refundByGatewayId(tx: Tx, tenantId: string, gatewayRefundId: string): Promise<RefundRow | undefined> {
  return tx.selectFrom('refunds').selectAll().where('tenant_id', '=', tenantId).where('gateway_refund_id', '=', gatewayRefundId).executeTakeFirst();
}

export async function insertRefundSources(tx: Tx, rows: RefundSourceRow[]): Promise<void> {
  if (rows.length > 0) await tx.insertInto('refund_credit_notes').values(rows).execute();
}

/** The notes each refund paid out of (by refund id). */
export async function sourcesOfRefunds(tx: Tx, tenantId: string, refundIds: string[]): Promise<RefundSourceRow[]> {
  if (refundIds.length === 0) return [];
  return tx
    .selectFrom('refund_credit_notes')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('refund_id', 'in', refundIds)
    .orderBy('refund_id')
    .orderBy('credit_note_id')
    .execute();
}

export type RefundFilter = { payment_id?: string; customer_id?: string; invoice_id?: string; status?: RefundStatus };

export async function listRefundRows(tx: Tx, tenantId: string, filter: RefundFilter, page: Page): Promise<{ rows: RefundRow[]; total: number }> {
  let q = tx.selectFrom('refunds').where('tenant_id', '=', tenantId);
  if (filter.payment_id) q = q.where('payment_id', '=', filter.payment_id);
  if (filter.customer_id) q = q.where('customer_id', '=', filter.customer_id);
  if (filter.invoice_id) q = q.where('invoice_id', '=', filter.invoice_id);
  if (filter.status) q = q.where('status', '=', filter.status);
  return paginate<RefundRow>(tx, q, { tenantId, table: 'refunds', page });
}

export async function refundsOfPayment(tx: Tx, tenantId: string, paymentId: string): Promise<RefundRow[]> {
  return tx.selectFrom('refunds').selectAll().where('tenant_id', '=', tenantId).where('payment_id', '=', paymentId).orderBy('created_at').execute();
}

/** Succeeded refunds in creation order, a page after `after` (keyset): what accounting sync books. */
export async function succeededRefundRows(tx: Tx, tenantId: string, after: { created_at: Date; id: string } | null, limit: number): Promise<RefundRow[]> {
  let query = tx.selectFrom('refunds').selectAll().where('tenant_id', '=', tenantId).where('status', '=', 'succeeded');
  if (after)
    query = query.where((eb) => eb.or([eb('created_at', '>', after.created_at), eb.and([eb('created_at', '=', after.created_at), eb('id', '>', after.id)])]));
  return query.orderBy('created_at').orderBy('id').limit(limit).execute();
}

/** Which of these refunds failed (the accounting sync undoes those it had booked, decision 0860). */
export async function failedRefundRowsAmong(tx: Tx, tenantId: string, ids: string[]): Promise<RefundRow[]> {
  if (ids.length === 0) return [];
  return tx.selectFrom('refunds').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).where('status', '=', 'failed').orderBy('id').execute();
}

/** The refund that issued this note (a refund note waiting for approval is decided with it). */
export async function refundOfCreditNote(tx: WriteTx, tenantId: string, creditNoteId: string): Promise<RefundRow | undefined> {
  return tx
    .selectFrom('refunds')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('credit_note_id', '=', creditNoteId)
    .where('issued_credit_note', '=', true)
    .forUpdate()
    .executeTakeFirst();
}

export async function finishRefund(tx: Tx, tenantId: string, id: string, patch: Updateable<RefundsTable>): Promise<RefundRow | undefined> {
  return tx
    .updateTable('refunds')
    .set(patch)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', statusesBefore(refundTransitions, (patch.status as RefundStatus | undefined) ?? 'pending'))
    .returningAll()
    .executeTakeFirst();
}

export async function updateRefund(tx: Tx, tenantId: string, id: string, patch: Updateable<RefundsTable>): Promise<void> {
  await tx.updateTable('refunds').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).execute();
}

/**
 * An inbound webhook names its connection, not its tenant (DESIGN §11 path): the one lookup by id
 * alone. The connection's own tenant_id scopes everything after it.
 */
export async function findConnectionById(tx: Tx, id: string): Promise<ConnectionRow | undefined> {
  return tx.selectFrom('gateway_connections').selectAll().where('id', '=', id).executeTakeFirst();
}

// Batches (the automatic-charging job works on a billing-run batch of invoices at once)

export async function insertAttempts(tx: Tx, rows: Insertable<PaymentAttemptsTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.insertInto('payment_attempts').values(rows).execute();
}

export async function pendingAttemptsOfInvoices(tx: Tx, tenantId: string, invoiceIds: string[]): Promise<AttemptRow[]> {
  if (invoiceIds.length === 0) return [];
  return tx
    .selectFrom('payment_attempts')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .where('status', '=', 'pending')
    .execute();
}

export async function findAttempts(tx: Tx, tenantId: string, ids: string[]): Promise<AttemptRow[]> {
  if (ids.length === 0) return [];
  return tx.selectFrom('payment_attempts').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

/** The active default payment method of each of these customers (at most one each: a partial unique index). */
export async function defaultPaymentMethodsOf(tx: Tx, tenantId: string, customerIds: string[]): Promise<PaymentMethodRow[]> {
  if (customerIds.length === 0) return [];
  return tx
    .selectFrom('payment_methods')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('customer_id', 'in', customerIds)
    .where('status', '=', 'active')
    .where('is_default', '=', true)
    .execute();
}

export type AttemptFinish = {
  id: string;
  status: 'succeeded' | 'failed';
  gateway_payment_id: string | null;
  payment_id: string | null;
  failure_code: string | null;
  failure_message: string | null;
};

/** What succeed and fail leave from (both `pending`). */
const FINISHABLE_ATTEMPT = [...new Set([...attemptTransitions.succeed.from, ...attemptTransitions.fail.from])];

/**
 * finishAttempt for many attempts in one statement: the guarded transition out of `pending`. The
 * rows answered are the attempts this call finished; one missing was settled by someone else.
 */
export async function finishAttempts(tx: Tx, tenantId: string, finishes: AttemptFinish[], now: Date): Promise<AttemptRow[]> {
  if (finishes.length === 0) return [];
  const { rows } = await sql<AttemptRow>`
    UPDATE payment_attempts a SET
      status = v.status, pending_reason = NULL, gateway_payment_id = v.gateway_payment_id, payment_id = v.payment_id,
      failure_code = v.failure_code, failure_message = v.failure_message, updated_at = ${now}
    FROM jsonb_to_recordset(${JSON.stringify(finishes)}::jsonb)
      AS v(id uuid, status text, gateway_payment_id text, payment_id uuid, failure_code text, failure_message text)
    WHERE a.tenant_id = ${tenantId} AND a.id = v.id AND a.status IN (${sql.join(FINISHABLE_ATTEMPT)})
    RETURNING a.*`.execute(tx);
  return rows;
}

export type SuccessfulCharge = { succeeded_at: Date; after_failure: string | null };

/**
 * The tenant's successful charges since `since` (newest first, at most `limit`), each with the
 * failure code of the failed attempt before it on the same invoice (null: it succeeded first time):
 * what smart retry timing learns from.
 */
export async function successfulChargesSince(tx: Tx, tenantId: string, since: Date, limit = 5_000): Promise<SuccessfulCharge[]> {
  const { rows } = await sql<SuccessfulCharge>`
    SELECT a.updated_at AS succeeded_at,
           (SELECT f.failure_code FROM payment_attempts f
             WHERE f.tenant_id = a.tenant_id AND f.invoice_id = a.invoice_id AND f.status = 'failed' AND f.created_at <= a.created_at AND f.id <> a.id
             ORDER BY f.created_at DESC LIMIT 1) AS after_failure
      FROM payment_attempts a
     WHERE a.tenant_id = ${tenantId} AND a.status = 'succeeded' AND a.updated_at >= ${since}
     ORDER BY a.updated_at DESC
     LIMIT ${limit}`.execute(tx);
  return rows.map((r) => ({ succeeded_at: new Date(r.succeeded_at), after_failure: r.after_failure }));
}

/** The failure code of each invoice's latest failed attempt. */
export async function lastFailureCodes(tx: Tx, tenantId: string, invoiceIds: string[]): Promise<Map<string, string>> {
  if (invoiceIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('payment_attempts')
    .select(['invoice_id', 'failure_code'])
    .distinctOn('invoice_id')
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .where('status', '=', 'failed')
    .orderBy('invoice_id')
    .orderBy('created_at', 'desc')
    .execute();
  return new Map(rows.filter((r) => r.failure_code).map((r) => [r.invoice_id, r.failure_code!]));
}

/** Per invoice, the code of a canceled mandate debit that stops further debits of it (docs/decisions/0520: a pay link was sent, or the customer skipped it). */
export async function mandateStopsOf(tx: Tx, tenantId: string, invoiceIds: string[], codes: string[]): Promise<Map<string, string>> {
  if (invoiceIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('payment_attempts')
    .select(['invoice_id', 'failure_code'])
    .where('tenant_id', '=', tenantId)
    .where('invoice_id', 'in', invoiceIds)
    .where('status', '=', 'canceled')
    .where('failure_code', 'in', codes)
    .execute();
  return new Map(rows.map((r) => [r.invoice_id, r.failure_code!]));
}

/** Per invoice, how many debits of a UPI AutoPay mandate reached the gateway and failed (NPCI's one attempt and three retries). */
export async function failedAutopayAttemptsOf(tx: Tx, tenantId: string, invoiceIds: string[]): Promise<Map<string, number>> {
  if (invoiceIds.length === 0) return new Map();
  const rows = await tx
    .selectFrom('payment_attempts as a')
    .innerJoin('payment_methods as m', (j) => j.onRef('m.tenant_id', '=', 'a.tenant_id').onRef('m.id', '=', 'a.payment_method_id'))
    .select(['a.invoice_id', (eb) => eb.fn.countAll<string>().as('n')])
    .where('a.tenant_id', '=', tenantId)
    .where('a.invoice_id', 'in', invoiceIds)
    .where('a.status', '=', 'failed')
    .where('m.type', '=', 'upi_mandate')
    .groupBy('a.invoice_id')
    .execute();
  return new Map(rows.map((r) => [r.invoice_id, Number(r.n)]));
}

/**
 * The customer's "skip this debit" from the pre-debit notice: the guarded `notice` → `canceled`
 * transition of the attempt whose link token hashes to `tokenHash`. Undefined: the token does not
 * match, or the debit already left its notice wait (sent, paid, canceled).
 */
export async function skipNoticeAttempt(
  tx: Tx,
  tenantId: string,
  id: string,
  tokenHash: string,
  reason: { code: string; message: string },
  now: Date,
): Promise<AttemptRow | undefined> {
  return cancelAttemptInNotice(tx, tenantId, { id, skip_token_hash: tokenHash }, reason, now);
}
