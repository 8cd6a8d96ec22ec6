import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

/**
 * A receiver that never answers is cut at the real 10 s timeout, so this file takes ~10 s of real
 * time; it runs the worker as production does (started, not drained) to show that the hanging
 * request holds up no other endpoint.
 */
let t: TestKosh;
let tenant: Tenant;
let hanging: WebhookReceiver;
let healthy: WebhookReceiver;

beforeAll(async () => {
  t = await startTestKosh();
  tenant = await t.registerTenant();
  hanging = await startWebhookReceiver({ now: () => t.clock.now(), behaviour: { kind: 'hang' } });
  healthy = await startWebhookReceiver({ now: () => t.clock.now() });
});
afterAll(async () => {
  await hanging.close();
  await healthy.close();
  await t.close();
});

async function endpointFor(r: WebhookReceiver): Promise<string> {
  const res = await tenant.http.POST('/v1/webhooks', { body: { url: r.url } });
  expect(res.status).toBe(201);
  r.setSecrets([res.body.data.secret]);
  return res.body.data.id;
}

async function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms; last value ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('webhook delivery to a receiver that hangs', () => {
  it('is cut at the 10 s timeout while other endpoints keep receiving', async () => {
    const stuckId = await endpointFor(hanging);
    await endpointFor(healthy);
    t.kosh.worker.start();
    try {
      const plan = (code: string) => tenant.http.POST('/v1/plans', { body: { name: code, code, interval_unit: 'month', amount: 100, currency: 'INR' } });

      await plan('first');
      await healthy.waitForRequests(1);
      await hanging.waitForRequests(1);
      // While the first request to the hanging endpoint is still open, a later event reaches
      // the healthy endpoint: the worker did not wait for the stuck attempt.
      await plan('second');
      await healthy.waitForRequests(2);
      const stuck = (await tenant.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: stuckId } })).body.data;
      expect(stuck.at(-1)).toMatchObject({ attempts: 0, status: 'pending' }); // its first attempt is still open
      expect(hanging.openRequests()).toBeGreaterThanOrEqual(1);
      expect(healthy.received.map((r) => r.event?.data.object.code)).toEqual(['first', 'second']);

      const [, first] = await waitUntil(
        async () => (await tenant.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: stuckId } })).body.data,
        (list: Array<{ attempts: number; last_error: string | null }>) => list.length === 2 && list[1]!.attempts === 1,
      );
      expect(first).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status_code: null,
        next_retry_at: new Date(t.clock.now().getTime() + 5000).toISOString(),
      });
      expect(first!.last_error).toMatch(/timed out/);
    } finally {
      await hanging.close(); // releases the second hanging request, so stop() need not wait for it
      await t.kosh.worker.stop();
    }
  });
});
