import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';

/**
 * With only two worker slots, an endpoint may hold one of them (the per-endpoint cap, at least 1): a
 * hanging endpoint's second delivery is put off rather than taking the last slot, so the healthy
 * endpoint keeps receiving. The tenant may use both slots here (KOSH_WORKER_TENANT_CONCURRENCY), so
 * only the endpoint cap is at work (the tenant cap: src/platform/jobs, decision 0321).
 */
let t: TestKosh;
let tenant: Tenant;
let hanging: WebhookReceiver;
let healthy: WebhookReceiver;

beforeAll(async () => {
  t = await startTestKosh({ env: { KOSH_WORKER_CONCURRENCY: '2', KOSH_WORKER_TENANT_CONCURRENCY: '2' } });
  tenant = await t.registerTenant();
  hanging = await startWebhookReceiver({ now: () => t.clock.now(), behaviour: { kind: 'hang' } });
  healthy = await startWebhookReceiver({ now: () => t.clock.now() });
});
afterAll(async () => {
  await healthy.close();
  await t.close();
});

async function endpointFor(r: WebhookReceiver): Promise<string> {
  const res = await tenant.http.POST('/v1/webhooks', { body: { url: r.url } });
  r.setSecrets([res.body.data.secret]);
  return res.body.data.id;
}

describe('webhook delivery with few worker slots', () => {
  it('keeps a hanging endpoint to half the slots', async () => {
    const stuck = await endpointFor(hanging);
    await endpointFor(healthy);
    for (const code of ['one', 'two', 'three']) {
      expect((await tenant.http.POST('/v1/plans', { body: { name: code, code, interval_unit: 'month', amount: 100, currency: 'INR' } })).status).toBe(201);
    }
    t.kosh.worker.start();
    try {
      await healthy.waitForRequests(3);
      expect(hanging.count()).toBe(1);
      const list = (await tenant.http.GET('/v1/webhooks/{id}/deliveries', { path: { id: stuck } })).body.data;
      expect(list.map((d: { attempts: number; status: string }) => [d.attempts, d.status])).toEqual([
        [0, 'pending'],
        [0, 'pending'],
        [0, 'pending'],
      ]);
    } finally {
      await hanging.close(); // ends the open request at once
      await t.kosh.worker.stop();
    }
  });
});
