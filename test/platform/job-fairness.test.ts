import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

/**
 * One tenant whose webhook endpoints never answer must not hold up anyone else's work. Tenant
 * "Stalled" has two endpoints on a receiver that hangs (each attempt waits out the 10 s attempt
 * timeout) and 30 deliveries queued; tenant "Billed" has a monthly subscription due for renewal.
 * The worker has 8 slots. Before priorities and caps the 8 slots all held Stalled's hanging
 * deliveries (claimed first: they were due first), and the billing run waited behind 30 deliveries
 * × 10 s / 8 slots ≈ 40 s. Now Stalled holds at most 4 slots (half of 8) and each endpoint 2 (a
 * quarter), and the billing run is claimed before deliveries: Billed renews within seconds.
 */
let t: TestKosh;
let receiver: WebhookReceiver;
let stalled: Tenant;
let billed: Tenant;

beforeAll(async () => {
  t = await startTestKosh({ env: { KOSH_WORKER_CONCURRENCY: '8', KOSH_WORKER_POLL_MS: '50' } });
  receiver = await startWebhookReceiver({ behaviour: { kind: 'hang' }, now: () => t.clock.now() });
  stalled = await t.registerTenant();
  billed = await t.registerTenant();
}, 60_000);
afterAll(async () => {
  await t?.close();
});

async function metricsText(): Promise<string> {
  return (await t.call({ method: 'GET', url: '/metrics' })).text;
}

describe('job priorities and per-tenant, per-endpoint caps', () => {
  it("a tenant whose webhook endpoints never answer does not delay another tenant's billing run", async () => {
    const secrets: string[] = [];
    for (const path of ['a', 'b']) {
      const res = await stalled.api('POST', '/v1/webhooks', { url: `${receiver.url}/${path}`, events: ['customer.created'] });
      expect(res.status, res.text).toBe(201);
      secrets.push(res.body.data.secret);
    }
    receiver.setSecrets(secrets);
    // 15 customers × 2 endpoints = 30 deliveries, due now.
    for (let i = 0; i < 15; i++) expect((await stalled.api('POST', '/v1/customers', { email: `s${i}@stalled.test`, name: `S ${i}` })).status).toBe(201);

    const plan = await billed.api('POST', '/v1/plans', { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 10_000, currency: 'INR' });
    const customer = await billed.api('POST', '/v1/customers', { email: 'payer@billed.test', name: 'Payer' });
    const sub = await billed.api('POST', '/v1/subscriptions', { customer_id: customer.body.data.id, plan_id: plan.body.data.id });
    expect(sub.status, sub.text).toBe(201);
    const firstPeriod = sub.body.data.current_period_start;

    // The deliveries are due before the renewal (they were queued a month earlier on the clock).
    t.clock.advance(32 * 86_400_000);
    t.kosh.worker.start();
    try {
      // Stalled's deliveries are hanging in the receiver: at most 4 of them (its tenant cap).
      await receiver.waitForRequests(4, 15_000);
      await sleep(300);
      expect(receiver.openRequests()).toBe(4);

      // Billed's subscription renews while Stalled's deliveries still hang.
      const started = performance.now();
      let renewed = false;
      while (!renewed && performance.now() - started < 8_000) {
        const current = await billed.api('GET', `/v1/subscriptions/${sub.body.data.id}`);
        renewed = current.body.data.current_period_start !== firstPeriod;
        if (!renewed) await sleep(100);
      }
      const waitedMs = performance.now() - started;
      expect(renewed, 'the billing run did not renew the other tenant within 8 s').toBe(true);
      expect(waitedMs).toBeLessThan(8_000);
      expect(receiver.openRequests()).toBe(4);

      // The backlog is visible: Stalled's deliveries wait in the deliveries class; /readyz says the same.
      const metrics = await metricsText();
      const waiting = Number(/kosh_job_backlog\{priority="deliveries"\} (\d+)/.exec(metrics)?.[1]);
      expect(waiting).toBeGreaterThanOrEqual(30 - 4 - 1);
      expect(metrics).toMatch(/kosh_jobs_running \d+/);
      expect(metrics).toMatch(/kosh_job_oldest_due_seconds\{priority="deliveries"\} \d+/);
      const ready = await t.call({ method: 'GET', url: '/readyz' });
      expect(ready.status).toBe(200);
      const deliveries = (ready.body.jobs.classes as { priority: string; due: number }[]).find((c) => c.priority === 'deliveries');
      expect(deliveries!.due).toBe(waiting);
      // Four running deliveries (the cap), two per endpoint.
      const { rows } = await t.database.pool.query<{ concurrency_key: string; n: number }>(
        `SELECT concurrency_key, count(*)::int AS n FROM jobs WHERE state = 'running' AND kind = 'webhooks.deliver' GROUP BY 1 ORDER BY 1`,
      );
      expect(rows.map((r) => r.n)).toEqual([2, 2]);
    } finally {
      receiver.behave({ kind: 'ok' });
      await receiver.close();
      await t.kosh.worker.stop();
    }
  }, 60_000);

  it('claims the money class before older deliveries (priority, then due time)', async () => {
    const { rows } = await t.database.pool.query<{ kind: string; priority: number }>(
      `SELECT DISTINCT kind, priority FROM jobs WHERE kind IN ('subscriptions.billing_run', 'webhooks.deliver', 'platform.purge_finished_jobs') ORDER BY priority`,
    );
    expect(rows).toEqual([
      { kind: 'subscriptions.billing_run', priority: 0 },
      { kind: 'webhooks.deliver', priority: 2 },
      { kind: 'platform.purge_finished_jobs', priority: 3 },
    ]);
  });
});
