import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { RATE_LIMIT_ABUSE_WINDOW_MS } from '../../src/platform/http/rate-limits.js';
import { onPostgresServer } from '../support/database.js';
import { awayFromWindowEnd } from '../support/rate-limits.js';
import { startTestKosh, toResponse, type TestKosh } from '../support/harness.js';

/**
 * DESIGN §22 "Processes" (decision 0270): two API processes on one PostgreSQL share every budget —
 * requests split across them are refused once the one budget is spent, not once each process's is.
 * The embedded database is one process and keeps its budgets in memory.
 */
const ADMIN = 'admin-token-shared-by-both-processes-in-this-test';
const env = {
  KOSH_RATE_LIMIT_KEY_PER_MINUTE: '6',
  KOSH_RATE_LIMIT_ADMIN_FAILURES: '4',
  KOSH_REGISTRATION: 'admin',
  KOSH_ADMIN_TOKEN: ADMIN,
};

describe.skipIf(!onPostgresServer)('rate-limit budgets shared by two processes', () => {
  let one: TestKosh;
  let two: Kosh;
  beforeAll(async () => {
    one = await startTestKosh({ env });
    const config = loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'silent', KOSH_SECRET_KEY: randomBytes(32).toString('base64'), ...env });
    two = await createKosh({ config, clock: one.clock, database: one.database, validateResponses: true, logger: pino({ level: 'silent' }) });
  });
  afterAll(async () => {
    await two?.close();
    await one?.close();
  });

  const onOne = async (opts: InjectOptions) => toResponse(await one.kosh.app.inject(opts));
  const onTwo = async (opts: InjectOptions) => toResponse(await two.app.inject(opts));

  it('refuses an API key once its requests on both processes spend the budget', async () => {
    const tenant = await one.registerTenant({}, { authorization: `Bearer ${ADMIN}` });
    await awayFromWindowEnd(60_000);
    const list: InjectOptions = { method: 'GET', url: '/v1/customers', headers: { authorization: `Bearer ${tenant.key}` } };
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await onOne(list)).status);
    await sleep(600); // both processes flush their counts within a flush interval (250 ms)
    for (let i = 0; i < 3; i++) statuses.push((await onTwo(list)).status);
    await sleep(600);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 200]);
    // Six of six spent: each process alone has seen three, and refuses all the same.
    const refused = [await onOne(list), await onTwo(list)];
    expect(refused.map((r) => r.status)).toEqual([429, 429]);
    expect(refused[0]!.body.error.code).toBe('rate_limited');
  });

  it('counts failed admin tokens from one address on both processes together, exactly', async () => {
    await awayFromWindowEnd(RATE_LIMIT_ABUSE_WINDOW_MS);
    const register = (token: string): InjectOptions => ({
      method: 'POST',
      url: '/auth/register',
      remoteAddress: '10.9.0.1',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      payload: JSON.stringify({ name: 'X', email: 'x@example.in' }),
    });
    const wrong = register('w'.repeat(40));
    // Four failures, alternating processes, with no pause: exact budgets count in the database.
    const statuses = [(await onOne(wrong)).status, (await onTwo(wrong)).status, (await onOne(wrong)).status, (await onTwo(wrong)).status];
    expect(statuses).toEqual([401, 401, 401, 401]);
    expect((await onOne(wrong)).status).toBe(429);
    expect((await onTwo(register(ADMIN))).status).toBe(429); // the right token too, once locked
  });
});
