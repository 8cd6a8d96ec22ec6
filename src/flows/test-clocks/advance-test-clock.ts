import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DB } from '../../platform/db/schema.js';
import { executePrepared } from '../../platform/db/pipeline.js';
import type { Clock } from '../../platform/clock.js';
import type { Ctx } from '../../platform/context.js';
import { newId } from '../../platform/ids.js';
import { jobsDueOnTestClock, nextJobOnTestClock, Worker, type Job, type JobEnv, type JobHandlers } from '../../platform/jobs/jobs.js';
import { runOnTestClock } from '../../platform/test-clock-scope.js';
import { dueExecutionsInClockScope, nextDunningInstant, overdueInvoicesInClockScope } from '../../modules/dunning/index.js';
import { delinquencyMovesInClockScope, nextInvoiceDueInClockScope } from '../../modules/invoices/index.js';
import { dueSubscriptionsInClockScope, nextPeriodEndInClockScope, subscriptionTransitions } from '../../modules/subscriptions/index.js';
import { failTestClockAdvance, finishTestClockAdvance, getTestClock, recordTestClockTime, type TestClock } from '../../modules/test-clocks/index.js';
/** Kept here for callers that import it from the advance (it lives in clock-time.ts). */
export { customerNow } from './clock-time.js';
import { BILLING_RUN_JOB } from '../subscriptions/billing-run.job.js';
import { DUNNING_OVERDUE_SCAN_JOB, DUNNING_STEPS_JOB } from '../dunning/dunning.wiring.js';
import { RESOLVE_ATTEMPTS_JOB } from '../collections/collect-invoice-payment.js';
import { TRIAL_SCAN_JOB } from '../notifications/notify-customers.js';
import { EXPIRE_GRANTS_JOB, expirableGrantsInClockScope } from '../../modules/credits/index.js';
import { expirableCreditNotesInClockScope } from '../../modules/credit-notes/index.js';
import { pendingAttemptsInClockScope } from '../../modules/collections/index.js';
import { trialsInClockScope } from '../../modules/subscriptions/index.js';
import { activeSchedulesInClockScope } from '../../modules/finance/index.js';

/** The subscription statuses the billing run's delinquency pass moves from (the state table's). */
const DELINQUENCY_FROM = {
  unpaid: subscriptionTransitions.mark_unpaid.from,
  pastDue: subscriptionTransitions.mark_past_due.from,
  recover: subscriptionTransitions.recover.from,
};

/**
 * The worker's recurring sweeps an advance runs at each of its instants, in this order, with the
 * worker's own handlers: each finds its due work through `testClockScope`, so inside the advance
 * it sees only the clock's customers (and outside, never them). A sweep joins this list once its
 * discovery queries carry that scope — running one that does not would act on every customer at
 * the clock's time. Each comes with what its discovery would find, asked for all of them (and the
 * clock's jobs) in one statement a round: a sweep whose discovery would find nothing is skipped.
 */
export const TEST_CLOCK_SWEEPS: readonly { kind: string; anything: (at: Date) => RawBuilder<boolean> }[] = [
  // Renewals, trial ends and final invoices; then past_due / unpaid / recovered by the invoices.
  { kind: BILLING_RUN_JOB, anything: (at) => sql<boolean>`(${dueSubscriptionsInClockScope(at)} OR ${delinquencyMovesInClockScope(at, DELINQUENCY_FROM)})` },
  { kind: DUNNING_OVERDUE_SCAN_JOB, anything: overdueInvoicesInClockScope },
  { kind: DUNNING_STEPS_JOB, anything: dueExecutionsInClockScope },
];

/**
 * What one round at `at` has to do, in one statement: the sweeps whose discovery would find
 * anything, and whether a job of the clock is due.
 */
async function roundWork(db: Kysely<DB>, clockId: string, at: Date): Promise<{ sweeps: Set<string>; jobs: boolean }> {
  const columns = [...TEST_CLOCK_SWEEPS.map((s, i) => sql`${s.anything(at)} AS ${sql.ref(`s${i}`)}`), sql`${jobsDueOnTestClock(clockId, at)} AS jobs`];
  // Asked several times an instant with the same text: prepared, so it is not planned each time
  // (planning it costs several times what running it does).
  const { rows } = await executePrepared(db, sql<Record<string, boolean>>`SELECT ${sql.join(columns)}`);
  const row = rows[0] ?? {};
  return { sweeps: new Set(TEST_CLOCK_SWEEPS.filter((_, i) => row[`s${i}`] === true).map((s) => s.kind)), jobs: row.jobs === true };
}

/**
 * Sweeps whose work is due by the day (expiries, daily revenue recognition, trial notices,
 * mandate debits after their 24-hour notice): run once an instant, at the first instant of each
 * new UTC day the advance reaches and at its last instant, not in every round of every instant —
 * run that often they made an advance several times slower. Each comes with what it works on:
 * one statement asks, for all of them at once, whether the clock's customers have any such
 * thing (an expiry that can come, a trial, a pending attempt, an active revenue schedule), and a
 * sweep with nothing to work on is not run — its own discovery query would find nothing.
 */
export const TEST_CLOCK_DAILY_SWEEPS: readonly { kind: string; anything: () => RawBuilder<boolean> }[] = [
  // Pending attempts: mandate debits whose pre-debit notice has run, unknown outcomes.
  { kind: RESOLVE_ATTEMPTS_JOB, anything: pendingAttemptsInClockScope },
  { kind: TRIAL_SCAN_JOB, anything: trialsInClockScope },
  { kind: 'credit_notes.expire', anything: expirableCreditNotesInClockScope },
  { kind: EXPIRE_GRANTS_JOB, anything: expirableGrantsInClockScope },
  { kind: 'finance.recognize_revenue', anything: activeSchedulesInClockScope },
];

/**
 * The daily sweeps that have anything to work on for the clock's customers, in one statement.
 * Asked before the first of them runs: none creates what a later one works on at the same instant
 * (a grant paid for by a resolved attempt is counted while its top-up is pending).
 */
async function dailySweepsWithWork(db: Kysely<DB>): Promise<string[]> {
  const columns = TEST_CLOCK_DAILY_SWEEPS.map((s, i) => sql`${s.anything()} AS ${sql.ref(`s${i}`)}`);
  const { rows } = await executePrepared(db, sql<Record<string, boolean>>`SELECT ${sql.join(columns)}`);
  return TEST_CLOCK_DAILY_SWEEPS.filter((_, i) => rows[0]?.[`s${i}`] === true).map((s) => s.kind);
}

/** Rounds of sweeps and jobs at one instant before the advance moves on. */
const MAX_ROUNDS = 5;
/** Batches of jobs in one round's drain (Worker.drain's bound). */
const MAX_BATCHES = 1000;

export type AdvanceReport = { steps: number; jobs: number };

function fixedClock(at: Date): Clock {
  return { now: () => new Date(at.getTime()) };
}

function sweepJob(kind: string, at: Date): Job {
  return {
    id: newId(),
    tenant_id: null,
    mode: null,
    kind,
    payload: {},
    state: 'running',
    attempts: 1,
    max_attempts: 1,
    run_at: at,
    locked_until: null,
    last_error: null,
    unique_key: null,
    priority: 0,
    concurrency_key: null,
    test_clock_id: null,
    created_at: at,
    updated_at: at,
  };
}

/**
 * The next instant after `t` at which something of the clock is due — a period end (renewal, trial
 * end), an open invoice's due date, a dunning step or payment wall, a queued job — never past `to`;
 * and the daily sweeps with anything to work on (nothing runs between this read and that instant).
 */
async function nextInstant(db: Kysely<DB>, clockId: string, t: Date, to: Date): Promise<{ at: Date; dailyWork: string[] }> {
  // Independent reads, sent at once (on the pool's connections; one after the other on PGlite's one).
  const [dailyWork, ...found] = await Promise.all([
    dailySweepsWithWork(db),
    nextPeriodEndInClockScope(db, t),
    nextInvoiceDueInClockScope(db, t),
    nextDunningInstant(db, t),
    nextJobOnTestClock(db, clockId, t),
  ]);
  const candidates = [to.getTime(), ...found.map((at) => at?.getTime())].filter((x): x is number => x !== undefined && x > t.getTime());
  return { at: new Date(Math.min(...candidates)), dailyWork };
}

/**
 * Runs everything due for the clock's customers at `at`: the daily sweeps given (at the first
 * instant of a day), the sweeps, then the jobs queued on the clock and due by then (charges,
 * dunning actions, mails, webhook deliveries), until none is due. The handlers are the real
 * worker's; their clock reads `at`.
 */
async function runAt(env: JobEnv, handlers: JobHandlers, clockId: string, at: Date, dailyWork: readonly string[]): Promise<number> {
  const atEnv: JobEnv = { ...env, clock: fixedClock(at) };
  const worker = new Worker({ env: atEnv, handlers, testClockId: clockId, batchSize: 50, concurrency: 1 });
  let jobs = 0;
  for (const kind of dailyWork) {
    const handler = handlers[kind];
    if (handler) await handler(sweepJob(kind, at), atEnv);
  }
  // A job can make more work due at the same instant (a declined charge starts dunning, whose first
  // step is due at once): the sweeps run again until a round finds no job to run. Each round does
  // what running every sweep and draining the queue did, without their empty queries: one
  // statement (roundWork) says which sweeps' discovery would find anything and whether a job is
  // due; the others are skipped, and once a sweep has run the later ones run unasked (it may have
  // made work for them). The queue is drained in Worker.drain's batches, asking roundWork after
  // each whether another job is due instead of claiming an empty batch; that answer also says
  // what the next round's sweeps have to do.
  let due = await roundWork(env.db, clockId, at);
  for (let round = 0; round < MAX_ROUNDS; round += 1) {
    let swept = false;
    for (const { kind } of TEST_CLOCK_SWEEPS) {
      const handler = handlers[kind];
      if (!handler || (!swept && !due.sweeps.has(kind))) continue;
      await handler(sweepJob(kind, at), atEnv);
      swept = true;
    }
    let ran = 0;
    let jobsDue = swept || due.jobs;
    for (let batch = 0; jobsDue && batch < MAX_BATCHES; batch += 1) {
      const n = await worker.runOnce();
      ran += n;
      // An empty batch changed nothing the last answer describes.
      if (n === 0) break;
      due = await roundWork(env.db, clockId, at);
      jobsDue = due.jobs;
    }
    jobs += ran;
    if (ran === 0) break;
  }
  return jobs;
}

/**
 * Advances a test clock (already moved to `advancing` by startTestClockAdvance) from its
 * frozen_time to `to`: instant by instant, in time order, everything due for its customers runs
 * with the same code as the real worker (decision 0440). Each instant's progress is recorded, so
 * an advance that fails (status internal_failure) resumes from the last instant it completed.
 */
export async function advanceTestClock(
  env: JobEnv,
  handlers: JobHandlers,
  tenantId: string,
  clockId: string,
  to: Date,
): Promise<{ clock: TestClock; report: AdvanceReport }> {
  const { db } = env;
  const ctxAt = (work: (ctx: Ctx) => Promise<TestClock | void>) => db.transaction().execute((tx) => work({ tx, tenantId, now: env.clock.now() }));
  const start = (await ctxAt((ctx) => getTestClock(ctx, clockId))) as TestClock;
  const report: AdvanceReport = { steps: 0, jobs: 0 };
  try {
    await runOnTestClock(tenantId, clockId, async () => {
      const begin = new Date(start.frozen_time);
      let t = begin;
      let sweptDay = '';
      while (t < to) {
        const done = t;
        const [{ at: next, dailyWork }] = await Promise.all([
          nextInstant(db, clockId, t, to),
          // The instant completed last is recorded (an advance that fails later resumes after it)
          // alongside the reads of the next one: committed before anything of the next runs.
          done > begin ? ctxAt((ctx) => recordTestClockTime(ctx, clockId, done)) : undefined,
        ]);
        const day = next.toISOString().slice(0, 10);
        const daily = day !== sweptDay || next.getTime() === to.getTime();
        if (daily) sweptDay = day;
        report.jobs += await runAt(env, handlers, clockId, next, daily ? dailyWork : []);
        report.steps += 1;
        t = next;
      }
    });
  } catch (error) {
    await ctxAt((ctx) => failTestClockAdvance(ctx, clockId));
    throw error;
  }
  const clock = (await ctxAt((ctx) => finishTestClockAdvance(ctx, clockId, to))) as TestClock;
  return { clock, report };
}
