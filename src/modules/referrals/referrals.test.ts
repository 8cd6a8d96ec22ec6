import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { describeSecurity } from '../../../test/support/security.js';

let t: TestKosh;
let acme: Tenant;
let counter = 0;

async function customer(tenant: Tenant = acme): Promise<string> {
  counter += 1;
  const res = await tenant.http.POST('/v1/customers', { body: { email: `ref${counter}@example.in`, name: `Customer ${counter}` } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function refer(body: Record<string, unknown>, tenant: Tenant = acme) {
  const res = await tenant.api('POST', '/v1/referrals', body);
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function invoice(customerId: string, unit_amount = 10_000, tenant: Tenant = acme) {
  const res = await tenant.http.POST('/v1/invoices', { body: { customer_id: customerId, currency: 'INR', lines: [{ description: 'Service', unit_amount }] } });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function pay(invoiceRow: { id: string; customer_id: string; amount_due: number }, amount = invoiceRow.amount_due, tenant: Tenant = acme) {
  const res = await tenant.http.POST('/v1/payments/offline', {
    body: {
      customer_id: invoiceRow.customer_id,
      invoice_id: invoiceRow.id,
      payment_type: 'bank_transfer',
      amount,
    },
  });
  expect(res.status, res.text).toBe(201);
}

async function referral(id: string, tenant: Tenant = acme) {
  const res = await tenant.http.GET('/v1/referrals/{id}', { path: { id } });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function creditNotesOf(customerId: string, tenant: Tenant = acme) {
  const res = await tenant.http.GET('/v1/credit-notes', { query: { customer_id: customerId } });
  return res.body.data as { id: string; amount: number; status: string; currency: string; reason: string }[];
}

async function eventCount(tenantId: string, objectId: string, type: string): Promise<number> {
  const rows = await t.kosh.deps.db
    .selectFrom('events')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('object_id', '=', objectId)
    .where('type', '=', type)
    .execute();
  return rows.length;
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  expect((await acme.http.PATCH('/v1/settings', { body: { referral_reward_amount: 50_000 } })).status).toBe(200);
});
afterAll(() => t.close());

describe('referrals', () => {
  describe('create', () => {
    it('creates a pending referral with the tenant default reward, the base currency and a 30-day window', async () => {
      const [referrer, referred] = [await customer(), await customer()];
      const created = await refer({ referrer_id: referrer, referred_id: referred });
      expect(created).toMatchObject({
        tenant_id: acme.tenantId,
        referrer_id: referrer,
        referred_id: referred,
        status: 'pending',
        reward_amount: 50_000,
        currency: 'INR',
        reward_credited: false,
        credit_note_id: null,
        qualified_at: null,
        completed_at: null,
        created_at: t.clock.now().toISOString(),
        expires_at: new Date(t.clock.now().getTime() + 30 * 86_400_000).toISOString(),
      });
      expect(created.code).toMatch(/^REF-[2-9A-HJ-NP-Z]{8}$/);
      expect(await eventCount(acme.tenantId, created.id, 'referral.created')).toBe(1);
    });

    it('takes an explicit reward and currency, and the window from referral_window_days', async () => {
      const tenant = await t.registerTenant();
      expect((await tenant.http.PATCH('/v1/settings', { body: { referral_window_days: 7 } })).status).toBe(200);
      const created = await refer({ referrer_id: await customer(tenant), referred_id: await customer(tenant), reward_amount: 1_234, currency: 'usd' }, tenant);
      expect(created).toMatchObject({ reward_amount: 1_234, currency: 'USD', expires_at: new Date(t.clock.now().getTime() + 7 * 86_400_000).toISOString() });
    });

    it('refuses a second live referral of the same customer with 409', async () => {
      const referred = await customer();
      await refer({ referrer_id: await customer(), referred_id: referred });
      const again = await acme.http.POST('/v1/referrals', { body: { referrer_id: await customer(), referred_id: referred } });
      expect(again.status).toBe(409);
      expect(again.error!.reason).toBe('already_referred');
    });

    it.each([
      ['self-referral', (a: string) => ({ referrer_id: a, referred_id: a }), 'referred_id'],
      ['a bad referrer id', (a: string) => ({ referrer_id: 'x', referred_id: a }), 'referrer_id'],
      ['a negative reward', (a: string, b: string) => ({ referrer_id: a, referred_id: b, reward_amount: -1 }), 'reward_amount'],
      ['a fractional reward', (a: string, b: string) => ({ referrer_id: a, referred_id: b, reward_amount: 1.5 }), 'reward_amount'],
      ['a bad currency', (a: string, b: string) => ({ referrer_id: a, referred_id: b, currency: 'RS' }), 'currency'],
      ['no referred customer', (a: string) => ({ referrer_id: a }), 'referred_id'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/referrals', body(await customer(), await customer()));
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 404 for another tenant's customer", async () => {
      const other = await t.registerTenant();
      const res = await acme.http.POST('/v1/referrals', { body: { referrer_id: await customer(), referred_id: await customer(other) } });
      expect(res.status).toBe(404);
      expect(res.error!.message).toBe('customer not found');
    });
  });

  describe('completion', () => {
    it("completes on the referred customer's first paid invoice and credits the referrer once", async () => {
      const [referrer, referred] = [await customer(), await customer()];
      const created = await refer({ referrer_id: referrer, referred_id: referred });
      t.clock.advanceDays(10);
      const first = await invoice(referred);
      await pay(first, 1_000); // a part payment is not a paid invoice
      expect((await referral(created.id)).status).toBe('pending');
      await pay({ ...first, amount_due: first.amount_due - 1_000 });

      const done = await referral(created.id);
      expect(done).toMatchObject({
        status: 'completed',
        reward_credited: true,
        qualifying_invoice_id: first.id,
        completed_at: t.clock.now().toISOString(),
        qualified_at: t.clock.now().toISOString(),
      });
      const notes = await creditNotesOf(referrer);
      expect(notes).toEqual([
        expect.objectContaining({ id: done.credit_note_id, amount: 50_000, status: 'issued', currency: 'INR', reason: `Referral reward (${created.code})` }),
      ]);

      await pay(await invoice(referred));
      expect(await creditNotesOf(referrer)).toHaveLength(1);
      expect(await eventCount(acme.tenantId, created.id, 'referral.completed')).toBe(1);
    });

    it('does not complete after the window, and the job expires it', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer() });
      const inv = await invoice(created.referred_id);
      t.clock.advanceDays(30);
      await pay(inv);
      expect((await referral(created.id)).status).toBe('pending');
      await t.kosh.worker.drain();
      const expired = await referral(created.id);
      expect(expired).toMatchObject({ status: 'expired', expired_at: t.clock.now().toISOString(), reward_credited: false });
      expect(await creditNotesOf(created.referrer_id)).toEqual([]);
      expect(await eventCount(acme.tenantId, created.id, 'referral.expired')).toBe(1);
    });

    it('leaves referrals inside their window pending when the job runs', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer() });
      t.clock.advanceDays(29);
      await t.kosh.worker.drain();
      expect((await referral(created.id)).status).toBe('pending');
    });

    it('does not count an invoice settled entirely by credit as a payment', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer() });
      const goodwill = await acme.http.POST('/v1/credit-notes', { body: { customer_id: created.referred_id, amount: 1_000_000, reason: 'goodwill' } });
      expect(goodwill.status).toBe(201);
      const inv = await invoice(created.referred_id); // finalization spends the credit
      expect(inv.status).toBe('paid');
      expect(inv.amount_paid).toBe(0);
      expect((await referral(created.id)).status).toBe('pending');
    });

    it('completes without a credit note when the reward is zero', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer(), reward_amount: 0 });
      await pay(await invoice(created.referred_id));
      expect(await referral(created.id)).toMatchObject({ status: 'completed', reward_credited: false, credit_note_id: null });
      expect(await creditNotesOf(created.referrer_id)).toEqual([]);
    });

    it('leaves the reward pending approval under credit-note governance', async () => {
      const tenant = await t.registerTenant();
      expect((await tenant.http.PATCH('/v1/settings', { body: { credit_note_approval_required: true } })).status).toBe(200);
      const created = await refer({ referrer_id: await customer(tenant), referred_id: await customer(tenant), reward_amount: 700 }, tenant);
      await pay(await invoice(created.referred_id, 5_000, tenant), undefined, tenant);
      expect(await referral(created.id, tenant)).toMatchObject({ status: 'completed', reward_credited: true });
      expect(await creditNotesOf(created.referrer_id, tenant)).toEqual([expect.objectContaining({ amount: 700, status: 'pending_approval' })]);
    });

    it('credits once when two invoices of the referred customer are paid at the same time', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer() });
      const [a, b] = [await invoice(created.referred_id), await invoice(created.referred_id)];
      await Promise.all([pay(a), pay(b)]);
      const done = await referral(created.id);
      expect(done.status).toBe('completed');
      expect([a.id, b.id]).toContain(done.qualifying_invoice_id);
      expect(await creditNotesOf(created.referrer_id)).toHaveLength(1);
    });
  });

  describe('cancel', () => {
    it('cancels a pending referral once; a canceled one is never completed', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer() });
      const res = await acme.http.POST('/v1/referrals/{id}/cancel', { path: { id: created.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'canceled', canceled_at: t.clock.now().toISOString() });
      const again = await acme.http.POST('/v1/referrals/{id}/cancel', { path: { id: created.id } });
      expect(again.status).toBe(409);
      expect(again.error!.reason).toBe('referral_canceled');
      await pay(await invoice(created.referred_id));
      expect((await referral(created.id)).status).toBe('canceled');
      expect(await creditNotesOf(created.referrer_id)).toEqual([]);
      // The customer may be referred again once the old referral is canceled.
      await refer({ referrer_id: await customer(), referred_id: created.referred_id });
    });

    it('refuses to cancel a completed referral', async () => {
      const created = await refer({ referrer_id: await customer(), referred_id: await customer() });
      await pay(await invoice(created.referred_id));
      const res = await acme.http.POST('/v1/referrals/{id}/cancel', { path: { id: created.id } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('referral_completed');
    });

    it('answers 400 for a malformed id and 404 for a missing one', async () => {
      expect((await acme.http.POST('/v1/referrals/{id}/cancel', { path: { id: 'x' } })).status).toBe(400);
      expect((await acme.http.POST('/v1/referrals/{id}/cancel', { path: { id: '00000000-0000-7000-8000-000000000000' } })).status).toBe(404);
    });
  });

  describe('list (SPEC 4.7)', () => {
    let tenant: Tenant;
    let referrer: string;
    const ids: string[] = [];

    beforeAll(async () => {
      tenant = await t.registerTenant();
      referrer = await customer(tenant);
      for (let i = 0; i < 7; i++) {
        ids.unshift((await refer({ referrer_id: i < 5 ? referrer : await customer(tenant), referred_id: await customer(tenant) }, tenant)).id);
        t.clock.advanceSeconds(1);
      }
      expect((await tenant.http.POST('/v1/referrals/{id}/cancel', { path: { id: ids[0]! } })).status).toBe(200);
    });

    it('lists newest first with meta and the list fields, 50 per page by default', async () => {
      const res = await tenant.http.GET('/v1/referrals');
      expect(res.status).toBe(200);
      expect(res.body.data.map((r: { id: string }) => r.id)).toEqual(ids);
      expect(res.body).toMatchObject({ object: 'list', has_more: false, total_count: 7, meta: { page: 1, per_page: 50, total: 7, total_pages: 1 } });
    });

    it.each([
      ['per_page=3&page=2', [3, 6], { page: 2, per_page: 3, total: 7, total_pages: 3 }, true],
      ['limit=3&page=3', [6, 7], { page: 3, per_page: 3, total: 7, total_pages: 3 }, false],
      ['limit=2&offset=3', [3, 5], { page: 2, per_page: 2, total: 7, total_pages: 4 }, true],
      ['limit=2&page=4&offset=1', [1, 3], { page: 1, per_page: 2, total: 7, total_pages: 4 }, true],
      ['limit=1000', [0, 7], { page: 1, per_page: 250, total: 7, total_pages: 1 }, false],
      ['offset=100', [7, 7], { page: 3, per_page: 50, total: 7, total_pages: 1 }, false],
    ])('pages with %s', async (query, [from, to], meta, hasMore) => {
      const res = await tenant.api('GET', `/v1/referrals?${query}`);
      expect(res.status).toBe(200);
      expect(res.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(from, to));
      expect(res.body.meta).toEqual(meta);
      expect(res.body.has_more).toBe(hasMore);
    });

    it('pages with starting_after and ending_before, keeping the meta block', async () => {
      const next = await tenant.http.GET('/v1/referrals', { query: { limit: 2, starting_after: ids[1] } });
      expect(next.status, next.text).toBe(200);
      expect(next.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(2, 4));
      expect(next.body).toMatchObject({ has_more: true, total_count: 7, meta: { page: 1, per_page: 2, total: 7, total_pages: 4 } });
      const last = await tenant.http.GET('/v1/referrals', { query: { limit: 2, starting_after: ids[4] } });
      expect(last.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(5, 7));
      expect(last.body.has_more).toBe(false);
      const previous = await tenant.http.GET('/v1/referrals', { query: { limit: 2, ending_before: ids[3] } });
      expect(previous.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(1, 3));
      expect(previous.body.has_more).toBe(true);
      expect((await tenant.http.GET('/v1/referrals', { query: { starting_after: ids[0], ending_before: ids[1] } })).status).toBe(400);
      expect((await tenant.http.GET('/v1/referrals', { query: { starting_after: 'nope' } })).status).toBe(400);
    });

    it('filters by status and referrer', async () => {
      const canceled = await tenant.http.GET('/v1/referrals', { query: { status: 'canceled' } });
      expect(canceled.body.data.map((r: { id: string }) => r.id)).toEqual([ids[0]]);
      const byReferrer = await tenant.http.GET('/v1/referrals', { query: { referrer_id: referrer } });
      expect(byReferrer.body.data.map((r: { id: string }) => r.id)).toEqual(ids.slice(2));
      expect(byReferrer.body.meta.total).toBe(5);
    });

    it.each(['per_page=0', 'per_page=251', 'page=0', 'offset=-1', 'limit=0', 'limit=x', 'status=won', 'referrer_id=nope'])(
      'refuses %s with 400',
      async (query) => {
        const res = await tenant.api('GET', `/v1/referrals?${query}`);
        expect(res.status).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
      },
    );
  });
});

describeSecurity('referrals', { include: (r) => r.path.startsWith('/v1/referrals') });
