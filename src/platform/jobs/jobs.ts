import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely, type RawBuilder, type Selectable } from 'kysely';
import type { Logger } from 'pino';
import { deferWrite } from '../db/pipeline.js';
import { countsChanged } from '../db/paginate.js';
import type { AppScope } from '../app-scope.js';
import { isTransaction, type DB, type Tx, type WriteTx } from '../db/schema.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { SecretBox } from '../secrets/secrets.js';
import { newId } from '../ids.js';
import { Coalescer } from '../coalesce.js';
import type { JobsTable } from './jobs.tables.js';
import './jobs.tables.js';
import { JOB_PRIORITY_CLASSES, jobPriority } from './priorities.js';
import { currentTestClock } from '../test-clock-scope.js';

export type Job = Selectable<JobsTable>;

export type JobSpec = {
  kind: string;
  tenantId?: string | null;
  payload?: Record<string, unknown>;
  /** When the job becomes due; defaults to the enqueueing instant. */
  runAt?: Date;
  /** Deduplication: a second job with the same key is silently not enqueued. */
  uniqueKey?: string;
  maxAttempts?: number;
  /** A job without a tenant may still belong to one mode (a recurring sweep of that mode's tenants). */
  mode?: 'test' | 'live';
  /**
   * Jobs with the same key run at most `groupConcurrency` at a time across all workers (a webhook
   * endpoint that never answers holds only that many slots).
   */
  concurrencyKey?: string;
};

function jobRow(now: Date, spec: JobSpec) {
  const tenantId = spec.tenantId ?? null;
  return {
    id: newId(),
    tenant_id: tenantId,
    // The tenant's mode, read by the insert itself (no round trip): a worker runs only its mode's jobs.
    mode: tenantId === null ? (spec.mode ?? null) : sql<'test' | 'live' | null>`(SELECT mode FROM tenants WHERE id = ${tenantId})`,
    kind: spec.kind,
    payload: JSON.stringify(spec.payload ?? {}),
    state: 'pending' as const,
    attempts: 0,
    max_attempts: spec.maxAttempts ?? 8,
    run_at: spec.runAt ?? now,
    unique_key: spec.uniqueKey ?? null,
    priority: jobPriority(spec.kind),
    concurrency_key: spec.concurrencyKey ?? null,
    // Enqueued while a test clock advances: only that clock's advance runs it (decision 0440).
    test_clock_id: currentTestClock(),
    created_at: now,
    updated_at: now,
  };
}

/**
 * Jobs are enqueued inside the business transaction, so they exist exactly when the change does.
 * The insert is deferred (db/pipeline): nothing in the action waits for the job row.
 */
export async function enqueueJob(tx: Tx, now: Date, spec: JobSpec): Promise<void> {
  await enqueueJobs(tx, now, [spec]);
}

const ENQUEUE_CHUNK = 4_000;

/** Several jobs in one statement per 4 000 (same rules as enqueueJob). */
export async function enqueueJobs(tx: Tx, now: Date, specs: JobSpec[]): Promise<void> {
  if (specs.length === 0) return;
  const rows = specs.map((spec) => jobRow(now, spec));
  // A statement carries at most 65 535 parameters (15 a row).
  for (let i = 0; i < rows.length; i += ENQUEUE_CHUNK) {
    const insert = tx
      .insertInto('jobs')
      .values(rows.slice(i, i + ENQUEUE_CHUNK))
      .onConflict((oc) => oc.column('unique_key').doNothing());
    // On the pool the insert is its own statement and commits at once.
    if (isTransaction(tx)) await deferWrite(tx, insert);
    else await insert.execute();
  }
}

/**
 * Notes on a running job what it has already done, in the caller's transaction (`sent: true`, a pay
 * link it made): a rerun after a crash reads them from `job.payload` and does not do it twice. The
 * queue's one way for a handler to change its job row; the keys are merged into the payload.
 */
export async function noteOnJob(tx: Tx, jobId: string, notes: Record<string, unknown>): Promise<void> {
  await tx
    .updateTable('jobs')
    .set({ payload: sql`payload || ${JSON.stringify(notes)}::jsonb` })
    .where('id', '=', jobId)
    .execute();
}

/** A job's payload, its row locked until the caller's transaction ends (a handler's rerun check). */
export async function lockJobPayload(tx: WriteTx, jobId: string): Promise<unknown> {
  const row = await tx.selectFrom('jobs').select('payload').where('id', '=', jobId).forUpdate().executeTakeFirst();
  return row?.payload;
}

/** How long a finished job is kept for inspection before the hourly purge deletes it. */
export const FINISHED_JOB_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
const PURGE_BATCH = 5_000;

/**
 * Deletes jobs that finished (`done`) more than FINISHED_JOB_RETENTION_MS ago, in batches so no
 * single statement holds many rows. Dead jobs stay until someone looks at them. A done job's
 * unique key is free again afterwards; keys in use are per delivery or per recurring time slot,
 * and nothing enqueues those a week later.
 */
export async function purgeFinishedJobs(db: Tx, now: Date): Promise<number> {
  const before = new Date(now.getTime() - FINISHED_JOB_RETENTION_MS);
  let purged = 0;
  for (;;) {
    const result = await db
      .deleteFrom('jobs')
      .where('id', 'in', (eb) => eb.selectFrom('jobs').select('id').where('state', '=', 'done').where('updated_at', '<', before).limit(PURGE_BATCH))
      .executeTakeFirst();
    const deleted = Number(result.numDeletedRows);
    purged += deleted;
    if (deleted < PURGE_BATCH) return purged;
  }
}

export type JobEnv = {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  logger: Logger;
  /** Opens third parties' secrets stored sealed (gateway keys, OAuth tokens). */
  secrets: SecretBox;
  /** The app's own state (platform/app-scope.ts): what its modules registered, what its jobs share. */
  scope: AppScope;
};

/**
 * A handler that records its job's completion itself, in the same statement as its own result
 * (the mail outbox marks a batch of sent mails done while recording their deliveries), returns
 * JOB_RECORDED_DONE so the worker does not mark it again.
 */
export const JOB_RECORDED_DONE = Symbol('job recorded done');
export type JobHandler = (job: Job, env: JobEnv) => Promise<void | typeof JOB_RECORDED_DONE>;
export type JobHandlers = Record<string, JobHandler>;

/** A handler throws this to be retried at a time of its choosing rather than the default backoff. */
export class RetryJobAt extends Error {
  constructor(
    readonly runAt: Date,
    message: string,
  ) {
    super(message);
  }
}

/**
 * How long a claimed job is held before another worker may take it: short, so the jobs of a
 * worker that died are picked up within a minute, and renewed every third of it while the job
 * runs, so a job that runs longer than the lease is never started twice.
 */
export const DEFAULT_LEASE_MS = 60_000;
/** A handler still running after this is taken for hung: its lease is no longer renewed. */
export const MAX_HOLD_MS = 30 * 60_000;

/** Exponential backoff: 1 s, 2 s, 4 s … capped at one hour. */
export function backoffMs(attempts: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempts - 1), 3_600_000);
}

/** A job kind the worker enqueues by itself every `everyMs` (once per slot, across all workers). */
export type RecurringJob = { kind: string; everyMs: number };

/**
 * Work the worker does itself every `everyMs`, without a job row: a sweep of a queue table that
 * holds its own work (the usage alerts' pending deltas, decision 0900), so nothing is lost if the
 * sweep is missed and a tick that finds nothing costs one query. Every worker on no test clock
 * runs it; `run` serializes itself where two workers must not overlap. `runOnce()` runs it first.
 */
export type Ticker = { name: string; everyMs: number; run: (env: JobEnv) => Promise<unknown> };

export type WorkerOptions = {
  env: JobEnv;
  handlers: JobHandlers;
  recurring?: RecurringJob[];
  /** Sweeps run every few seconds by the worker itself (not on a test clock's worker). */
  tickers?: Ticker[];
  batchSize?: number;
  pollMs?: number;
  /**
   * Most jobs in flight at once in the started loop. Slots are refilled as jobs finish, so one
   * slow job (a hanging webhook receiver) never holds up the rest of its batch.
   */
  concurrency?: number;
  /** How long a claim holds a job (renewed while it runs); DEFAULT_LEASE_MS. */
  leaseMs?: number;
  /** Most jobs of one tenant running at once while others have work due, across all workers (default: half of `concurrency`); idle slots are lent above it. */
  tenantConcurrency?: number;
  /** Most jobs of one concurrency group (a webhook endpoint) running at once, across all workers (default: a quarter of `concurrency`). */
  groupConcurrency?: number;
  /**
   * A test clock's worker (decision 0440): it runs only the jobs enqueued on that clock, at the
   * clock's instant. Every other worker runs only jobs on no clock.
   */
  testClockId?: string;
};

/**
 * Claims due jobs with FOR UPDATE SKIP LOCKED (so several workers never take the same job), runs
 * them concurrently, and records the outcome. A failing job is retried with backoff and becomes
 * `dead` after `max_attempts`; a worker that dies mid-job leaves a lease that expires and the job
 * is claimed again — handlers are therefore written to be idempotent.
 *
 * `start()` keeps up to `concurrency` jobs running and claims more as slots free up (once at least
 * half a claim's worth is free; a claim is a batch, or a quarter of the slots if that is more). `runOnce()`/`drain()` — what tests use — run one whole batch at a time.
 */
export class Worker {
  private readonly env: JobEnv;
  private readonly handlers: JobHandlers;
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly recurring: RecurringJob[];
  private readonly tickers: Ticker[];
  private tickerLoops: Promise<void>[] = [];
  private tickerStop = new AbortController();
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly tenantConcurrency: number;
  private readonly groupConcurrency: number;
  /** Free slots a tenant over its cap may not borrow: kept for another tenant's next job. */
  private readonly borrowReserve: number;
  private readonly testClockId: string | null;
  /** Jobs this worker is running now: their leases are renewed until they finish. */
  private readonly holding = new Map<string, number>();
  private renewer: NodeJS.Timeout | undefined;
  private readonly lastSlot = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private stopped = true;
  /**
   * Jobs that finish in the same turn of the event loop are marked done in one UPDATE. A crash
   * before it runs leaves them `running` until their lease expires and they run again, which
   * handlers already allow for.
   */
  private readonly markDone = new Coalescer<string, void>(
    async (ids) => {
      await this.env.db
        .updateTable('jobs')
        .set({ state: 'done', locked_until: null, last_error: null, updated_at: this.env.clock.now() })
        .where('id', 'in', ids)
        .execute();
      return ids.map(() => undefined);
    },
    { maxBatch: 500 },
  );

  constructor(options: WorkerOptions) {
    this.env = options.env;
    this.handlers = options.handlers;
    this.batchSize = options.batchSize ?? 20;
    this.pollMs = options.pollMs ?? 500;
    this.recurring = options.recurring ?? [];
    this.testClockId = options.testClockId ?? null;
    this.tickers = this.testClockId === null ? (options.tickers ?? []) : [];
    this.concurrency = Math.max(1, options.concurrency ?? 2 * this.batchSize);
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.tenantConcurrency = Math.max(1, options.tenantConcurrency ?? Math.floor(this.concurrency / 2));
    this.groupConcurrency = Math.max(1, options.groupConcurrency ?? Math.floor(this.concurrency / 4));
    this.borrowReserve = this.concurrency >= 4 ? Math.max(1, Math.floor(this.concurrency / 8)) : 0;
  }

  /** The jobs this worker may touch: its test clock's, or those on no clock. */
  private onClock() {
    return this.testClockId === null ? sql<boolean>`test_clock_id IS NULL` : sql<boolean>`test_clock_id = ${this.testClockId}`;
  }

  /** The kinds this worker runs, and its limits: what it says when it starts. */
  describe(): { mode: string; concurrency: number; tenant_concurrency: number; group_concurrency: number; lease_ms: number; kinds: string[] } {
    return {
      mode: this.env.config.mode,
      concurrency: this.concurrency,
      tenant_concurrency: this.tenantConcurrency,
      group_concurrency: this.groupConcurrency,
      lease_ms: this.leaseMs,
      kinds: Object.keys(this.handlers).sort(),
    };
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.runContinuously();
    this.tickerStop = new AbortController();
    this.tickerLoops = this.tickers.map((ticker) => this.tick(ticker));
  }

  /**
   * Starts `ticker` every `everyMs` until stop() (at once again when a run took longer); a failed
   * run is logged and the next one comes.
   */
  private async tick(ticker: Ticker): Promise<void> {
    while (!this.stopped) {
      const started = performance.now();
      await this.runTicker(ticker);
      const rest = ticker.everyMs - (performance.now() - started);
      if (rest > 0) await sleep(rest, undefined, { signal: this.tickerStop.signal }).catch(() => undefined);
    }
  }

  private async runTicker(ticker: Ticker): Promise<void> {
    try {
      await ticker.run(this.env);
    } catch (error) {
      this.env.logger.warn({ err: error, ticker: ticker.name }, 'worker sweep failed; retried on its next tick');
    }
  }

  /** Stops claiming and waits for the jobs in hand to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    this.tickerStop.abort();
    await this.loop;
    await Promise.all(this.tickerLoops);
    this.loop = undefined;
    this.tickerLoops = [];
  }

  /** Runs the sweeps once, then claims and runs one batch of due jobs; returns how many jobs it claimed. */
  async runOnce(): Promise<number> {
    // Here a sweep's failure is the caller's (a test's) to see.
    for (const ticker of this.tickers) await ticker.run(this.env);
    const now = this.env.clock.now();
    await this.housekeeping(now);
    const jobs = await this.claim(now, this.batchSize, this.batchSize);
    await Promise.all(jobs.map((job) => this.runJob(job)));
    return jobs.length;
  }

  private async runContinuously(): Promise<void> {
    const { clock, logger } = this.env;
    const inFlight = new Set<Promise<void>>();
    // With many slots, claim more per query (a quarter of the slots), never more than fit.
    const chunk = Math.min(Math.max(this.batchSize, Math.floor(this.concurrency / 4)), this.concurrency);
    let lastHousekeeping = -Infinity;
    while (!this.stopped) {
      const free = this.concurrency - inFlight.size;
      if (inFlight.size > 0 && free < Math.max(1, Math.floor(chunk / 2))) {
        // Claim again when a job finishes — or, with fewer slots free than half a claim, after a
        // poll interval anyway, so a slot kept in reserve (decision 0321) serves new work at once.
        const polled = await this.firstOf(inFlight);
        if (!polled || free === 0) continue;
      }
      const wanted = Math.min(free, chunk);
      let jobs: Job[] = [];
      try {
        const now = clock.now();
        // Lease expiry and recurring jobs need not be checked on every claim of a busy queue.
        if (performance.now() - lastHousekeeping >= this.pollMs) {
          await this.housekeeping(now);
          lastHousekeeping = performance.now();
        }
        jobs = await this.claim(now, wanted, free);
      } catch (error) {
        logger.error({ err: error }, 'worker claim failed');
      }
      for (const job of jobs) {
        const running: Promise<void> = this.runJob(job)
          .catch((error) => logger.error({ err: error, jobId: job.id }, 'recording a job outcome failed'))
          .finally(() => inFlight.delete(running));
        inFlight.add(running);
      }
      if (jobs.length < wanted && !this.stopped) await this.idle();
    }
    await Promise.allSettled(inFlight);
  }

  /** Waits for one of the running jobs to finish (false) or for a poll interval (true). */
  private async firstOf(inFlight: Set<Promise<void>>): Promise<boolean> {
    const poll = new AbortController();
    try {
      return await Promise.race([Promise.race(inFlight).then(() => false), sleep(this.pollMs, true, { signal: poll.signal }).catch(() => false)]);
    } finally {
      poll.abort();
    }
  }

  /** Sleeps for pollMs, or until stop(). */
  private idle(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
      this.timer = setTimeout(resolve, this.pollMs);
    });
  }

  private async housekeeping(now: Date): Promise<void> {
    await this.enqueueRecurring(now);
    await this.env.db
      .updateTable('jobs')
      .set({ state: 'pending', locked_until: null, updated_at: now })
      .where('state', '=', 'running')
      .where('locked_until', '<', now)
      .where(this.onClock())
      .execute();
  }

  /**
   * Claims up to `limit` due jobs: the lowest priority class first, then the earliest due, and
   * never more running jobs of one tenant than `tenantConcurrency`, nor of one concurrency group
   * (a webhook endpoint) than `groupConcurrency`, counting what every worker runs (decision 0321).
   * Tenants and groups at their cap are left out of the scan, so their backlog cannot crowd out
   * anyone else's jobs; a candidate window of a few claims' worth is ranked per tenant and per
   * group so one claim cannot overshoot a cap either.
   *
   * The tenant cap is work-conserving (decision 0321): when that fair claim leaves slots idle —
   * nobody else has work due — tenants at their cap borrow them, all but a reserve of
   * `borrowReserve` of this worker's `free` slots kept for another tenant's next job. Group caps
   * never lend: a hanging endpoint holds no more than its share.
   */
  private async claim(now: Date, limit: number, free: number): Promise<Job[]> {
    const fair = await this.claimDue(now, limit, this.tenantConcurrency);
    const spare = Math.min(limit, free - this.borrowReserve) - fair.length;
    if (spare <= 0 || this.tenantConcurrency >= this.concurrency) return fair;
    return [...fair, ...(await this.claimDue(now, spare, null))];
  }

  private claimDue(now: Date, limit: number, tenantCap: number | null): Promise<Job[]> {
    // The candidate scan must follow the jobs_due_by_priority index and stop at its LIMIT. With the
    // statistics of a small or empty `jobs` table (a burst of thousands of mails before autovacuum
    // analyses it), PostgreSQL planned such a scan as a bitmap scan over every queued job plus a
    // sort: tens of ms a claim at 30 000 queued instead of 0.2 ms. The planner is told so for this
    // transaction only.
    const cap = tenantCap ?? 2_147_483_647;
    return this.env.db.transaction().execute(async (tx) => {
      await deferWrite(tx, sql`SET LOCAL enable_bitmapscan = off`);
      await deferWrite(tx, sql`SET LOCAL enable_seqscan = off`);
      const jobs = await sql<Job>`
        WITH running AS (
          SELECT tenant_id, concurrency_key FROM jobs WHERE state = 'running' AND locked_until > ${now}
        ), tenants_running AS (
          SELECT tenant_id, count(*) AS n FROM running WHERE tenant_id IS NOT NULL GROUP BY tenant_id
        ), groups_running AS (
          SELECT concurrency_key, count(*) AS n FROM running WHERE concurrency_key IS NOT NULL GROUP BY concurrency_key
        ), candidates AS (
          SELECT id, tenant_id, concurrency_key, priority, run_at FROM jobs
          WHERE state = 'pending' AND run_at <= ${now}
            -- A deployment's worker runs its own mode's jobs and the platform's (no tenant, no mode).
            AND (mode = ${this.env.config.mode} OR mode IS NULL)
            AND ${this.onClock()}
            AND (tenant_id IS NULL OR tenant_id NOT IN (SELECT tenant_id FROM tenants_running WHERE n >= ${cap}))
            AND (concurrency_key IS NULL OR concurrency_key NOT IN (SELECT concurrency_key FROM groups_running WHERE n >= ${this.groupConcurrency}))
          -- (priority, run_at) alone: it follows the index and stops at LIMIT. A tie-break on id
          -- made PostgreSQL read and sort every job due at the same instant (a batch of thousands).
          ORDER BY priority, run_at
          LIMIT ${limit * 4}
        ), ranked AS (
          SELECT c.id, c.tenant_id, c.concurrency_key,
                 coalesce(t.n, 0) + row_number() OVER (PARTITION BY c.tenant_id ORDER BY c.priority, c.run_at) AS tenant_slot,
                 coalesce(g.n, 0) + row_number() OVER (PARTITION BY c.concurrency_key ORDER BY c.priority, c.run_at) AS group_slot
          FROM candidates c
          LEFT JOIN tenants_running t ON t.tenant_id = c.tenant_id
          LEFT JOIN groups_running g ON g.concurrency_key = c.concurrency_key
        )
        UPDATE jobs SET state = 'running', attempts = attempts + 1,
               locked_until = ${new Date(now.getTime() + this.leaseMs)}, updated_at = ${now}
        WHERE id IN (
          SELECT id FROM jobs
          WHERE state = 'pending' AND run_at <= ${now}
            AND id IN (
              SELECT id FROM ranked
              WHERE (tenant_id IS NULL OR tenant_slot <= ${cap})
                AND (concurrency_key IS NULL OR group_slot <= ${this.groupConcurrency}))
          ORDER BY priority, run_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        RETURNING *`.execute(tx);
      return jobs.rows;
    });
  }

  /** Runs batches until nothing is due at the clock's current time (tests use this). */
  async drain(maxRounds = 1000): Promise<number> {
    let total = 0;
    for (let i = 0; i < maxRounds; i++) {
      const n = await this.runOnce();
      total += n;
      if (n === 0) break;
    }
    return total;
  }

  private async enqueueRecurring(now: Date): Promise<void> {
    for (const r of this.recurring) {
      const slot = Math.floor(now.getTime() / r.everyMs);
      if (this.lastSlot.get(r.kind) === slot) continue;
      // The unique key makes the slot's job exist once per mode however many workers race for it;
      // a sweep sees only its mode's tenants, so a test and a live deployment sharing a database
      // each run their own.
      const mode = this.env.config.mode;
      await enqueueJob(this.env.db, now, { kind: r.kind, uniqueKey: `${r.kind}@${mode}@${slot}`, maxAttempts: 3, mode });
      this.lastSlot.set(r.kind, slot);
    }
  }

  private async runJob(job: Job): Promise<void> {
    const handler = this.handlers[job.kind];
    let outcome: void | typeof JOB_RECORDED_DONE;
    this.hold(job.id);
    try {
      if (!handler) throw new Error(`no handler for job kind '${job.kind}'`);
      outcome = await handler(job, this.env);
    } catch (error) {
      await this.recordFailure(job, error);
      return;
    } finally {
      this.release(job.id);
      countsChanged(this.env.db, job.tenant_id);
    }
    if (outcome !== JOB_RECORDED_DONE) await this.markDone.call(job.id);
  }

  private hold(jobId: string): void {
    this.holding.set(jobId, performance.now());
    this.renewer ??= setInterval(
      () => {
        this.renewLeases().catch((error) => this.env.logger.warn({ err: error }, 'renewing job leases failed; retried on the next tick'));
      },
      Math.max(10, Math.floor(this.leaseMs / 3)),
    );
  }

  private release(jobId: string): void {
    this.holding.delete(jobId);
    if (this.holding.size === 0 && this.renewer) {
      clearInterval(this.renewer);
      this.renewer = undefined;
    }
  }

  /** Extends the lease of every job this worker is running (one UPDATE for all of them), up to MAX_HOLD_MS. */
  private async renewLeases(): Promise<void> {
    const since = performance.now() - MAX_HOLD_MS;
    const ids = [...this.holding].filter(([, heldFrom]) => heldFrom >= since).map(([id]) => id);
    if (ids.length === 0) return;
    const now = this.env.clock.now();
    await this.env.db
      .updateTable('jobs')
      .set({ locked_until: new Date(now.getTime() + this.leaseMs) })
      .where('id', 'in', ids)
      .where('state', '=', 'running')
      .execute();
  }

  private async recordFailure(job: Job, error: unknown): Promise<void> {
    const { db, clock, logger } = this.env;
    const now = clock.now();
    const message = error instanceof Error ? error.message : String(error);
    const dead = job.attempts >= job.max_attempts;
    const runAt = error instanceof RetryJobAt ? error.runAt : new Date(now.getTime() + backoffMs(job.attempts));
    logger.warn({ jobId: job.id, kind: job.kind, attempts: job.attempts, dead, err: message }, 'job failed');
    await db
      .updateTable('jobs')
      .set({
        state: dead ? 'dead' : 'pending',
        run_at: dead ? job.run_at : runAt,
        locked_until: null,
        last_error: message.slice(0, 2000),
        updated_at: now,
      })
      .where('id', '=', job.id)
      .execute();
  }
}

export type JobBacklog = {
  /** Per priority class: jobs due now and not yet claimed, and how long the oldest of them has waited. */
  classes: { priority: (typeof JOB_PRIORITY_CLASSES)[number]; due: number; oldest_due_seconds: number }[];
  /** Jobs claimed and running (lease not expired), all workers together. */
  running: number;
};

/**
 * The queue's backlog as /metrics and /readyz report it: what is due and waiting per priority
 * class, and for how long. A growing `oldest_due_seconds` in the money class is the signal to add
 * workers (docs/operations.md, "Monitoring").
 */
export async function jobBacklog(db: Kysely<DB>, now: Date): Promise<JobBacklog> {
  const { rows } = await sql<{ priority: number; due: number; oldest: Date | null }>`
    SELECT priority, count(*)::int AS due, min(run_at) AS oldest FROM jobs
    WHERE state = 'pending' AND run_at <= ${now} GROUP BY priority`.execute(db);
  const running = await sql<{ n: number }>`SELECT count(*)::int AS n FROM jobs WHERE state = 'running' AND locked_until > ${now}`.execute(db);
  const byPriority = new Map(rows.map((r) => [r.priority, r]));
  return {
    classes: JOB_PRIORITY_CLASSES.map((name, priority) => {
      const row = byPriority.get(priority);
      const oldest = row?.oldest ? new Date(row.oldest).getTime() : null;
      return { priority: name, due: row?.due ?? 0, oldest_due_seconds: oldest === null ? 0 : Math.max(0, Math.round((now.getTime() - oldest) / 1000)) };
    }),
    running: running.rows[0]?.n ?? 0,
  };
}

export async function pendingJobCount(db: Kysely<DB>): Promise<number> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('state', 'in', ['pending', 'running'])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** The earliest pending job of a test clock due after `after` (its advance steps to it). */
export async function nextJobOnTestClock(db: Kysely<DB>, testClockId: string, after: Date): Promise<Date | null> {
  const row = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.min('run_at').as('at'))
    .where('state', '=', 'pending')
    .where('test_clock_id', '=', testClockId)
    .where('run_at', '>', after)
    .executeTakeFirst();
  return row?.at ? new Date(row.at) : null;
}

/**
 * Whether a drain restricted to the test clock could run anything at `at`: a pending job of the
 * clock due by then, or one still marked running (its lease may be reclaimed). An advance skips
 * the drain while none is.
 */
export function jobsDueOnTestClock(testClockId: string, at: Date): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM jobs WHERE test_clock_id = ${testClockId}
    AND ((state = 'pending' AND run_at <= ${at}) OR state = 'running'))`;
}
