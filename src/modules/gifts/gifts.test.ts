import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startTestKosh, type Tenant, type TestKosh, withoutRequestId } from '../../../test/support/harness.js';
import { onPostgresServer } from '../../../test/support/database.js';
import { describeSecurity } from '../../../test/support/security.js';

let t: TestKosh;
let acme: Tenant;
let buyer: string;
let monthly: { id: string };
let yearly: { id: string };

async function createCustomer(tenant: Tenant, email: string): Promise<string> {
  const res = await tenant.http.POST('/v1/customers', { body: { email, name: email.split('@')[0] } });
  expect(res.status).toBe(201);
  return res.body.data.id;
}

async function createPlan(tenant: Tenant, body: Record<string, unknown>) {
  const res = await tenant.http.POST('/v1/plans', { body: { name: 'Plan', interval_unit: 'month', amount: 10_000, currency: 'INR', ...body } });
  expect(res.status).toBe(201);
  return res.body.data;
}

async function buyGift(tenant: Tenant, body: Record<string, unknown> = {}) {
  const res = await tenant.http.POST('/v1/gifts', {
    body: {
      plan_id: monthly.id,
      buyer_customer_id: buyer,
      recipient_email: 'friend@example.in',
      duration_months: 3,
      ...body,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function invoiceOf(tenant: Tenant, id: string) {
  const res = await tenant.http.GET('/v1/invoices/{id}', { path: { id } });
  expect(res.status).toBe(200);
  return res.body.data;
}

async function payInFull(tenant: Tenant, invoiceId: string) {
  const invoice = await invoiceOf(tenant, invoiceId);
  const res = await tenant.http.POST('/v1/payments/offline', {
    body: {
      customer_id: invoice.customer_id,
      invoice_id: invoiceId,
      payment_type: 'bank_transfer',
      amount: invoice.amount_due,
    },
  });
  expect(res.status, res.text).toBe(201);
}

async function creditNotesOf(tenant: Tenant, invoiceId: string) {
  const res = await tenant.http.GET('/v1/credit-notes', { query: { invoice_id: invoiceId } });
  expect(res.status).toBe(200);
  return res.body.data as { id: string; status: string; amount: number }[];
}

async function eventTypes(tenantId: string, objectId: string): Promise<string[]> {
  const rows = await t.kosh.deps.db
    .selectFrom('events')
    .select('type')
    .where('tenant_id', '=', tenantId)
    .where('object_id', '=', objectId)
    .orderBy('id')
    .execute();
  return rows.map((r) => r.type);
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  buyer = await createCustomer(acme, 'buyer@example.in');
  monthly = await createPlan(acme, { name: 'Pro', code: 'pro', amount: 49_900, hsn_code: '998314' });
  yearly = await createPlan(acme, { name: 'Pro yearly', code: 'pro-yearly', interval_unit: 'year', amount: 499_900 });
});
afterAll(() => t.close());

describe('gifts', () => {
  describe('purchase', () => {
    it('creates a purchased gift with a readable code and an open, finalized purchase invoice priced plan × months', async () => {
      const gift = await buyGift(acme, { duration_months: 3 });
      expect(gift).toMatchObject({
        tenant_id: acme.tenantId,
        plan_id: monthly.id,
        buyer_customer_id: buyer,
        recipient_email: 'friend@example.in',
        status: 'purchased',
        duration_months: 3,
        currency: 'INR',
        amount: 149_700,
        redeemed_by_customer_id: null,
        redeemed_at: null,
        subscription_id: null,
        canceled_at: null,
      });
      expect(gift.code).toMatch(/^[2-9A-HJ-NP-Z]{4}(-[2-9A-HJ-NP-Z]{4}){3}$/);
      expect(gift.expires_at).toBe('2027-04-01T00:00:00.000Z');

      const invoice = await invoiceOf(acme, gift.invoice_id!);
      expect(invoice).toMatchObject({ status: 'open', customer_id: buyer, subtotal: 149_700, billing_reason: 'gift', currency: 'INR' });
      expect(invoice.number).toEqual(expect.any(String));
      expect(invoice.lines).toEqual([expect.objectContaining({ quantity: 1, unit_amount: 149_700, plan_id: monthly.id, hsn_code: '998314' })]);
      expect(invoice.lines[0]!.description).toBe('Gift: Pro, 3 months (for friend@example.in)');
      expect(await eventTypes(acme.tenantId, gift.id)).toEqual(['gift.purchased']);
    });

    it('prices a yearly plan by months/12, rounded half-up', async () => {
      const gift = await buyGift(acme, { plan_id: yearly.id, duration_months: 1 });
      expect(gift.amount).toBe(41_658); // 499 900 / 12 = 41 658.33
      expect((await invoiceOf(acme, gift.invoice_id!)).subtotal).toBe(41_658);
    });

    it('refuses a day or week plan, which has no monthly price', async () => {
      const weekly = await createPlan(acme, { code: 'weekly', interval_unit: 'week' });
      const res = await acme.http.POST('/v1/gifts', {
        body: { plan_id: weekly.id, buyer_customer_id: buyer, recipient_email: 'f@example.in', duration_months: 1 },
      });
      expect(res.status).toBe(400);
      expect(res.error!.details).toEqual([expect.objectContaining({ field: 'plan_id' })]);
    });

    it('chooses the price by currency, and asks for one when the plan has several and none is the base currency', async () => {
      const multi = await createPlan(acme, {
        code: 'multi',
        amount: undefined,
        currency: undefined,
        prices: [
          { amount: 1_000, currency: 'USD' },
          { amount: 900, currency: 'EUR' },
        ],
      });
      const body = { plan_id: multi.id, buyer_customer_id: buyer, recipient_email: 'f@example.in', duration_months: 2 };
      const ambiguous = await acme.http.POST('/v1/gifts', { body });
      expect(ambiguous.status).toBe(400);
      expect(ambiguous.error!.details![0]!.field).toBe('currency');
      const missing = await acme.http.POST('/v1/gifts', { body: { ...body, currency: 'GBP' } });
      expect(missing.status).toBe(400);
      // GST on a euro invoice is determined in INR (rule 34): the entity keeps a EUR rate.
      const entity = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
      expect((await acme.http.PUT('/v1/entities/{id}/exchange-rates', { path: { id: entity }, body: { currency: 'EUR', rate: '90' } })).status).toBe(200);
      const euro = await acme.http.POST('/v1/gifts', { body: { ...body, currency: 'eur' } });
      expect(euro.status).toBe(201);
      expect(euro.body.data).toMatchObject({ currency: 'EUR', amount: 1_800 });
    });

    it.each([
      ['duration_months 0', { duration_months: 0 }, 'duration_months'],
      ['duration_months 37', { duration_months: 37 }, 'duration_months'],
      ['fractional months', { duration_months: 1.5 }, 'duration_months'],
      ['a bad e-mail', { recipient_email: 'nope' }, 'recipient_email'],
      ['a bad plan id', { plan_id: 'x' }, 'plan_id'],
      ['no buyer', { buyer_customer_id: undefined }, 'buyer_customer_id'],
      ['a bad currency', { currency: 'RUPEE' }, 'currency'],
    ])('refuses %s with 400 naming the field', async (_label, patch, field) => {
      const res = await acme.api('POST', '/v1/gifts', {
        plan_id: monthly.id,
        buyer_customer_id: buyer,
        recipient_email: 'f@example.in',
        duration_months: 3,
        ...patch,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 404 for a missing or another tenant's plan or buyer, and creates nothing", async () => {
      const other = await t.registerTenant();
      const otherPlan = await createPlan(other, { code: 'theirs' });
      const otherBuyer = await createCustomer(other, 'them@example.in');
      const before = (await acme.http.GET('/v1/gifts')).body.total_count;
      const base = { plan_id: monthly.id, buyer_customer_id: buyer, recipient_email: 'f@example.in', duration_months: 1 };
      const foreignPlan = await acme.http.POST('/v1/gifts', { body: { ...base, plan_id: otherPlan.id } });
      expect(foreignPlan.status).toBe(404);
      expect(foreignPlan.error!.message).toBe('plan not found');
      const foreignBuyer = await acme.http.POST('/v1/gifts', { body: { ...base, buyer_customer_id: otherBuyer } });
      expect(foreignBuyer.status).toBe(404);
      expect((await acme.http.GET('/v1/gifts')).body.total_count).toBe(before);
    });
  });

  describe('list and get', () => {
    it('filters by status and buyer, newest first', async () => {
      const other = await createCustomer(acme, 'other-buyer@example.in');
      const a = await buyGift(acme, { buyer_customer_id: other });
      const b = await buyGift(acme, { buyer_customer_id: other });
      expect((await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: a.id } })).status).toBe(200);
      const byBuyer = await acme.http.GET('/v1/gifts', { query: { buyer_customer_id: other } });
      expect(byBuyer.body).toMatchObject({ object: 'list', total_count: 2, has_more: false });
      expect(byBuyer.body.data.map((g: { id: string }) => g.id)).toEqual([b.id, a.id]);
      const canceled = await acme.http.GET('/v1/gifts', { query: { buyer_customer_id: other, status: 'canceled' } });
      expect(canceled.body.data.map((g: { id: string }) => g.id)).toEqual([a.id]);
      expect((await acme.api('GET', '/v1/gifts?status=lost')).status).toBe(400);
      expect((await acme.http.GET('/v1/gifts', { query: { buyer_customer_id: 'nope' } })).status).toBe(400);
    });

    it('gets one gift; 404 for a missing or foreign id, 400 for a malformed one', async () => {
      const gift = await buyGift(acme);
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data).toEqual(gift);
      const other = await t.registerTenant();
      const foreign = await other.http.GET('/v1/gifts/{id}', { path: { id: gift.id } });
      const missing = await other.http.GET('/v1/gifts/{id}', { path: { id: '00000000-0000-7000-8000-000000000000' } });
      expect(foreign.status).toBe(404);
      expect(withoutRequestId(foreign.text)).toBe(withoutRequestId(missing.text));
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: 'not-a-uuid' } })).status).toBe(400);
    });
  });

  describe('cancel', () => {
    it('voids an open purchase invoice (reversing its ledger entry) and credits nothing', async () => {
      const gift = await buyGift(acme);
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        gift: expect.objectContaining({ id: gift.id, status: 'canceled', redeemed_by_customer_id: null, redeemed_at: null }),
        invoice_voided: true,
      });
      expect(res.body.data.gift.canceled_at).toBe('2026-04-01T00:00:00.000Z');
      const invoice = await invoiceOf(acme, gift.invoice_id!);
      expect(invoice.status).toBe('void');
      const journal = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: gift.invoice_id! } })).body.data;
      expect(journal.map((e: { kind: string }) => e.kind)).toEqual(['invoice.finalized', 'invoice.voided']);
      expect(await creditNotesOf(acme, gift.invoice_id!)).toEqual([]);
      expect(await eventTypes(acme.tenantId, gift.id)).toEqual(['gift.purchased', 'gift.canceled']);
    });

    it('credits the buyer the purchase amount with an issued adjustment credit note when the invoice is paid', async () => {
      const gift = await buyGift(acme);
      await payInFull(acme, gift.invoice_id!);
      const invoice = await invoiceOf(acme, gift.invoice_id!);
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(200);
      expect(res.body.data.invoice_voided).toBe(false);
      expect(res.body.data.gift.status).toBe('canceled');
      expect(res.body.data.credit_note).toMatchObject({
        customer_id: buyer,
        invoice_id: gift.invoice_id,
        type: 'adjustment',
        status: 'issued',
        amount: invoice.total,
        balance: invoice.total,
        subtotal: invoice.subtotal,
        tax_amount: invoice.tax_amount,
        reference: gift.code,
      });
      expect((await invoiceOf(acme, gift.invoice_id!)).status).toBe('paid');
      const notes = await creditNotesOf(acme, gift.invoice_id!);
      expect(notes.map((n) => n.id)).toEqual([res.body.data.credit_note!.id]);
      const entries = await t.kosh.deps.db
        .selectFrom('journal_entries')
        .select('kind')
        .where('tenant_id', '=', acme.tenantId)
        .where('reference_id', '=', res.body.data.credit_note!.id)
        .execute();
      expect(entries.map((e) => e.kind)).toEqual(['credit_note.issued']);
    });

    it('returns a pending_approval credit note under approval governance', async () => {
      const governed = await t.registerTenant();
      expect((await governed.http.PATCH('/v1/settings', { body: { credit_note_approval_required: true } })).status).toBe(200);
      const customer = await createCustomer(governed, 'g@example.in');
      const plan = await createPlan(governed, { code: 'g' });
      const bought = await governed.http.POST('/v1/gifts', {
        body: {
          plan_id: plan.id,
          buyer_customer_id: customer,
          recipient_email: 'r@example.in',
          duration_months: 1,
        },
      });
      await payInFull(governed, bought.body.data.invoice_id!);
      const res = await governed.http.POST('/v1/gifts/{id}/cancel', { path: { id: bought.body.data.id } });
      expect(res.status).toBe(200);
      expect(res.body.data.credit_note).toMatchObject({
        status: 'pending_approval',
        number: null,
        amount: (await invoiceOf(governed, bought.body.data.invoice_id!)).total,
      });
    });

    it('does nothing to an invoice that is already void, and answers 200', async () => {
      const gift = await buyGift(acme);
      expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: gift.invoice_id! } })).status).toBe(200);
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ gift: expect.objectContaining({ status: 'canceled' }), invoice_voided: false });
      expect(await creditNotesOf(acme, gift.invoice_id!)).toEqual([]);
    });

    it('only flips the status of a gift without an invoice', async () => {
      const gift = await buyGift(acme);
      // Gifts bought before invoice linking existed (imported) have none.
      await t.kosh.deps.db.updateTable('gifts').set({ invoice_id: null }).where('tenant_id', '=', acme.tenantId).where('id', '=', gift.id).execute();
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({ gift: expect.objectContaining({ status: 'canceled' }), invoice_voided: false });
      expect(res.body.data.gift).not.toHaveProperty('invoice_id');
      expect((await invoiceOf(acme, gift.invoice_id!)).status).toBe('open');
    });

    it('refuses a second cancel with 409 and changes nothing more', async () => {
      const gift = await buyGift(acme);
      await payInFull(acme, gift.invoice_id!);
      expect((await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } })).status).toBe(200);
      const again = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(again.status).toBe(409);
      expect(again.error!).toMatchObject({ code: 'conflict', reason: 'gift_canceled' });
      expect(await creditNotesOf(acme, gift.invoice_id!)).toHaveLength(1);
    });

    it('refuses a redeemed gift with 409', async () => {
      const gift = await buyGift(acme);
      const recipient = await createCustomer(acme, `r-${gift.id}@example.in`);
      await t.kosh.deps.db
        .updateTable('gifts')
        .set({ status: 'redeemed', redeemed_by_customer_id: recipient, redeemed_at: t.clock.now() })
        .where('tenant_id', '=', acme.tenantId)
        .where('id', '=', gift.id)
        .execute();
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('gift_redeemed');
      expect((await invoiceOf(acme, gift.invoice_id!)).status).toBe('open');
    });

    it('answers 400 for a malformed id and 404 for a missing or foreign one', async () => {
      const gift = await buyGift(acme);
      expect((await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: 'nope' } })).status).toBe(400);
      const other = await t.registerTenant();
      const foreign = await other.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      const missing = await other.http.POST('/v1/gifts/{id}/cancel', { path: { id: '00000000-0000-7000-8000-000000000000' } });
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'gift not found' } });
      expect(withoutRequestId(foreign.text)).toBe(withoutRequestId(missing.text));
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data.status).toBe('purchased');
    });

    it('leaves the gift purchased and nothing changed when the settlement fails', async () => {
      const gift = await buyGift(acme);
      await payInFull(acme, gift.invoice_id!);
      // Someone already credited part of the invoice, so a credit of the full purchase amount
      // is refused by the credit-note rules: the whole cancel must roll back.
      const partial = await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyer, invoice_id: gift.invoice_id, amount: 100, reason: 'goodwill' } });
      expect(partial.status).toBe(201);
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('amount_exceeds_invoice');
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data.status).toBe('purchased');
      expect(await creditNotesOf(acme, gift.invoice_id!)).toHaveLength(1);
      expect(await eventTypes(acme.tenantId, gift.id)).toEqual(['gift.purchased']);
    });

    it('refuses a partly paid open invoice with 409 and leaves the gift purchased', async () => {
      const gift = await buyGift(acme);
      const pay = await acme.http.POST('/v1/payments/offline', {
        body: { customer_id: buyer, invoice_id: gift.invoice_id, payment_type: 'cash', amount: 1_000 },
      });
      expect(pay.status).toBe(201);
      const res = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('gift_invoice_partly_paid');
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data.status).toBe('purchased');
      expect((await invoiceOf(acme, gift.invoice_id!)).status).toBe('open');
    });

    it(`lets exactly one of 20 concurrent cancels through, with one credit note${onPostgresServer ? ' (real concurrency on the server)' : ''}`, async () => {
      const gift = await buyGift(acme);
      await payInFull(acme, gift.invoice_id!);
      const results = await Promise.all(Array.from({ length: 20 }, () => acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } })));
      const statuses = results.map((r) => r.status).sort();
      expect(statuses.filter((s) => s === 200)).toHaveLength(1);
      expect(statuses.filter((s) => s === 409)).toHaveLength(19);
      for (const r of results.filter((x) => x.status === 409)) expect(r.error!.reason).toBe('gift_canceled');
      expect(await creditNotesOf(acme, gift.invoice_id!)).toHaveLength(1);
      const events = await t.kosh.deps.db
        .selectFrom('events')
        .select(sql<number>`count(*)`.as('n'))
        .where('tenant_id', '=', acme.tenantId)
        .where('object_id', '=', gift.id)
        .where('type', '=', 'gift.canceled')
        .executeTakeFirstOrThrow();
      expect(Number(events.n)).toBe(1);
    });

    it('replays an idempotent cancel instead of answering 409', async () => {
      const gift = await buyGift(acme);
      const first = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id }, headers: { 'idempotency-key': `cancel-${gift.id}` } });
      const second = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id }, headers: { 'idempotency-key': `cancel-${gift.id}` } });
      expect(first.status).toBe(200);
      expect(second.status).toBe(200);
      expect(second.headers['idempotent-replayed']).toBe('true');
      expect(second.body).toEqual(first.body);
    });
  });
});

describeSecurity('gifts', { include: (r) => r.path.startsWith('/v1/gifts') });
