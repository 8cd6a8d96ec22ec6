import type { Ctx, ReadCtx } from '../../platform/context.js';
import { enqueueJobs } from '../../platform/jobs/jobs.js';
import { getInvoiceRows, type InvoiceRow } from '../../modules/invoices/index.js';
import {
  duePendingAttempts,
  findAttempt,
  type AttemptRow,
  type ChargeOutcome,
  type CollectionsEnv,
  type ResolvedGateway,
  type SavedPaymentMethod,
} from '../../modules/collections/index.js';
import { askAboutPendingAttempt, askGateway } from './ask-gateway.js';
import { commitOutcome, recordChargeOutcomes } from './record-charge-outcomes.js';
import { startAutomaticAttempts } from './start-attempt.js';

/**
 * Collecting an invoice through its gateway, in three steps, each in its own file:
 *  1. start (`start-attempt.ts`): the attempt is committed `pending` before any gateway call;
 *  2. ask (`ask-gateway.ts`): the gateway is asked outside any transaction;
 *  3. record (`record-charge-outcomes.ts`): its answer is committed in one transaction.
 * This file runs them: for one attempt (the pay request, the checkout page), for the charge job's
 * chunks, and for the sweep that resolves attempts left pending. A payment taken on a provider's
 * hosted checkout is `hosted-checkout-payment.ts`.
 */

/** The job that charges finalized charge_automatically invoices: `{ invoice_ids: [...] }`, one per finalizing transaction. */
export const CHARGE_INVOICES_JOB = 'collections.charge_invoices';
/** The recurring sweep that resolves attempts left pending (worker died mid-call, unknown outcome, mandate notice served). */
export const RESOLVE_ATTEMPTS_JOB = 'collections.resolve_attempts';
/** A pending attempt untouched this long is no longer in anyone's hands: the sweep resolves it. */
export const RESOLVE_AFTER_MS = 60_000;
/** Invoices per charge transaction pair (a billing-run batch), and gateway calls in flight at once, of the charge job. */
export const CHARGE_CHUNK = 200;
export const CHARGE_PARALLELISM = 8;

/**
 * Queues the automatic charge of the charge_automatically invoices among `invoices` that are still
 * open with something due, in the finalizing transaction: the charge itself happens in the job,
 * after commit, never inside it.
 */
export async function scheduleAutomaticCharges(ctx: Ctx, invoices: Pick<InvoiceRow, 'id' | 'status' | 'amount_due' | 'collection_method'>[]): Promise<void> {
  const ids = invoices.filter((i) => i.collection_method === 'charge_automatically' && i.status === 'open' && i.amount_due > 0).map((i) => i.id);
  if (ids.length === 0) return;
  await enqueueJobs(ctx.tx, ctx.now, [{ kind: CHARGE_INVOICES_JOB, tenantId: ctx.tenantId, payload: { invoice_ids: ids } }]);
}

/** Steps 2 and 3 for an attempt this request just committed: charged with the key derived from its id. Returns the attempt as committed. */
export async function chargeAttempt(env: CollectionsEnv, tenantId: string, attemptId: string, now: Date): Promise<AttemptRow | undefined> {
  return settleAttempt(env, { tenantId, attemptId }, now, { lookUpFirst: false });
}

/**
 * Steps 2 and 3 for an attempt found pending later (the worker died mid-call, the outcome was
 * unknown, a replayed request): first looked up, and charged (same key) only when the provider
 * never saw it. Returns the attempt as committed.
 */
export async function resolveAttempt(env: CollectionsEnv, tenantId: string, attemptId: string, now: Date): Promise<AttemptRow | undefined> {
  return settleAttempt(env, { tenantId, attemptId }, now, { lookUpFirst: true });
}

async function settleAttempt(
  env: CollectionsEnv,
  attemptOf: { tenantId: string; attemptId: string },
  now: Date,
  options: { lookUpFirst: boolean },
): Promise<AttemptRow | undefined> {
  const asked = await askAboutPendingAttempt(env, attemptOf, now, options);
  if (!asked) return findAttempt(env.db, attemptOf.tenantId, attemptOf.attemptId);
  return commitOutcome(env, attemptOf.tenantId, attemptOf.attemptId, now, asked);
}

/** Steps 2 and 3 for a fresh attempt whose payment method and gateway the caller holds (the checkout page's one-off card). */
export async function chargeAndCommit(
  env: CollectionsEnv,
  attempt: AttemptRow,
  call: { saved: SavedPaymentMethod; resolved: ResolvedGateway; now: Date },
): Promise<AttemptRow | undefined> {
  return commitOutcome(env, attempt.tenant_id, attempt.id, call.now, await askGateway(env, attempt, { ...call, lookUpFirst: false }));
}

/**
 * The job CHARGE_INVOICES_JOB, set-based in chunks of CHARGE_CHUNK invoices (a billing-run batch
 * is one chunk). Per chunk:
 *  1. one transaction starts the chunk's attempts (startAutomaticAttempts) and COMMITS them before
 *     any gateway call; an attempt already pending (what a rerun after a crash finds) is resolved
 *     instead, by lookup first;
 *  2. one read of the invoices as they are now; then the gateway is asked for each attempt, a few
 *     at a time, outside any transaction (an invoice paid another way meanwhile is not charged);
 *  3. one transaction records the outcomes (recordChargeOutcomes).
 * If step 3 fails, the attempts stay pending and the sweep resolves them by lookup, never by a
 * second charge: a crash never charges a card twice. A defect met while asking about one attempt
 * (anything but a gateway or network failure) leaves that attempt pending as committed; the
 * chunk's other outcomes are recorded, and then the error fails the job.
 */
export async function chargeInvoices(env: CollectionsEnv, tenantId: string, invoiceIds: string[], now: Date): Promise<void> {
  const ids = [...new Set(invoiceIds)];
  for (let i = 0; i < ids.length; i += CHARGE_CHUNK) {
    const chunk = ids.slice(i, i + CHARGE_CHUNK);
    // Mandate debits not attempted (decision 0520) are not asked of the gateway: their pay links are a job queued with them.
    const started = (await env.db.transaction().execute((tx) => startAutomaticAttempts({ tx, tenantId, now }, env, chunk))).filter((s) => !s.payLink);
    if (started.length === 0) continue;
    const read: ReadCtx = { tx: env.db, tenantId, now };
    const current = new Map(
      (
        await getInvoiceRows(
          read,
          started.filter((s) => s.call).map((s) => s.attempt.invoice_id),
        )
      ).map((r) => [r.id, r]),
    );
    const outcomes = new Array<ChargeOutcome | null>(started.length).fill(null);
    const defects: unknown[] = [];
    let next = 0;
    const lane = async () => {
      for (let k = next++; k < started.length; k = next++) {
        const { attempt, fresh, call } = started[k]!;
        try {
          outcomes[k] = call
            ? await askGateway(env, attempt, {
                saved: call.saved,
                resolved: call.resolved,
                now,
                lookUpFirst: false,
                known: { invoice: current.get(attempt.invoice_id), customer: call.customer },
              })
            : await askAboutPendingAttempt(env, { tenantId, attemptId: attempt.id }, now, { lookUpFirst: !fresh });
        } catch (error) {
          defects.push(error);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CHARGE_PARALLELISM, started.length) }, lane));
    const recorded = started.flatMap((s, k) => (outcomes[k] ? [{ attemptId: s.attempt.id, outcome: outcomes[k] }] : []));
    if (recorded.length > 0) await env.db.transaction().execute((tx) => recordChargeOutcomes({ tx, tenantId, now }, recorded));
    if (defects.length > 0) throw defects[0];
  }
}

/**
 * The sweep RESOLVE_ATTEMPTS_JOB: every pending attempt nobody holds (see RESOLVE_AFTER_MS) is
 * looked up, then charged if the gateway never saw it. A defect met on one attempt does not hold
 * up the others; the first fails the job once they are done.
 */
export async function resolvePendingAttempts(env: CollectionsEnv, now: Date, limit = 500): Promise<number> {
  const due = await duePendingAttempts(env.db, env.config.mode, new Date(now.getTime() - RESOLVE_AFTER_MS), limit);
  const defects: unknown[] = [];
  for (const a of due) await resolveAttempt(env, a.tenant_id, a.id, now).catch((error: unknown) => defects.push(error));
  if (defects.length > 0) throw defects[0];
  return due.length;
}
