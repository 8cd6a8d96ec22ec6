import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * The per-tenant cap is work-conserving (decision 0321). A deployment with one busy tenant must
 * not leave half its worker idle: tenant "Alone" has four webhook endpoints that hang and 40
 * deliveries due; the worker has 8 slots, the tenant cap is 4 and each endpoint's cap 2. With
 * nobody else's work due, Alone borrows the idle slots — all but one, kept in reserve — so 7
 * deliveries run at once, not 4. When another tenant's renewal falls due, it takes the reserve
 * slot at once.
 */
let t: TestKosh;
let receiver: WebhookReceiver;
let alone: Tenant;
let later: Tenant;

beforeAll(async () => {
  t = await startTestKosh({ env: { KOSH_WORKER_CONCURRENCY: '8', KOSH_WORKER_POLL_MS: '50' } });
  receiver = await startWebhookReceiver({ behaviour: { kind: 'hang' }, now: () => t.clock.now() });
  alone = await t.registerTenant();
  later = await t.registerTenant();
}, 60_000);
afterAll(async () => {
  receiver?.behave({ kind: 'ok' });
  await receiver?.close();
  await t?.close();
});

describe('a tenant alone borrows idle worker slots above its cap', () => {
  it('runs 7 of 8 slots for a single busy tenant, and another tenant still renews within seconds', async () => {
    const secrets: string[] = [];
    for (const path of ['a', 'b', 'c', 'd']) {
      const res = await alone.api('POST', '/v1/webhooks', { url: `${receiver.url}/${path}`, events: ['customer.created'] });
      expect(res.status, res.text).toBe(201);
      secrets.push(res.body.data.secret);
    }
    receiver.setSecrets(secrets);
    for (let i = 0; i < 10; i++) expect((await alone.api('POST', '/v1/customers', { email: `a${i}@alone.test`, name: `A ${i}` })).status).toBe(201);

    const plan = await later.api('POST', '/v1/plans', { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 10_000, currency: 'INR' });
    const customer = await later.api('POST', '/v1/customers', { email: 'payer@later.test', name: 'Payer' });
    const sub = await later.api('POST', '/v1/subscriptions', { customer_id: customer.body.data.id, plan_id: plan.body.data.id });
    expect(sub.status, sub.text).toBe(201);
    const firstPeriod = sub.body.data.current_period_start;

    t.kosh.worker.start();
    try {
      // Alone: 4 by its cap, 3 more borrowed, 1 slot kept free.
      await receiver.waitForRequests(7, 15_000);
      await sleep(500);
      expect(receiver.openRequests()).toBe(7);
      const { rows } = await t.database.pool.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM jobs WHERE state = 'running' AND kind = 'webhooks.deliver' GROUP BY concurrency_key ORDER BY 1`,
      );
      expect(Math.max(...rows.map((r) => r.n)), 'an endpoint never exceeds its own cap').toBeLessThanOrEqual(2);

      // Later's renewal falls due: the reserve slot takes it while Alone's deliveries still hang.
      t.clock.advance(32 * 86_400_000);
      const started = performance.now();
      let renewed = false;
      while (!renewed && performance.now() - started < 8_000) {
        const current = await later.api('GET', `/v1/subscriptions/${sub.body.data.id}`);
        renewed = current.body.data.current_period_start !== firstPeriod;
        if (!renewed) await sleep(100);
      }
      expect(renewed, 'the other tenant did not renew within 8 s').toBe(true);
      expect(receiver.openRequests()).toBe(7);
    } finally {
      receiver.behave({ kind: 'ok' });
      await t.kosh.worker.stop();
    }
  }, 60_000);
});
