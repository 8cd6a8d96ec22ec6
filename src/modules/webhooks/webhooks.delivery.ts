import type { Kysely } from 'kysely';
import { scopeKey } from '../../platform/app-scope.js';
import { Coalescer } from '../../platform/coalesce.js';
import type { DB } from '../../platform/db/schema.js';
import { outboundLookup, outboundPolicy, outboundUrlProblem } from '../../platform/http/outbound-guard.js';
import { enqueueJob, RetryJobAt, type Job, type JobEnv, type JobSpec } from '../../platform/jobs/jobs.js';
import { toEvent, type EventRow } from '../events/index.js';
import {
  findDeliveryTargets,
  recordDeliveryAttempts,
  releaseNextWaiting,
  type AttemptRecord,
  type DeliveryKey,
  type DeliveryTarget,
  type RecordedAttempt,
} from './webhooks.repository.js';
import { postJson } from './webhooks.http.js';
import { openSigningSecret, signatureHeader } from './webhooks.signing.js';
import { isFinished, recordAttempt, type AttemptOutcome } from './webhooks.states.js';

export const DELIVER_JOB = 'webhooks.deliver';

/** Each attempt — connect, send, and read the answer — gets 10 s (DESIGN §7). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/**
 * In-flight attempts one endpoint may have in one worker process: half the worker's slots, so a
 * dead or slow endpoint can never take them all (20 with the default KOSH_WORKER_CONCURRENCY).
 */
export function maxInFlightPerEndpoint(workerConcurrency: number): number {
  return Math.max(1, Math.ceil(workerConcurrency / 2));
}
/** When an endpoint is at its limit, its further deliveries are looked at again this much later. */
const BUSY_RETRY_MS = 5_000;
/** The receiver's answer is read (so the connection can be reused) up to this size, then dropped. */
const MAX_ANSWER_BYTES = 64 * 1024;

/**
 * One job per delivery, made in the transaction that creates the delivery. The same job is
 * re-run for every retry (RetryJobAt), so it allows far more runs than a delivery has attempts;
 * the delivery row, not the job, counts attempts.
 */
export function deliveryJob(tenantId: string, deliveryId: string, runAt: Date, endpointId: string): JobSpec {
  return {
    kind: DELIVER_JOB,
    tenantId,
    payload: { delivery_id: deliveryId },
    runAt,
    uniqueKey: `${DELIVER_JOB}:${deliveryId}`,
    maxAttempts: 1000,
    // An endpoint that never answers holds only its group's share of the worker slots.
    concurrencyKey: `webhook_endpoint:${endpointId}`,
  };
}

/** Attempts under way per endpoint (`tenant/endpoint`), this app's (platform/app-scope.ts). */
const inFlightKey = scopeKey('webhooks.in_flight', () => new Map<string, number>());

/**
 * The worker runs many delivery jobs at once; their reads and their attempt records are
 * coalesced into one statement per batch (per database: tests run several apps in one process).
 */
type Batchers = { load: Coalescer<DeliveryKey, DeliveryTarget | undefined>; record: Coalescer<AttemptRecord, RecordedAttempt | undefined> };
const batchers = new WeakMap<Kysely<DB>, Batchers>();
const keyOf = (k: DeliveryKey) => `${k.tenantId}/${k.id}`;

function batchersFor(db: Kysely<DB>): Batchers {
  let b = batchers.get(db);
  if (!b) {
    b = {
      load: new Coalescer(
        async (keys) => {
          const rows = new Map((await findDeliveryTargets(db, keys)).map((r) => [keyOf({ tenantId: r.tenant_id, id: r.id }), r]));
          return keys.map((k) => rows.get(keyOf(k)));
        },
        { maxBatch: 200 },
      ),
      record: new Coalescer(
        async (records) => {
          // One row per delivery per statement; a second record of the same delivery in the batch
          // is treated as losing the race (its caller re-reads).
          const first = new Map<string, AttemptRecord>();
          for (const r of records) if (!first.has(keyOf(r))) first.set(keyOf(r), r);
          const rows = new Map((await recordDeliveryAttempts(db, [...first.values()])).map((r) => [keyOf({ tenantId: r.tenant_id, id: r.id }), r]));
          return records.map((r) => (first.get(keyOf(r)) === r ? rows.get(keyOf(r)) : undefined));
        },
        { maxBatch: 200 },
      ),
    };
    batchers.set(db, b);
  }
  return b;
}

/**
 * The job handler: makes the attempt that is due, records it, and either finishes or asks to be
 * run again when the next attempt is due. Safe to re-run at any point (a crashed worker's job is
 * claimed again): a finished delivery is left alone, and an attempt is recorded only against the
 * attempt count it was made from.
 */
export async function runDeliveryJob(job: Job, env: JobEnv): Promise<void> {
  const tenantId = job.tenant_id;
  const deliveryId = job.payload.delivery_id;
  if (!tenantId || typeof deliveryId !== 'string') throw new Error('webhook delivery job without tenant or delivery id');
  const { load, record } = batchersFor(env.db);
  const target = await load.call({ tenantId, id: deliveryId });
  if (!target) return; // deliveries are never deleted; nothing to do for an unknown one

  if (isFinished(target)) {
    if (target.successor_waiting) await releaseSuccessor(env, target);
    return;
  }
  // Waiting behind an earlier delivery of the same object: that one schedules this one.
  if (target.next_retry_at === null) return;
  const startedAt = env.clock.now();
  if (target.next_retry_at > startedAt) throw new RetryJobAt(target.next_retry_at, 'next attempt not yet due');

  const endpointKey = `${tenantId}/${target.webhook_endpoint_id}`;
  const inFlight = env.scope.get(inFlightKey);
  const busy = inFlight.get(endpointKey) ?? 0;
  if (busy >= maxInFlightPerEndpoint(env.config.workerConcurrency)) {
    throw new RetryJobAt(new Date(startedAt.getTime() + BUSY_RETRY_MS), 'endpoint has too many attempts in flight');
  }
  inFlight.set(endpointKey, busy + 1);
  let outcome: AttemptOutcome;
  try {
    outcome = await attemptDelivery(target, env, startedAt);
  } finally {
    const left = (inFlight.get(endpointKey) ?? 1) - 1;
    if (left > 0) inFlight.set(endpointKey, left);
    else inFlight.delete(endpointKey);
  }

  const at = env.clock.now();
  const recorded = await record.call({
    tenantId,
    id: deliveryId,
    attemptsBefore: target.attempts,
    columns: { ...recordAttempt(target.attempts, outcome, at), endpoint_url: target.url, updated_at: at },
  });
  // Another run of this job recorded this attempt first: carry on from what it recorded.
  const after = recorded ?? (await load.call({ tenantId, id: deliveryId }));
  if (!after) return;
  if (isFinished(after)) {
    if (after.successor_waiting) await releaseSuccessor(env, target);
    return;
  }
  if (after.next_retry_at === null) return;
  throw new RetryJobAt(after.next_retry_at, `webhook attempt ${after.attempts} failed: ${outcome.ok ? 'recorded elsewhere' : outcome.error}`);
}

/** Schedules the next delivery of the same object to the same endpoint (the ordering rule). */
async function releaseSuccessor(env: JobEnv, finished: DeliveryTarget): Promise<void> {
  if (!finished.object_id) return;
  const now = env.clock.now();
  await env.db.transaction().execute(async (tx) => {
    const next = await releaseNextWaiting(tx, finished.tenant_id, finished.webhook_endpoint_id, finished.object_id!, now);
    if (next) await enqueueJob(tx, now, deliveryJob(finished.tenant_id, next, now, finished.webhook_endpoint_id));
  });
}

function eventBody(target: DeliveryTarget): string {
  const row: EventRow = {
    tenant_id: target.tenant_id,
    id: target.event_id,
    type: target.event_type,
    object_type: target.event_object_type,
    object_id: target.event_object_id,
    payload: target.event_payload,
    created_at: target.event_created_at,
  };
  return JSON.stringify(toEvent(row));
}

/** One attempt: checks, then the signed POST. Never throws; every failure becomes an outcome. */
async function attemptDelivery(target: DeliveryTarget, env: JobEnv, now: Date): Promise<AttemptOutcome> {
  if (target.deleted_at) return { ok: false, statusCode: null, error: 'endpoint deleted; not sent' };
  if (!target.enabled) return { ok: false, statusCode: null, error: 'endpoint disabled; not sent' };
  let url: URL;
  try {
    url = new URL(target.url);
  } catch {
    return { ok: false, statusCode: null, error: 'endpoint URL is not valid' };
  }
  // Again at every attempt: DNS may now answer with a private address (rebinding).
  const policy = outboundPolicy(env.config);
  const problem = await outboundUrlProblem(url, policy);
  if (problem) return { ok: false, statusCode: null, error: `refused: ${problem}` };

  const body = eventBody(target);
  const timestamp = Math.floor(now.getTime() / 1000);
  const open = (stored: string) => openSigningSecret(env.secrets, target.tenant_id, target.webhook_endpoint_id, stored);
  const secrets: string[] = [];
  try {
    secrets.push(open(target.secret));
    if (target.previous_secret && target.previous_secret_expires_at && target.previous_secret_expires_at > now) {
      secrets.push(open(target.previous_secret));
    }
  } catch {
    return { ok: false, statusCode: null, error: 'the signing secret could not be opened (was KOSH_SECRET_KEY changed?); rotate it' };
  }
  // webhook-id is the event id: stable across retries and redeliveries, so receivers can dedupe.
  const signature = signatureHeader(secrets, target.event_id, timestamp, body);
  try {
    const answer = await postJson(
      url,
      {
        'content-type': 'application/json',
        'user-agent': 'Kosh-Webhooks/1',
        'webhook-id': target.event_id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': signature,
        'x-service-signature': signature,
        'x-kosh-delivery-id': target.id,
      },
      body,
      // The connection itself refuses private addresses (rebinding after the check).
      { timeoutMs: ATTEMPT_TIMEOUT_MS, maxAnswerBytes: MAX_ANSWER_BYTES, lookup: outboundLookup(policy) },
    );
    const status = answer.status;
    if (status >= 200 && status < 300) return { ok: true, statusCode: status };
    if (status >= 300 && status < 400) {
      const location = answer.location;
      return { ok: false, statusCode: status, error: `redirect ${status} not followed${location ? ` (Location: ${location.slice(0, 200)})` : ''}` };
    }
    return { ok: false, statusCode: status, error: `receiver answered HTTP ${status}` };
  } catch (error) {
    return { ok: false, statusCode: null, error: describeFetchError(error) };
  }
}

function describeFetchError(error: unknown): string {
  const e = error as Error & { code?: string; cause?: { code?: string; message?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return `timed out after ${ATTEMPT_TIMEOUT_MS / 1000} s without a complete answer`;
  if (e?.code === 'EADDRFORBIDDEN') return `refused: ${e.message}`;
  if (e?.code) return `connection failed: ${e.code}`;
  const cause = e?.cause;
  if (cause?.code) return `connection failed: ${cause.code}`;
  if (cause?.message) return `request failed: ${cause.message}`;
  return `request failed: ${e?.message ?? String(error)}`;
}
