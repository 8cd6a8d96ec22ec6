import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestDatabase, onPostgresServer } from '../support/database.js';
import { AppScope } from '../../src/platform/app-scope.js';
import { ManualClock, systemClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { openDatabase, type Database } from '../../src/platform/db/database.js';
import {
  enqueueJob,
  enqueueJobs,
  FINISHED_JOB_RETENTION_MS,
  purgeFinishedJobs,
  RetryJobAt,
  Worker,
  type Job,
  type JobHandlers,
} from '../../src/platform/jobs/jobs.js';
import { createSecretBox } from '../../src/platform/secrets/secrets.js';
import { randomBytes } from 'node:crypto';

const secrets = createSecretBox(randomBytes(32));

/** The jobs queue on a real database: the outbox's delivery guarantees rest on these. */

let database: Database & { url?: string };
const clock = new ManualClock('2026-04-01T00:00:00Z');
const config = loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'silent' });
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());
// Each test owns the queue: a worker claims every due job, whatever its kind.
beforeEach(async () => {
  await database.pool.query('DELETE FROM jobs');
});

function worker(handlers: JobHandlers, db: Database = database) {
  return new Worker({ env: { db: db.db, clock, config, logger, secrets, scope: new AppScope() }, handlers });
}

type Row = Pick<Job, 'id' | 'kind' | 'state' | 'attempts' | 'max_attempts' | 'last_error' | 'tenant_id'> & { run_at: Date; payload: unknown };

async function rows(kind?: string): Promise<Row[]> {
  const { rows } = await database.pool.query<Row>(
    `SELECT id, kind, state, attempts, max_attempts, last_error, tenant_id, run_at, payload FROM jobs ${kind ? 'WHERE kind = $1' : ''} ORDER BY id`,
    kind ? [kind] : [],
  );
  return rows;
}

const at = (ms: number) => new Date(clock.now().getTime() + ms);

describe('jobs', () => {
  describe('enqueue', () => {
    it('exists only if the enqueueing transaction commits', async () => {
      await expect(
        database.db.transaction().execute(async (tx) => {
          await enqueueJob(tx, clock.now(), { kind: 'test.rolled_back' });
          throw new Error('the business action failed');
        }),
      ).rejects.toThrow('the business action failed');
      expect(await rows('test.rolled_back')).toEqual([]);

      await database.db.transaction().execute((tx) => enqueueJob(tx, clock.now(), { kind: 'test.committed', payload: { a: 1 } }));
      expect(await rows('test.committed')).toEqual([expect.objectContaining({ state: 'pending', attempts: 0, payload: { a: 1 } })]);
    });

    it('enqueues a job with a unique key once, however often it is asked', async () => {
      for (let i = 0; i < 3; i++) await enqueueJob(database.db, clock.now(), { kind: 'test.unique', uniqueKey: 'invoice:42:reminder' });
      await enqueueJob(database.db, clock.now(), { kind: 'test.unique', uniqueKey: 'invoice:43:reminder' });
      await enqueueJob(database.db, clock.now(), { kind: 'test.unique' });
      await enqueueJob(database.db, clock.now(), { kind: 'test.unique' });
      expect(await rows('test.unique')).toHaveLength(4);
    });
  });

  describe('run', () => {
    it('runs a due job with its payload and marks it done', async () => {
      const seen: Job[] = [];
      await enqueueJob(database.db, clock.now(), { kind: 'test.ok', tenantId: null, payload: { invoice: 'inv_1' } });
      await enqueueJob(database.db, clock.now(), { kind: 'test.ok', runAt: at(60_000), payload: { invoice: 'later' } });
      const w = worker({ 'test.ok': async (job) => void seen.push(job) });

      expect(await w.drain()).toBe(1);
      expect(seen.map((j) => j.payload)).toEqual([{ invoice: 'inv_1' }]);
      expect((await rows('test.ok')).map((r) => [r.state, r.attempts])).toEqual([
        ['done', 1],
        ['pending', 0],
      ]);

      clock.advance(60_000);
      expect(await w.drain()).toBe(1);
      expect(seen.map((j) => j.payload)).toEqual([{ invoice: 'inv_1' }, { invoice: 'later' }]);
    });

    it('retries a failing job with exponential backoff, then marks it dead with the last error', async () => {
      let calls = 0;
      await enqueueJob(database.db, clock.now(), { kind: 'test.fail', maxAttempts: 3 });
      const w = worker({
        'test.fail': async () => {
          calls += 1;
          throw new Error(`smtp refused (attempt ${calls})`);
        },
      });

      await w.drain();
      let [job] = await rows('test.fail');
      expect(job).toMatchObject({ state: 'pending', attempts: 1, last_error: 'smtp refused (attempt 1)' });
      expect(job!.run_at).toEqual(at(1000));

      clock.advance(999);
      expect(await w.drain()).toBe(0); // not due yet
      clock.advance(1);
      expect(await w.drain()).toBe(1);
      [job] = await rows('test.fail');
      expect(job).toMatchObject({ state: 'pending', attempts: 2, last_error: 'smtp refused (attempt 2)' });
      expect(job!.run_at).toEqual(at(2000));

      clock.advance(2000);
      await w.drain();
      [job] = await rows('test.fail');
      expect(job).toMatchObject({ state: 'dead', attempts: 3, last_error: 'smtp refused (attempt 3)' });

      clock.advanceDays(30);
      expect(await w.drain()).toBe(0);
      expect(calls).toBe(3);
    });

    it('retries at the time a handler asks for with RetryJobAt', async () => {
      await enqueueJob(database.db, clock.now(), { kind: 'test.retry_at' });
      const when = at(3_600_000);
      const w = worker({
        'test.retry_at': async () => {
          throw new RetryJobAt(when, 'rate limited');
        },
      });
      await w.drain();
      expect(await rows('test.retry_at')).toEqual([expect.objectContaining({ state: 'pending', run_at: when, last_error: 'rate limited' })]);
    });

    it('fails a job of a kind nobody handles, visibly', async () => {
      await enqueueJob(database.db, clock.now(), { kind: 'test.orphan', maxAttempts: 1 });
      await worker({}).drain();
      expect(await rows('test.orphan')).toEqual([expect.objectContaining({ state: 'dead', last_error: "no handler for job kind 'test.orphan'" })]);
    });
  });

  describe('leases', () => {
    it('gives the job of a worker that stalls past its lease to another worker', async () => {
      await enqueueJob(database.db, clock.now(), { kind: 'test.lease' });
      let release!: () => void;
      const stalled = new Promise<void>((resolve) => (release = resolve));
      const runs: string[] = [];
      const first = worker({
        'test.lease': async () => {
          runs.push('first');
          await stalled; // a worker hung (or killed) mid-job
        },
      });
      const second = worker({ 'test.lease': async () => void runs.push('second') });

      const hung = first.runOnce();
      await expect.poll(() => runs).toEqual(['first']);
      expect(await rows('test.lease')).toEqual([expect.objectContaining({ state: 'running', attempts: 1 })]);

      clock.advance(60_000);
      expect(await second.runOnce()).toBe(0); // the lease still holds

      clock.advance(5 * 60_000);
      expect(await second.runOnce()).toBe(1);
      expect(runs).toEqual(['first', 'second']);
      expect(await rows('test.lease')).toEqual([expect.objectContaining({ state: 'done', attempts: 2 })]);

      release();
      await hung;
    });

    it('renews the lease while a job runs, so a job that outlasts its lease is never started twice', async () => {
      // Real time here: the lease is 300 ms and the job takes five times that.
      const LEASE = 300;
      await enqueueJob(database.db, systemClock.now(), { kind: 'test.slow' });
      const runs: string[] = [];
      const slow = new Worker({
        env: { db: database.db, clock: systemClock, config, logger, secrets, scope: new AppScope() },
        handlers: {
          'test.slow': async () => {
            runs.push('slow');
            await sleep(5 * LEASE);
          },
        },
        leaseMs: LEASE,
      });
      const other = new Worker({
        env: { db: database.db, clock: systemClock, config, logger, secrets, scope: new AppScope() },
        handlers: { 'test.slow': async () => void runs.push('other') },
        leaseMs: LEASE,
      });
      const running = slow.runOnce();
      await expect.poll(() => runs).toEqual(['slow']);
      // Another worker keeps looking (expiring stale leases and claiming) all the while.
      const deadline = Date.now() + 6 * LEASE;
      let claimedByOther = 0;
      while (Date.now() < deadline) {
        claimedByOther += await other.runOnce();
        await sleep(LEASE / 4);
      }
      await running;
      expect(claimedByOther).toBe(0);
      expect(runs).toEqual(['slow']);
      expect(await rows('test.slow')).toEqual([expect.objectContaining({ state: 'done', attempts: 1 })]);
    });
  });

  describe('concurrency', () => {
    // On the server the two workers have their own pools, as two processes would; on PGlite they
    // share its single connection, which serializes them (the check still holds, trivially).
    it('never runs one job twice when two workers drain the same queue at once', async () => {
      const second: Database = database.url ? await openDatabase({ databaseUrl: database.url, poolSize: 5 }) : database;
      try {
        const total = 300;
        await database.db.transaction().execute(async (tx) => {
          for (let i = 0; i < total; i++) await enqueueJob(tx, clock.now(), { kind: 'test.race', payload: { i } });
        });
        const runs = new Map<string, string[]>();
        const handler = (name: string) => async (job: Job) => {
          runs.set(job.id, [...(runs.get(job.id) ?? []), name]);
          await sleep(Math.random() * 3);
        };
        const a = worker({ 'test.race': handler('a') });
        const b = worker({ 'test.race': handler('b') }, second);
        await Promise.all([a.drain(), b.drain()]);

        const twice = [...runs.entries()].filter(([, by]) => by.length > 1);
        expect(twice).toEqual([]);
        expect(runs.size).toBe(total);
        const done = await rows('test.race');
        expect(done.every((r) => r.state === 'done' && r.attempts === 1)).toBe(true);
        if (onPostgresServer) {
          const byWorker = [...runs.values()].flat();
          expect(byWorker.filter((w) => w === 'a').length).toBeGreaterThan(0);
          expect(byWorker.filter((w) => w === 'b').length).toBeGreaterThan(0);
        }
      } finally {
        if (second !== database) await second.close();
      }
    });
  });

  describe('tickers', () => {
    it('runs a sweep every everyMs while started, logs a failing run and goes on, and stops with the worker; runOnce runs it first', async () => {
      const runs: number[] = [];
      const ticker = {
        name: 'test.sweep',
        everyMs: 30,
        run: async () => {
          runs.push(performance.now());
          if (runs.length === 2) throw new Error('this run fails');
        },
      };
      const env = { db: database.db, clock, config, logger, secrets, scope: new AppScope() };
      const started = new Worker({ env, handlers: {}, tickers: [ticker], pollMs: 20 });
      started.start();
      // Runs after the failing second one: the sweep goes on (waited for, however slow the machine).
      for (let waited = 0; runs.length < 4 && waited < 10_000; waited += 10) await sleep(10);
      await started.stop();
      const seen = runs.length;
      expect(seen).toBeGreaterThanOrEqual(4);
      // Each run starts at least everyMs after the one before.
      for (let i = 1; i < runs.length; i += 1) expect(runs[i]! - runs[i - 1]!).toBeGreaterThanOrEqual(25);
      await sleep(100);
      expect(runs.length).toBe(seen);
      // What tests drain: the sweep runs before the claim, and its failure is the caller's.
      const drained = new Worker({ env, handlers: {}, tickers: [{ ...ticker, run: async () => void runs.push(-1) }] });
      await drained.runOnce();
      expect(runs.at(-1)).toBe(-1);
      const failing = new Worker({ env, handlers: {}, tickers: [{ ...ticker, run: () => Promise.reject(new Error('sweep broke')) }] });
      await expect(failing.runOnce()).rejects.toThrow('sweep broke');
      // A test clock's worker runs no sweeps.
      const onClock = new Worker({
        env,
        handlers: {},
        tickers: [{ ...ticker, run: async () => void runs.push(-2) }],
        testClockId: '00000000-0000-4000-8000-000000000001',
      });
      await onClock.runOnce();
      expect(runs.at(-1)).toBe(-1);
    });
  });

  describe('purge', () => {
    it('deletes jobs done more than a week ago, in batches, and keeps everything else', async () => {
      const week = FINISHED_JOB_RETENTION_MS;
      const setState = (kind: string, state: string, updatedAgoMs: number) =>
        database.pool.query('UPDATE jobs SET state = $1, updated_at = $2 WHERE kind = $3', [state, at(-updatedAgoMs), kind]);
      await enqueueJobs(
        database.db,
        clock.now(),
        Array.from({ length: 5_003 }, () => ({ kind: 'test.old_done' })),
      );
      await enqueueJobs(database.db, clock.now(), [{ kind: 'test.recent_done' }, { kind: 'test.old_dead' }, { kind: 'test.pending' }]);
      await setState('test.old_done', 'done', week + 1);
      await setState('test.recent_done', 'done', week - 1);
      await setState('test.old_dead', 'dead', week * 2);

      expect(await purgeFinishedJobs(database.db, clock.now())).toBe(5_003);
      expect((await rows()).map((r) => `${r.kind}:${r.state}`).sort()).toEqual(['test.old_dead:dead', 'test.pending:pending', 'test.recent_done:done']);
    });
  });
});
