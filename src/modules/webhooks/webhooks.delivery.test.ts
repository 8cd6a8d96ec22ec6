import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../../test/support/webhook-receiver.js';
import { emitEvent, emitEvents, type EventType } from '../../platform/events/events.js';
import type { Job } from '../../platform/jobs/jobs.js';
import { RetryJobAt } from '../../platform/jobs/jobs.js';
import { runDeliveryJob } from './webhooks.delivery.js';

let t: TestKosh;
const receivers: WebhookReceiver[] = [];

beforeAll(async () => {
  t = await startTestKosh();
});
afterEach(async () => {
  await Promise.all(receivers.splice(0).map((r) => r.close()));
});
afterAll(() => t.close());

const SECOND = 1000;
const MINUTE = 60 * SECOND;

async function receiver(): Promise<WebhookReceiver> {
  const r = await startWebhookReceiver({ now: () => t.clock.now() });
  receivers.push(r);
  return r;
}

/** A tenant with one endpoint pointing at a fresh receiver that knows the endpoint's secret. */
async function tenantWithEndpoint(body: Record<string, unknown> = {}) {
  const tenant = await t.registerTenant();
  const r = await receiver();
  const res = await tenant.http.POST('/v1/webhooks', { body: { url: r.url, ...body } });
  expect(res.status).toBe(201);
  r.setSecrets([res.body.data.secret]);
  return { tenant, receiver: r, endpoint: res.body.data as { id: string; secret: string; url: string } };
}

let planCounter = 0;
async function createPlan(tenant: Tenant): Promise<{ id: string }> {
  planCounter += 1;
  const res = await tenant.http.POST('/v1/plans', {
    body: {
      name: `Plan ${planCounter}`,
      code: `p${planCounter}`,
      interval_unit: 'month',
      amount: 1000,
      currency: 'INR',
    },
  });
  expect(res.status).toBe(201);
  return res.body.data;
}

/** Emits through the platform outbox, as any module's service does, in its own transaction. */
async function emit(tenant: Tenant, type: EventType, object: Record<string, unknown>) {
  return t.kosh.deps.db.transaction().execute((tx) => emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, type, object));
}

async function deliveries(tenant: Tenant, endpointId: string, query = '') {
  const res = await tenant.api('GET', `/v1/webhooks/${endpointId}/deliveries${query}`);
  expect(res.status).toBe(200);
  return res.body.data as Array<Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

async function onlyDelivery(tenant: Tenant, endpointId: string) {
  const list = await deliveries(tenant, endpointId);
  expect(list).toHaveLength(1);
  return list[0]!;
}

const at = (ms: number, from: Date) => new Date(from.getTime() + ms).toISOString();

describe('webhook delivery', () => {
  describe('a healthy receiver', () => {
    it('gets the event, signed so the standardwebhooks library verifies it, with the stored payload as body', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      const plan = await createPlan(tenant);
      expect(r.count()).toBe(0); // nothing is sent inside the business transaction
      await t.kosh.worker.drain();

      expect(r.received).toHaveLength(1);
      const got = r.received[0]!;
      expect(got.verifyError).toBeUndefined();
      expect(got.verified).toBe(true);
      expect(got.event).toMatchObject({ type: 'plan.created', tenant_id: tenant.tenantId, data: { object: { id: plan.id, code: expect.any(String) } } });
      expect(got.headers['webhook-id']).toBe(got.event!.id);
      expect(got.headers['x-service-signature']).toBe(got.headers['webhook-signature']);
      expect(got.headers['webhook-timestamp']).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
      expect(got.headers['content-type']).toBe('application/json');

      const stored = await tenant.http.GET('/v1/events/{id}', { path: { id: got.event!.id } });
      expect(JSON.parse(got.body)).toEqual(stored.body.data);

      const delivery = await onlyDelivery(tenant, endpoint.id);
      expect(delivery).toEqual({
        id: expect.any(String),
        tenant_id: tenant.tenantId,
        event_id: got.event!.id,
        webhook_endpoint_id: endpoint.id,
        endpoint_url: r.url,
        status: 'succeeded',
        attempts: 1,
        last_status_code: 200,
        last_error: null,
        next_retry_at: null,
        delivered_at: t.clock.now().toISOString(),
        created_at: t.clock.now().toISOString(),
        updated_at: t.clock.now().toISOString(),
      });
      expect(got.headers['x-kosh-delivery-id']).toBe(delivery.id);
      const byEvent = await tenant.http.GET('/v1/events/{id}/deliveries', { path: { id: got.event!.id } });
      expect(byEvent.body.data).toEqual([delivery]);
    });

    it('signs with a secret the library accepts on its own terms (whsec_ + base64 of at least 24 bytes)', async () => {
      const { endpoint } = await tenantWithEndpoint();
      expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(endpoint.secret.slice(6), 'base64').length).toBeGreaterThanOrEqual(24);
      expect(() => new Webhook(endpoint.secret)).not.toThrow();
    });

    it('creates nothing when the emitting transaction rolls back', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      await expect(
        t.kosh.deps.db.transaction().execute(async (tx) => {
          await emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, 'plan.created', { id: randomUUID() });
          throw new Error('business rule failed');
        }),
      ).rejects.toThrow('business rule failed');
      await t.kosh.worker.drain();
      expect(r.count()).toBe(0);
      expect(await deliveries(tenant, endpoint.id)).toEqual([]);
      expect((await tenant.http.GET('/v1/events')).body.total_count).toBe(0);
    });
  });

  describe('a failing receiver', () => {
    it('is retried 5 s, 5 min, 30 min and 2 h after creation, then the delivery is failed; redelivery succeeds once it heals', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.behave({ kind: 'fail', status: 500 });
      const created = t.clock.now();
      await createPlan(tenant);

      await t.kosh.worker.drain();
      let d = await onlyDelivery(tenant, endpoint.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 500, next_retry_at: at(5 * SECOND, created), delivered_at: null });
      expect(d.last_error).toContain('500');

      t.clock.advance(4 * SECOND); // not yet due
      await t.kosh.worker.drain();
      expect((await onlyDelivery(tenant, endpoint.id)).attempts).toBe(1);

      const schedule = [
        [5 * SECOND, 2, 5 * MINUTE],
        [5 * MINUTE, 3, 30 * MINUTE],
        [30 * MINUTE, 4, 120 * MINUTE],
      ] as const;
      for (const [due, attempts, next] of schedule) {
        t.clock.set(at(due, created));
        await t.kosh.worker.drain();
        d = await onlyDelivery(tenant, endpoint.id);
        expect(d).toMatchObject({ status: 'pending', attempts, last_status_code: 500, next_retry_at: at(next, created) });
      }

      t.clock.set(at(120 * MINUTE, created));
      await t.kosh.worker.drain();
      d = await onlyDelivery(tenant, endpoint.id);
      expect(d).toMatchObject({ status: 'failed', attempts: 5, last_status_code: 500, next_retry_at: null, delivered_at: null });
      expect(r.count()).toBe(5);
      expect(r.received.every((x) => x.verified && x.headers['webhook-id'] === r.received[0]!.headers['webhook-id'])).toBe(true);

      t.clock.advanceDays(2); // nothing more is attempted
      await t.kosh.worker.drain();
      expect(r.count()).toBe(5);

      r.behave({ kind: 'ok' });
      const eventId = d.event_id as string;
      const redeliver = await tenant.http.POST('/v1/events/{id}/redeliver', { path: { id: eventId } });
      expect(redeliver.status).toBe(202);
      expect(redeliver.body.data.event_id).toBe(eventId);
      expect(redeliver.body.data.deliveries).toEqual([
        expect.objectContaining({ webhook_endpoint_id: endpoint.id, status: 'pending', attempts: 0, next_retry_at: t.clock.now().toISOString() }),
      ]);
      await t.kosh.worker.drain();
      expect(r.count()).toBe(6);
      expect(r.received[5]!.headers['webhook-id']).toBe(eventId); // the same message id as before

      expect((await deliveries(tenant, endpoint.id, '?status=succeeded')).map((x) => x.id)).toEqual([redeliver.body.data.deliveries[0]!.id]);
      expect((await deliveries(tenant, endpoint.id, '?status=failed')).map((x) => x.id)).toEqual([d.id]);
      expect(await deliveries(tenant, endpoint.id, '?status=pending')).toEqual([]);
      const all = await deliveries(tenant, endpoint.id);
      expect(all.map((x) => x.id)).toEqual([redeliver.body.data.deliveries[0]!.id, d.id]); // newest first
    });

    it('does not follow a redirect: a 3xx is a failed attempt', async () => {
      const elsewhere = await receiver();
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.behave({ kind: 'redirect', status: 302, location: elsewhere.url });
      await createPlan(tenant);
      await t.kosh.worker.drain();
      const d = await onlyDelivery(tenant, endpoint.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 302 });
      expect(d.last_error).toMatch(/redirect/i);
      expect(elsewhere.count()).toBe(0);
    });

    it('records a refused connection as a failed attempt without a status code', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      await r.close();
      await createPlan(tenant);
      await t.kosh.worker.drain();
      const d = await onlyDelivery(tenant, endpoint.id);
      expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status_code: null });
      expect(d.last_error).toContain('ECONNREFUSED');
    });

    it('counts a receiver that cannot verify the signature (it answers 400) as a failure', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.setSecrets([`whsec_${Buffer.alloc(32, 7).toString('base64')}`]);
      await createPlan(tenant);
      await t.kosh.worker.drain();
      expect(r.received[0]!.verified).toBe(false);
      expect(await onlyDelivery(tenant, endpoint.id)).toMatchObject({ status: 'pending', attempts: 1, last_status_code: 400 });
    });
  });

  describe('secret rotation', () => {
    it('signs with both secrets for 24 h, then with the new one only', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      const oldSecret = endpoint.secret;
      const rotatedAt = t.clock.now();
      const rotated = await tenant.http.POST('/v1/webhooks/{id}/rotate-secret', { path: { id: endpoint.id } });
      expect(rotated.status).toBe(200);
      const newSecret: string = rotated.body.data.secret;
      expect(newSecret).toMatch(/^whsec_/);
      expect(newSecret).not.toBe(oldSecret);
      expect(rotated.body.data.previous_secret_expires_at).toBe(at(24 * 60 * MINUTE, rotatedAt));
      const shown = await tenant.http.GET('/v1/webhooks/{id}', { path: { id: endpoint.id } });
      expect(shown.body.data).not.toHaveProperty('secret');
      expect(JSON.stringify(shown.body)).not.toContain(newSecret.slice(6));

      // A receiver still configured with the old secret verifies during the overlap…
      r.setSecrets([oldSecret]);
      await createPlan(tenant);
      await t.kosh.worker.drain();
      // …and so does one already switched to the new secret.
      r.setSecrets([newSecret]);
      await createPlan(tenant);
      await t.kosh.worker.drain();
      expect(r.received.map((x) => x.verified)).toEqual([true, true]);
      expect(r.received[0]!.headers['webhook-signature']!.toString().split(' ')).toHaveLength(2);

      t.clock.set(at(24 * 60 * MINUTE + SECOND, rotatedAt));
      r.setSecrets([oldSecret]);
      await createPlan(tenant);
      await t.kosh.worker.drain();
      r.setSecrets([newSecret]);
      await createPlan(tenant);
      await t.kosh.worker.drain();
      expect(r.received.map((x) => x.verified)).toEqual([true, true, false, true]);
      expect(r.received[3]!.headers['webhook-signature']!.toString().split(' ')).toHaveLength(1);
      expect((await tenant.http.GET('/v1/webhooks/{id}', { path: { id: endpoint.id } })).body.data.previous_secret_expires_at).toBeNull();
    });
  });

  describe('subscriptions', () => {
    it('sends each endpoint only the event types it subscribed to', async () => {
      const tenant = await t.registerTenant();
      const [plans, customers, everything] = [await receiver(), await receiver(), await receiver()];
      const make = async (r: WebhookReceiver, events?: string[]) => {
        const res = await tenant.api('POST', '/v1/webhooks', { url: r.url, ...(events ? { events } : {}) });
        expect(res.status).toBe(201);
        r.setSecrets([res.body.data.secret]);
        return res.body.data;
      };
      expect((await make(plans, ['plan.created'])).events).toEqual(['plan.created']);
      await make(customers, ['customer.created', 'customer.updated']);
      expect((await make(everything)).events).toEqual(['*']);

      await createPlan(tenant);
      await emit(tenant, 'customer.created', { id: randomUUID(), email: 'a@b.test' });
      await t.kosh.worker.drain();
      expect(plans.received.map((x) => x.event?.type)).toEqual(['plan.created']);
      expect(customers.received.map((x) => x.event?.type)).toEqual(['customer.created']);
      expect(everything.received.map((x) => x.event?.type).sort()).toEqual(['customer.created', 'plan.created']);

      const planEvent = plans.received[0]!.event!.id;
      expect((await tenant.http.GET('/v1/events/{id}/deliveries', { path: { id: planEvent } })).body.data).toHaveLength(2);
    });

    it('sends nothing to a disabled endpoint, and resumes when it is enabled again', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      const off = await tenant.http.PATCH('/v1/webhooks/{id}', { path: { id: endpoint.id }, body: { enabled: false } });
      expect(off.status).toBe(200);
      expect(off.body.data.enabled).toBe(false);
      await createPlan(tenant);
      await t.kosh.worker.drain();
      expect(r.count()).toBe(0);
      expect(await deliveries(tenant, endpoint.id)).toEqual([]);

      await tenant.http.PATCH('/v1/webhooks/{id}', { path: { id: endpoint.id }, body: { enabled: true } });
      await createPlan(tenant);
      await t.kosh.worker.drain();
      expect(r.count()).toBe(1);
    });

    it('does not send a delivery made before the endpoint was disabled; it records the attempt', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      await createPlan(tenant);
      await tenant.http.PATCH('/v1/webhooks/{id}', { path: { id: endpoint.id }, body: { enabled: false } });
      await t.kosh.worker.drain();
      expect(r.count()).toBe(0);
      expect(await onlyDelivery(tenant, endpoint.id)).toMatchObject({
        status: 'pending',
        attempts: 1,
        last_status_code: null,
        last_error: 'endpoint disabled; not sent',
      });
    });

    it('sends later attempts to the URL the endpoint has then', async () => {
      const { tenant, receiver: first, endpoint } = await tenantWithEndpoint();
      first.behave({ kind: 'fail', status: 503 });
      await createPlan(tenant);
      await t.kosh.worker.drain();
      const second = await receiver();
      second.setSecrets([endpoint.secret]);
      expect((await tenant.http.PATCH('/v1/webhooks/{id}', { path: { id: endpoint.id }, body: { url: second.url } })).status).toBe(200);
      t.clock.advance(5 * SECOND);
      await t.kosh.worker.drain();
      expect(second.count()).toBe(1);
      expect(await onlyDelivery(tenant, endpoint.id)).toMatchObject({ status: 'succeeded', attempts: 2, endpoint_url: second.url });
    });
  });

  describe('ordering', () => {
    it("holds an object's next event until the one before it succeeded; other objects go ahead", async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.behave({ kind: 'fail', status: 500 });
      const x = randomUUID();
      const y = randomUUID();
      const x1 = await emit(tenant, 'customer.created', { id: x, step: 1 });
      const x2 = await emit(tenant, 'customer.updated', { id: x, step: 2 });
      const y1 = await emit(tenant, 'customer.created', { id: y, step: 1 });
      await t.kosh.worker.drain();
      expect(r.received.map((q) => q.event!.id).sort()).toEqual([x1.id, y1.id].sort());
      const held = (await tenant.http.GET('/v1/events/{id}/deliveries', { path: { id: x2.id } })).body.data[0];
      expect(held).toMatchObject({ status: 'pending', attempts: 0, next_retry_at: null });

      r.behave({ kind: 'ok' });
      t.clock.advance(5 * SECOND);
      await t.kosh.worker.drain();
      const order = r.received.filter((q) => q.event!.data.object.id === x).map((q) => [q.event!.id, q.answered]);
      expect(order).toEqual([
        [x1.id, 500],
        [x1.id, 200],
        [x2.id, 200],
      ]);
      expect((await deliveries(tenant, endpoint.id, '?status=succeeded')).length).toBe(3);
    });

    it('keeps the order inside one emitEvents batch too', async () => {
      const { tenant, receiver: r } = await tenantWithEndpoint();
      const x = randomUUID();
      const [first, second, other] = await t.kosh.deps.db.transaction().execute((tx) =>
        emitEvents({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, [
          { type: 'customer.created', object: { id: x } },
          { type: 'customer.updated', object: { id: x } },
          { type: 'customer.created', object: { id: randomUUID() } },
        ]),
      );
      const state = async (eventId: string) => (await tenant.http.GET('/v1/events/{id}/deliveries', { path: { id: eventId } })).body.data[0];
      expect(await state(first!.id)).toMatchObject({ next_retry_at: t.clock.now().toISOString() });
      expect(await state(second!.id)).toMatchObject({ next_retry_at: null, attempts: 0 });
      expect(await state(other!.id)).toMatchObject({ next_retry_at: t.clock.now().toISOString() });
      await t.kosh.worker.drain();
      expect(r.received.filter((q) => q.event!.data.object.id === x).map((q) => q.event!.id)).toEqual([first!.id, second!.id]);
      expect((await state(second!.id))!.status).toBe('succeeded');
    });

    it("sends every event of an object, in the order they were made, when their transactions' clocks disagree (two overlapping billing runs)", async () => {
      // A billing run cut by a failover is retried while the next minute's run starts: both renew
      // the same subscription in turn, each transaction stamped with its own run's start.
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.behave({ kind: 'fail', status: 500 });
      const x = randomUUID();
      const earlier = t.clock.now();
      const later = new Date(earlier.getTime() + 2 * SECOND);
      const emitAt = (now: Date, step: number) =>
        t.kosh.deps.db.transaction().execute((tx) => emitEvent({ tx, tenantId: tenant.tenantId, now }, 'customer.updated', { id: x, step }));
      const first = await emitAt(earlier, 1);
      const second = await emitAt(later, 2);
      const third = await emitAt(earlier, 3);
      await t.kosh.worker.drain();
      r.behave({ kind: 'ok' });
      for (let i = 0; i < 3; i++) {
        t.clock.advance(5 * SECOND);
        await t.kosh.worker.drain();
      }
      const sent = r.received.filter((q) => q.answered === 200).map((q) => q.event!.id);
      expect(sent).toEqual([first.id, second.id, third.id]);
      expect((await deliveries(tenant, endpoint.id, '?status=succeeded')).length).toBe(3);
    });

    it("releases an object's next event once the one before it has finally failed", async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.behave({ kind: 'fail', status: 500 });
      const x = randomUUID();
      const first = await emit(tenant, 'customer.created', { id: x });
      const second = await emit(tenant, 'customer.updated', { id: x });
      for (const wait of [0, 5 * SECOND, 5 * MINUTE, 30 * MINUTE, 2 * 60 * MINUTE]) {
        t.clock.advance(wait);
        await t.kosh.worker.drain();
      }
      expect(r.received.map((q) => q.event!.id)).toEqual([...Array(5).fill(first.id), second.id]);
      const [next, done] = await deliveries(tenant, endpoint.id);
      expect(done).toMatchObject({ event_id: first.id, status: 'failed' });
      expect(next).toMatchObject({ event_id: second.id, status: 'pending', attempts: 1, next_retry_at: at(5 * SECOND, t.clock.now()) });
    });
  });

  describe('the delivery job', () => {
    const env = () => ({
      db: t.kosh.deps.db,
      clock: t.clock,
      config: t.config,
      logger: pino({ level: 'silent' }),
      secrets: t.kosh.deps.secrets,
      scope: t.kosh.deps.scope,
    });
    const jobOf = async (deliveryId: string) =>
      (await t.kosh.deps.db.selectFrom('jobs').selectAll().where('unique_key', '=', `webhooks.deliver:${deliveryId}`).executeTakeFirstOrThrow()) as Job;

    it('re-run after it finished (a worker that crashed before marking it done) sends and counts nothing more', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      await createPlan(tenant);
      await t.kosh.worker.drain();
      const d = await onlyDelivery(tenant, endpoint.id);
      await runDeliveryJob(await jobOf(d.id), env());
      expect(r.count()).toBe(1);
      expect(await onlyDelivery(tenant, endpoint.id)).toEqual(d);
    });

    it('re-run after an attempt was recorded asks to run again when the next attempt is due, without an attempt', async () => {
      const { tenant, receiver: r, endpoint } = await tenantWithEndpoint();
      r.behave({ kind: 'fail', status: 500 });
      await createPlan(tenant);
      await t.kosh.worker.drain();
      const d = await onlyDelivery(tenant, endpoint.id);
      const rerun = runDeliveryJob(await jobOf(d.id), env());
      await expect(rerun).rejects.toBeInstanceOf(RetryJobAt);
      await expect(rerun).rejects.toMatchObject({ runAt: new Date(d.next_retry_at) });
      expect(r.count()).toBe(1);
      expect((await onlyDelivery(tenant, endpoint.id)).attempts).toBe(1);
    });
  });
});
