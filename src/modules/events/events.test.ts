import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh, withoutRequestId } from '../../../test/support/harness.js';
import { emitEvent, type EventType } from '../../platform/events/events.js';

let t: TestKosh;
let acme: Tenant;
let other: Tenant;
const start = new Date('2026-04-01T00:00:00Z');

beforeAll(async () => {
  t = await startTestKosh({});
  t.clock.set(start);
  acme = await t.registerTenant();
  other = await t.registerTenant();
});
afterAll(() => t.close());

async function emit(tenant: Tenant, type: EventType, object: Record<string, unknown>) {
  return t.kosh.deps.db.transaction().execute((tx) => emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, type, object));
}

describe('events', () => {
  // Four events an hour apart: plan.created (via the API), customer.created, customer.updated (same
  // customer), plan.created; and one of another tenant.
  let planEvent: string;
  const customer = randomUUID();
  const ids: string[] = [];
  beforeAll(async () => {
    const plan = await acme.http.POST('/v1/plans', { body: { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 49900, currency: 'INR' } });
    expect(plan.status).toBe(201);
    planEvent = (await acme.http.GET('/v1/events')).body.data[0]!.id;
    ids.push(planEvent);
    t.clock.advance(3_600_000);
    ids.push((await emit(acme, 'customer.created', { id: customer, email: 'a@example.test', nested: { b: 1, a: [1, 2] } })).id);
    t.clock.advance(3_600_000);
    ids.push((await emit(acme, 'customer.updated', { id: customer, email: 'b@example.test' })).id);
    t.clock.advance(3_600_000);
    ids.push((await emit(acme, 'plan.created', { id: randomUUID(), code: 'x' })).id);
    await emit(other, 'plan.created', { id: randomUUID() });
  });

  describe('get', () => {
    it('answers the snapshot stored at emission: { id, type, created_at, tenant_id, data: { object } }', async () => {
      const plan = (await acme.api('GET', '/v1/plans/' + (await acme.http.GET('/v1/plans')).body.data[0]!.id)).body.data;
      const res = await acme.http.GET('/v1/events/{id}', { path: { id: planEvent } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ id: planEvent, type: 'plan.created', created_at: start.toISOString(), tenant_id: acme.tenantId, data: { object: plan } });
      expect(Object.keys(res.body.data)).toEqual(['id', 'type', 'created_at', 'tenant_id', 'data']);
    });

    it('keeps the object as it was then, not as it is now', async () => {
      const res = await acme.http.GET('/v1/events/{id}', { path: { id: ids[1]! } });
      expect(res.body.data.data.object).toEqual({ id: customer, email: 'a@example.test', nested: { b: 1, a: [1, 2] } });
    });

    it("answers 404 for a missing or another tenant's event, 400 for a malformed id", async () => {
      const theirs = (await other.http.GET('/v1/events')).body.data[0]!.id;
      const foreign = await acme.http.GET('/v1/events/{id}', { path: { id: theirs } });
      const missing = await acme.http.GET('/v1/events/{id}', { path: { id: '00000000-0000-7000-8000-000000000000' } });
      expect(foreign.status).toBe(404);
      expect(withoutRequestId(foreign.text)).toBe(withoutRequestId(missing.text));
      expect(foreign.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'event not found' } });
      expect((await acme.http.GET('/v1/events/{id}', { path: { id: 'nope' } })).status).toBe(400);
    });
  });

  describe('list', () => {
    const listed = async (query = '') => {
      const res = await acme.api('GET', `/v1/events${query}`);
      expect(res.status).toBe(200);
      return res.body;
    };

    it("lists only the tenant's events, newest first", async () => {
      const body = await listed();
      expect(body).toMatchObject({ object: 'list', has_more: false, total_count: 4 });
      expect(body.data.map((e: { id: string }) => e.id)).toEqual([...ids].reverse());
    });

    it('filters by type and by object_id', async () => {
      expect((await listed('?type=plan.created')).data.map((e: { id: string }) => e.id)).toEqual([ids[3], ids[0]]);
      expect((await listed(`?object_id=${customer}`)).data.map((e: { type: string }) => e.type)).toEqual(['customer.updated', 'customer.created']);
      expect((await listed('?type=invoice.paid')).total_count).toBe(0); // documented but not emitted yet
    });

    it('filters by created[gte] and created[lte], both inclusive', async () => {
      const hour = (h: number) => new Date(start.getTime() + h * 3_600_000).toISOString();
      const between = await listed(`?created[gte]=${hour(1)}&created[lte]=${hour(2)}`);
      expect(between.data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
      expect((await listed(`?created[gte]=${hour(3)}`)).data.map((e: { id: string }) => e.id)).toEqual([ids[3]]);
      expect((await listed(`?created[lte]=${encodeURIComponent('2026-04-01T05:30:00+05:30')}`)).data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
    });

    it('pages with limit and page', async () => {
      const first = await listed('?limit=3');
      expect(first).toMatchObject({ has_more: true, total_count: 4 });
      expect(first.data).toHaveLength(3);
      const second = await listed('?limit=3&page=2');
      expect(second.data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
      expect(second.has_more).toBe(false);
      expect((await listed('?limit=5000')).data).toHaveLength(4); // capped, not refused
    });

    it.each([
      ['type=plan.exploded', 'type'],
      ['object_id=123', 'object_id'],
      ['created[gte]=yesterday', 'created[gte]'],
      ['created[lte]=2026-13-01T00:00:00Z', 'created[lte]'],
      ['created[gte]=2026-04-02T00:00:00Z&created[lte]=2026-04-01T00:00:00Z', 'created[gte]'],
      ['limit=0', 'limit'],
      ['page=0', 'page'],
    ])('refuses %s with 400 naming %s', async (q, field) => {
      const res = await acme.api('GET', `/v1/events?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field.replace(/^querystring\./, ''))).toContain(field);
    });
  });
});
