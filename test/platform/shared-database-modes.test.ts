import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { loadConfig } from '../../src/platform/config.js';
import { startTestKosh, type TestKosh } from '../support/harness.js';

/**
 * A test and a live deployment on one database (decision 0030): each one's recurring sweeps —
 * here the billing run and credit-note expiry — act on its own mode's tenants only, and each
 * mode's slot of a sweep runs even while the other mode's worker is the busier one.
 */
const ADMIN = 'admin-token-for-the-live-deployment';
let t: TestKosh;
let live: Kosh;

beforeAll(async () => {
  t = await startTestKosh();
  const config = loadConfig({
    KOSH_MODE: 'live',
    KOSH_PUBLIC_URL: 'https://kosh.example',
    KOSH_ADMIN_TOKEN: ADMIN,
    LOG_LEVEL: 'silent',
    KOSH_SECRET_KEY: randomBytes(32).toString('base64'),
  });
  live = await createKosh({ config, clock: t.clock, database: t.database, validateResponses: true, logger: pino({ level: 'silent' }) });
});
afterAll(async () => {
  await live?.close();
  await t?.close();
});

type Api = (method: string, url: string, body?: unknown) => Promise<{ status: number; text: string; body: { data: Record<string, unknown> & { id: string } } }>;

async function liveTenant(): Promise<Api> {
  const res = await live.app.inject({
    method: 'POST',
    url: '/auth/register',
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    payload: JSON.stringify({ name: 'Live Co', email: 'owner@live.example' }),
  });
  expect(res.statusCode, res.body).toBe(201);
  const key: string = res.json().data.api_key.key;
  expect(key).toMatch(/^sk_live_/);
  return async (method, url, body) => {
    const r = await live.app.inject({
      method: method as 'GET',
      url,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { payload: JSON.stringify(body) }),
    });
    return { status: r.statusCode, text: r.body, body: r.json() };
  };
}

/** A monthly subscription from the clock's now, and a general credit note that expires in a day. */
async function subscribeAndCredit(api: Api, label: string): Promise<{ subscriptionId: string; creditNoteId: string }> {
  const customer = await api('POST', '/v1/customers', { email: `${label}@customer.example`, name: label });
  expect(customer.status, customer.text).toBe(201);
  const plan = await api('POST', '/v1/plans', { name: 'Pro', code: `pro-${label}`, interval_unit: 'month', amount: 10_000, currency: 'INR' });
  expect(plan.status, plan.text).toBe(201);
  const sub = await api('POST', '/v1/subscriptions', { customer_id: customer.body.data.id, plan_id: plan.body.data.id });
  expect(sub.status, sub.text).toBe(201);
  const note = await api('POST', '/v1/credit-notes', {
    customer_id: customer.body.data.id,
    amount: 5_000,
    currency: 'INR',
    reason: 'goodwill',
    expires_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
  });
  expect(note.status, note.text).toBe(201);
  return { subscriptionId: sub.body.data.id, creditNoteId: note.body.data.id };
}

async function state(api: Api, ids: { subscriptionId: string; creditNoteId: string }) {
  const sub = await api('GET', `/v1/subscriptions/${ids.subscriptionId}`);
  const note = await api('GET', `/v1/credit-notes/${ids.creditNoteId}`);
  return { periodStart: sub.body.data.current_period_start, noteStatus: note.body.data.status };
}

describe('a test and a live deployment sharing one database', () => {
  it("run each mode's recurring sweeps on that mode's tenants only", async () => {
    const testApi = (await t.registerTenant()).api as unknown as Api;
    const liveApi = await liveTenant();
    const testIds = await subscribeAndCredit(testApi, 'test');
    const liveIds = await subscribeAndCredit(liveApi, 'live');
    const started = await state(testApi, testIds);

    t.clock.advance(32 * 86_400_000);

    // Only the live deployment's worker runs: the live subscription renews and the live note
    // expires; the test tenant's records are untouched.
    await live.worker.drain();
    expect(await state(liveApi, liveIds)).toMatchObject({ noteStatus: 'expired' });
    expect((await state(liveApi, liveIds)).periodStart).not.toBe(started.periodStart);
    expect(await state(testApi, testIds)).toEqual(started);

    // The test deployment's own slot of each sweep still exists and runs its tenants.
    await t.kosh.worker.drain();
    const after = await state(testApi, testIds);
    expect(after.noteStatus).toBe('expired');
    expect(after.periodStart).not.toBe(started.periodStart);

    const { rows } = await t.database.pool.query<{ mode: string; n: number }>(
      `SELECT mode, count(*)::int AS n FROM jobs WHERE kind = 'subscriptions.billing_run' GROUP BY mode ORDER BY mode`,
    );
    expect(rows).toEqual([
      { mode: 'live', n: 1 },
      { mode: 'test', n: 1 },
    ]);
  });
});
