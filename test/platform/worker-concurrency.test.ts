import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestDatabase } from '../support/database.js';
import { AppScope } from '../../src/platform/app-scope.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import type { Database } from '../../src/platform/db/database.js';
import { enqueueJob, enqueueJobs, Worker, type JobHandlers } from '../../src/platform/jobs/jobs.js';
import { createSecretBox } from '../../src/platform/secrets/secrets.js';
import { randomBytes } from 'node:crypto';

const secrets = createSecretBox(randomBytes(32));

/**
 * The started worker keeps its slots filled: a job that hangs occupies one slot, not the batch
 * it was claimed with, so jobs claimed later still run meanwhile.
 */
let database: Database;
const clock = new ManualClock('2026-04-01T00:00:00Z');
const config = loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'silent' });
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());
beforeEach(async () => {
  await database.pool.query('DELETE FROM jobs');
});

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (await condition()) return;
    await sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

async function states(kind: string): Promise<string[]> {
  const { rows } = await database.pool.query<{ state: string }>('SELECT state FROM jobs WHERE kind = $1 ORDER BY id', [kind]);
  return rows.map((r) => r.state);
}

describe('worker (started)', () => {
  it('runs jobs enqueued after a hanging one while it still hangs', async () => {
    const release = gate();
    let slowStarted = false;
    const ran: number[] = [];
    const handlers: JobHandlers = {
      'test.slow': async () => {
        slowStarted = true;
        await release.opened;
      },
      'test.fast': async (job) => {
        ran.push(job.payload.n as number);
      },
    };
    const worker = new Worker({
      env: { db: database.db, clock, config, logger, secrets, scope: new AppScope() },
      handlers,
      batchSize: 4,
      concurrency: 8,
      pollMs: 10,
    });
    await enqueueJob(database.db, clock.now(), { kind: 'test.slow' });
    worker.start();
    try {
      await until(() => slowStarted, 'the slow job to start');
      await enqueueJobs(
        database.db,
        clock.now(),
        [1, 2, 3, 4, 5, 6].map((n) => ({ kind: 'test.fast', payload: { n } })),
      );
      await until(async () => (await states('test.fast')).every((s) => s === 'done'), 'the fast jobs');
      expect(ran.sort()).toEqual([1, 2, 3, 4, 5, 6]);
      expect(await states('test.slow')).toEqual(['running']);
    } finally {
      release.open();
      await worker.stop();
    }
    // stop() waited for the job in hand.
    expect(await states('test.slow')).toEqual(['done']);
  });

  it('never runs more than `concurrency` jobs at once', async () => {
    let running = 0;
    let most = 0;
    const handlers: JobHandlers = {
      'test.busy': async () => {
        running += 1;
        most = Math.max(most, running);
        await sleep(5);
        running -= 1;
      },
    };
    const worker = new Worker({
      env: { db: database.db, clock, config, logger, secrets, scope: new AppScope() },
      handlers,
      batchSize: 4,
      concurrency: 3,
      pollMs: 10,
    });
    await enqueueJobs(
      database.db,
      clock.now(),
      Array.from({ length: 30 }, () => ({ kind: 'test.busy' })),
    );
    worker.start();
    try {
      await until(async () => (await states('test.busy')).every((s) => s === 'done'), 'all jobs');
    } finally {
      await worker.stop();
    }
    expect(most).toBeLessThanOrEqual(3);
    expect(most).toBeGreaterThan(1);
  });

  it('stop() ends an idle worker promptly and start() can run it again', async () => {
    const ran: string[] = [];
    const worker = new Worker({
      env: { db: database.db, clock, config, logger, secrets, scope: new AppScope() },
      handlers: { 'test.once': async (job) => void ran.push(job.id) },
      pollMs: 60_000,
    });
    worker.start();
    await worker.stop(); // does not wait for the 60 s poll
    await enqueueJob(database.db, clock.now(), { kind: 'test.once' });
    worker.start();
    try {
      await until(() => ran.length === 1, 'the job');
    } finally {
      await worker.stop();
    }
  });
});
