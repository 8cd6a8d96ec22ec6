import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { gstinFor } from '../../../test/support/billing.js';
import { describeSecurity } from '../../../test/support/security.js';

let t: TestKosh;
let acme: Tenant;
let interState: string; // Maharashtra customer of a Karnataka supplier: IGST 18%
let intraState: string; // Karnataka customer: CGST 9% + SGST 9%
let counter = 0;

async function customer(tenant: Tenant, body: Record<string, unknown> = {}): Promise<string> {
  counter += 1;
  const res = await tenant.http.POST('/v1/customers', { body: { email: `q${counter}@example.in`, name: `Q ${counter}`, ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

async function quote(body: Record<string, unknown> = {}, tenant: Tenant = acme) {
  const res = await tenant.http.POST('/v1/quotes', {
    body: {
      customer_id: interState,
      currency: 'INR',
      line_items: [{ description: 'Implementation', quantity: 2, unit_amount: 50_000 }],
      ...body,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
}

async function eventCount(objectId: string, type: string): Promise<number> {
  const rows = await t.kosh.deps.db.selectFrom('events').select('id').where('object_id', '=', objectId).where('type', '=', type).execute();
  return rows.length;
}

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  interState = await customer(acme, { billing_address: { state_code: '27', country: 'IN' } });
  intraState = await customer(acme, { billing_address: { state_code: '29', country: 'IN' } });
});
afterAll(() => t.close());

describe('quotes', () => {
  describe('create', () => {
    it('accepts the formal shape (valid_until, unit_price, amount) and computes amounts, GST and total', async () => {
      const created = await quote({
        line_items: [
          { description: 'Setup', quantity: 1, unit_price: 100_000, amount: 100_000 },
          { description: 'Seats', quantity: 3, unit_price: 1_999 },
        ],
        valid_until: '2026-05-01T00:00:00Z',
        notes: 'Thanks',
        terms: 'Net 15',
      });
      expect(created).toMatchObject({
        tenant_id: acme.tenantId,
        customer_id: interState,
        status: 'draft',
        currency: 'INR',
        subtotal: 105_997,
        discount_amount: 0,
        tax_amount: 19_079, // 18% of 105 997 = 19 079.46, rounded per line: 18 000 + 1 079 (5 997 × 18% = 1 079.46)
        tax_computed: true,
        total: 125_076,
        valid_until: '2026-05-01T00:00:00.000Z',
        expires_at: '2026-05-01T00:00:00.000Z',
        notes: 'Thanks',
        terms: 'Net 15',
        invoice_id: null,
        accepted_at: null,
        declined_at: null,
      });
      expect(created.quote_number).toMatch(/^QT-\d{6}$/);
      expect(created.line_items).toEqual([
        { description: 'Setup', quantity: 1, unit_price: 100_000, unit_amount: 100_000, amount: 100_000, discount_amount: 0, hsn_code: null },
        { description: 'Seats', quantity: 3, unit_price: 1_999, unit_amount: 1_999, amount: 5_997, discount_amount: 0, hsn_code: null },
      ]);
      expect(await eventCount(created.id, 'quote.created')).toBe(1);
    });

    it('accepts the second shape (expires_at, unit_amount), numbers quotes in sequence and defaults validity to 30 days', async () => {
      const a = await quote({ expires_at: '2026-06-01T00:00:00+05:30' });
      expect(a.valid_until).toBe('2026-05-31T18:30:00.000Z');
      const b = await quote({ currency: undefined });
      expect(b.currency).toBe('INR');
      expect(b.valid_until).toBe('2026-05-01T00:00:00.000Z');
      expect(Number(b.quote_number.slice(3))).toBe(Number(a.quote_number.slice(3)) + 1);
    });

    it('splits a discount over the lines and charges GST on the discounted value', async () => {
      const created = await quote({
        customer_id: intraState,
        line_items: [
          { description: 'A', quantity: 1, unit_amount: 30_000 },
          { description: 'B', quantity: 1, unit_amount: 10_000 },
        ],
        discount_amount: 4_000,
      });
      expect(created.line_items.map((l: { discount_amount: number }) => l.discount_amount)).toEqual([3_000, 1_000]);
      expect(created).toMatchObject({ subtotal: 40_000, discount_amount: 4_000, tax_amount: 6_480, total: 42_480 });
    });

    it('keeps a tax_amount the caller gives', async () => {
      const created = await quote({ tax_amount: 1_234, discount_amount: 234 });
      expect(created).toMatchObject({ subtotal: 100_000, tax_amount: 1_234, tax_computed: false, total: 101_000 });
    });

    it('issues from another entity with that entity’s own quote series', async () => {
      const entity = await acme.http.POST('/v1/entities', { body: { name: 'Second', invoice_prefix: 'SEC-', state_code: '27' } });
      expect(entity.status).toBe(201);
      const created = await quote({ entity_id: entity.body.data.id });
      expect(created).toMatchObject({ entity_id: entity.body.data.id, quote_number: 'QT-000001' });
    });

    it.each([
      ['no line items', { line_items: [] }, 'line_items'],
      ['a line without a unit price', { line_items: [{ description: 'x', quantity: 1 }] }, 'line_items.0.unit_amount'],
      ['a line without a description', { line_items: [{ quantity: 1, unit_amount: 1 }] }, 'line_items.0.description'],
      ['quantity 0', { line_items: [{ description: 'x', quantity: 0, unit_amount: 1 }] }, 'line_items.0.quantity'],
      ['a fractional quantity', { line_items: [{ description: 'x', quantity: 1.5, unit_amount: 1 }] }, 'line_items.0.quantity'],
      ['a negative unit price', { line_items: [{ description: 'x', quantity: 1, unit_price: -1 }] }, 'line_items.0.unit_price'],
      ['unit_price and unit_amount disagreeing', { line_items: [{ description: 'x', quantity: 1, unit_price: 1, unit_amount: 2 }] }, 'line_items.0.unit_price'],
      ['a wrong line amount', { line_items: [{ description: 'x', quantity: 2, unit_amount: 5, amount: 11 }] }, 'line_items.0.amount'],
      ['an overflowing line', { line_items: [{ description: 'x', quantity: 1_000_000, unit_amount: Number.MAX_SAFE_INTEGER }] }, 'line_items.0.amount'],
      ['a discount above the subtotal', { discount_amount: 100_001 }, 'discount_amount'],
      ['a past valid_until', { valid_until: '2026-03-31T00:00:00Z' }, 'valid_until'],
      ['a malformed valid_until', { valid_until: 'tomorrow' }, 'valid_until'],
      ['valid_until and expires_at disagreeing', { valid_until: '2026-05-01T00:00:00Z', expires_at: '2026-05-02T00:00:00Z' }, 'expires_at'],
      ['a bad customer id', { customer_id: 'x' }, 'customer_id'],
      ['a negative tax amount', { tax_amount: -5 }, 'tax_amount'],
      ['an unknown HSN', { line_items: [{ description: 'x', quantity: 1, unit_amount: 5, hsn_code: '12' }] }, 'line_items.0.hsn_code'],
    ])('refuses %s with 400 naming the field', async (_label, patch, field) => {
      const res = await acme.api('POST', '/v1/quotes', {
        customer_id: interState,
        currency: 'INR',
        line_items: [{ description: 'x', quantity: 2, unit_amount: 50_000 }],
        ...patch,
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 404 for another tenant's customer and takes no number", async () => {
      const other = await t.registerTenant();
      const res = await acme.http.POST('/v1/quotes', {
        body: { customer_id: await customer(other), line_items: [{ description: 'x', quantity: 1, unit_amount: 1 }] },
      });
      expect(res.status).toBe(404);
      const before = await quote();
      const after = await quote();
      expect(Number(after.quote_number.slice(3))).toBe(Number(before.quote_number.slice(3)) + 1);
    });
  });

  describe('accept', () => {
    it('creates and finalizes the invoice with the quoted totals and links it', async () => {
      const created = await quote({
        customer_id: intraState,
        line_items: [
          { description: 'A', quantity: 3, unit_amount: 10_001 },
          { description: 'B', quantity: 1, unit_amount: 10_000, hsn_code: '998313' },
        ],
        discount_amount: 999,
      });
      const res = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: created.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'accepted', accepted_at: t.clock.now().toISOString(), invoice_id: expect.any(String) });
      const invoice = (await acme.http.GET('/v1/invoices/{id}', { path: { id: res.body.data.invoice_id! } })).body.data;
      expect(invoice).toMatchObject({
        status: 'open',
        customer_id: intraState,
        billing_reason: 'quote',
        subtotal: created.subtotal - created.discount_amount,
        tax_amount: created.tax_amount,
        total: created.total,
        memo: `Quote ${created.quote_number}`,
      });
      expect(invoice.number).toMatch(/^INV-/);
      expect(invoice.lines.map((l: { amount: number; hsn_code: string }) => [l.amount, l.hsn_code])).toEqual([
        [30_003 - created.line_items[0]!.discount_amount, '998314'],
        [10_000 - created.line_items[1]!.discount_amount, '998313'],
      ]);
      expect(await eventCount(created.id, 'quote.accepted')).toBe(1);
    });

    it('refuses a second accept and a decline afterwards with 409, making one invoice', async () => {
      const created = await quote();
      const results = await Promise.all([1, 2, 3].map(() => acme.http.POST('/v1/quotes/{id}/accept', { path: { id: created.id } })));
      expect(results.map((r) => r.status).sort()).toEqual([200, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.error!.reason).toBe('quote_accepted');
      const invoices = await t.kosh.deps.db
        .selectFrom('invoices')
        .select('id')
        .where('tenant_id', '=', acme.tenantId)
        .where('billing_reason', '=', 'quote')
        .where('memo', '=', `Quote ${created.quote_number}`)
        .execute();
      expect(invoices).toHaveLength(1);
      const decline = await acme.http.POST('/v1/quotes/{id}/decline', { path: { id: created.id } });
      expect(decline.status).toBe(409);
    });

    it('spends the customer’s available credit on the new invoice', async () => {
      const buyer = await customer(acme, { billing_address: { state_code: '27', country: 'IN' } });
      expect((await acme.http.POST('/v1/credit-notes', { body: { customer_id: buyer, amount: 1_000_000, reason: 'prepaid' } })).status).toBe(201);
      const created = await quote({ customer_id: buyer });
      const accepted = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: created.id } });
      const invoice = (await acme.http.GET('/v1/invoices/{id}', { path: { id: accepted.body.data.invoice_id! } })).body.data;
      expect(invoice).toMatchObject({ status: 'paid', amount_credited: created.total });
    });

    it('refuses a quote past valid_until with 409 quote_expired; the job then marks it expired', async () => {
      const created = await quote({ valid_until: '2026-04-02T00:00:00Z' });
      t.clock.set('2026-04-02T00:00:00Z');
      const res = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: created.id } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('quote_expired');
      expect((await acme.http.GET('/v1/quotes/{id}', { path: { id: created.id } })).body.data.status).toBe('draft');
      await t.kosh.worker.drain();
      const expired = (await acme.http.GET('/v1/quotes/{id}', { path: { id: created.id } })).body.data;
      expect(expired).toMatchObject({ status: 'expired', expired_at: '2026-04-02T00:00:00.000Z', invoice_id: null });
      expect(await eventCount(created.id, 'quote.expired')).toBe(1);
      const again = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: created.id } });
      expect(again.error!.reason).toBe('quote_expired');
    });

    it('answers 400 for a malformed id and 404 for a missing one', async () => {
      expect((await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: 'nope' } })).status).toBe(400);
      const missing = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: '00000000-0000-7000-8000-000000000000' } });
      expect(missing.status).toBe(404);
      expect(missing.error!.message).toBe('quote not found');
    });
  });

  describe('decline', () => {
    it('declines an open quote once; a declined quote cannot be accepted', async () => {
      const created = await quote();
      const res = await acme.http.POST('/v1/quotes/{id}/decline', { path: { id: created.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'declined', declined_at: t.clock.now().toISOString() });
      expect(await eventCount(created.id, 'quote.declined')).toBe(1);
      const accept = await acme.http.POST('/v1/quotes/{id}/accept', { path: { id: created.id } });
      expect(accept.status).toBe(409);
      expect(accept.error!.reason).toBe('quote_declined');
      expect((await acme.http.POST('/v1/quotes/{id}/decline', { path: { id: created.id } })).status).toBe(409);
    });
  });

  describe('list and get', () => {
    it('filters by status and customer, newest first', async () => {
      const tenant = await t.registerTenant();
      const c = await customer(tenant);
      const first = await quote({ customer_id: c }, tenant);
      t.clock.advanceSeconds(1);
      const second = await quote({ customer_id: c }, tenant);
      await tenant.http.POST('/v1/quotes/{id}/decline', { path: { id: first.id } });
      const all = await tenant.http.GET('/v1/quotes');
      expect(all.body).toMatchObject({ object: 'list', total_count: 2, has_more: false });
      expect(all.body.data.map((q: { id: string }) => q.id)).toEqual([second.id, first.id]);
      expect((await tenant.http.GET('/v1/quotes', { query: { status: 'declined' } })).body.data.map((q: { id: string }) => q.id)).toEqual([first.id]);
      expect((await tenant.http.GET('/v1/quotes', { query: { customer_id: c, status: 'draft' } })).body.data.map((q: { id: string }) => q.id)).toEqual([
        second.id,
      ]);
      expect((await tenant.api('GET', '/v1/quotes?status=sent')).status).toBe(400);
      expect((await tenant.http.GET('/v1/quotes/{id}', { path: { id: second.id } })).body.data).toEqual(second);
      expect((await acme.http.GET('/v1/quotes/{id}', { path: { id: second.id } })).status).toBe(404);
    });
  });
});

describeSecurity('quotes', { include: (r) => r.path.startsWith('/v1/quotes') });
