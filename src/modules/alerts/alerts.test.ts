import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { operations } from '../../../clients/typescript/src/schema.js';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';

/** Alerts and caps (DESIGN §23). Karnataka tenant, customers without a state: GST 18 % intra-state. */
let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ gstin: gstinFor('29') });
  const metric = await acme.http.POST('/v1/billable-metrics', { body: { code: 'api_calls', name: 'API calls', aggregation: 'count' } });
  expect(metric.status, metric.text).toBe(201);
});
afterAll(() => t.close());

let tx = 0;
/** Sends n events, then runs the worker once: its fold evaluates the usage alerts (decision 0900). */
async function ingest(customer: string, n: number) {
  const res = await acme.http.POST('/v1/usage/events/batch', {
    body: {
      events: Array.from({ length: n }, () => ({ transaction_id: `tx-${++tx}`, customer_id: customer, metric_code: 'api_calls' })),
    },
  });
  await t.kosh.worker.drain();
  return res;
}

const alert = async (body: operations['createAlert']['requestBody']['content']['application/json']) => {
  const res = await acme.http.POST('/v1/alerts', { body });
  expect(res.status, res.text).toBe(201);
  return res.body.data;
};

async function triggers(alertId: string): Promise<number> {
  const res = await acme.http.GET('/v1/events', { query: { type: 'alert.triggered', limit: 100 } });
  return res.body.data.filter((e) => e.data.object.id === alertId).length;
}

async function entitlements(customer: string) {
  const res = await acme.http.GET('/v1/customers/{id}/entitlements', { path: { id: customer } });
  expect(res.status, res.text).toBe(200);
  return res.body.data;
}

async function eventually(customer: string, expected: Record<string, unknown>) {
  const start = Date.now();
  for (;;) {
    try {
      expect(await entitlements(customer)).toMatchObject(expected);
      return;
    } catch (error) {
      if (Date.now() - start > 1_500) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

describe('alerts', () => {
  it('usage_threshold with block: triggers once per period when the worker folds the usage, blocks entitlements, lifted by archiving', async () => {
    const customer = await createCustomer(acme);
    const cap = await alert({ customer_id: customer, type: 'usage_threshold', metric_code: 'api_calls', threshold: 3, action: 'block' });
    expect((await ingest(customer, 2)).status).toBe(202);
    expect(await triggers(cap.id)).toBe(0);
    expect(await entitlements(customer)).toMatchObject({ blocked: false });
    // 2 + 2 = 4 ≥ 3: triggered by this batch's fold, once.
    await ingest(customer, 2);
    expect(await triggers(cap.id)).toBe(1);
    await eventually(customer, { blocked: true, blocked_reason: 'alert', blocked_by: cap.id });
    await ingest(customer, 5);
    expect(await triggers(cap.id)).toBe(1);
    // Archiving is a change: the block lifts within a second.
    expect((await acme.http.POST('/v1/alerts/{id}/archive', { path: { id: cap.id } })).status).toBe(200);
    await eventually(customer, { blocked: false, blocked_by: null });
  });

  it('usage_threshold triggers again in the next period (the calendar month without a subscription)', async () => {
    const customer = await createCustomer(acme);
    const notify = await alert({ customer_id: customer, type: 'usage_threshold', metric_code: 'api_calls', threshold: 1 });
    await ingest(customer, 1);
    expect(await triggers(notify.id)).toBe(1);
    t.clock.set('2026-05-01T00:00:01Z');
    await ingest(customer, 1);
    expect(await triggers(notify.id)).toBe(2);
    t.clock.set('2026-04-01T00:00:00Z');
  });

  it('spend_threshold: triggered by the invoice that crosses it, once', async () => {
    const customer = await createCustomer(acme);
    const spend = await alert({ customer_id: customer, type: 'spend_threshold', threshold: 20_000 });
    // 10 000 + 1 800 GST = 11 800 < 20 000; a second 11 800 makes 23 600 ≥ 20 000.
    await createInvoice(acme, customer, [10_000]);
    expect(await triggers(spend.id)).toBe(0);
    await createInvoice(acme, customer, [10_000]);
    expect(await triggers(spend.id)).toBe(1);
    await createInvoice(acme, customer, [10_000]);
    expect(await triggers(spend.id)).toBe(1);
  });

  it('credit_balance_below with block: a draw-down below the threshold blocks, a top-up lifts it', async () => {
    const customer = await createCustomer(acme);
    const grant = (
      await acme.http.POST('/v1/customers/{id}/credit-grants', { path: { id: customer }, body: { category: 'paid', amount: 10_000, currency: 'INR' } })
    ).body.data;
    const topUp = (await acme.http.GET('/v1/invoices/{id}', { path: { id: grant.invoice_id! } })).body.data;
    await acme.http.POST('/v1/payments/offline', {
      body: { customer_id: customer, invoice_id: topUp.id, amount: topUp.amount_due, payment_type: 'bank_transfer' },
    });
    const low = await alert({ customer_id: customer, type: 'credit_balance_below', threshold: 5_000, action: 'block' });
    expect(await triggers(low.id)).toBe(0);
    // 6 000 + 1 080 GST = 7 080, settled by 6 000 of credit + its 1 080 of top-up GST: 4 000 left < 5 000.
    await createInvoice(acme, customer, [6_000]);
    expect(await triggers(low.id)).toBe(1);
    await eventually(customer, { blocked: true, blocked_by: low.id });
    const more = (
      await acme.http.POST('/v1/customers/{id}/credit-grants', { path: { id: customer }, body: { category: 'paid', amount: 5_000, currency: 'INR' } })
    ).body.data;
    const moreInvoice = (await acme.http.GET('/v1/invoices/{id}', { path: { id: more.invoice_id! } })).body.data;
    await acme.http.POST('/v1/payments/offline', {
      body: {
        customer_id: customer,
        invoice_id: moreInvoice.id,
        amount: moreInvoice.amount_due,
        payment_type: 'bank_transfer',
      },
    });
    // 4 000 + 5 000 = 9 000 ≥ 5 000: no longer below.
    await eventually(customer, { blocked: false });
  });

  describe('bad input', () => {
    it.each([
      ['a metric that does not exist', { type: 'usage_threshold', metric_code: 'nope', threshold: 1 }, 'metric_code'],
      ['a usage alert without a metric', { type: 'usage_threshold', threshold: 1 }, 'metric_code'],
      ['a zero threshold', { type: 'spend_threshold', threshold: 0 }, 'threshold'],
      ['a negative threshold', { type: 'spend_threshold', threshold: -5 }, 'threshold'],
      ['an unknown type', { type: 'mood', threshold: 1 }, 'type'],
      ['an unknown action', { type: 'spend_threshold', threshold: 1, action: 'explode' }, 'action'],
    ])('refuses %s with 400', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/alerts', { customer_id: await createCustomer(acme), ...body });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 400 without a customer, and 404 for another tenant's customer or alert", async () => {
      expect((await acme.api('POST', '/v1/alerts', { type: 'spend_threshold', threshold: 1 })).status).toBe(400);
      const other = await t.registerTenant();
      const theirs = await createCustomer(other);
      expect((await acme.http.POST('/v1/alerts', { body: { customer_id: theirs, type: 'spend_threshold', threshold: 1 } })).status).toBe(404);
      const theirAlert = await other.http.POST('/v1/alerts', { body: { customer_id: theirs, type: 'spend_threshold', threshold: 1 } });
      expect(theirAlert.status).toBe(201);
      expect((await acme.http.POST('/v1/alerts/{id}/archive', { path: { id: theirAlert.body.data.id } })).status).toBe(404);
    });
  });
});
