/**
 * Auto top-up charges the payment method its setting names (DESIGN §23, decision 0410), over HTTP
 * against the local Razorpay-compatible server: a customer with two saved cards (recurring tokens,
 * so every debit is a mandate debit announced 24 h ahead), the default one and the one the auto
 * top-up names. The top-up is debited from the named card only; when that card is detached the
 * top-up is not bought (auto_top_up.failed) and no other card is charged; when it is detached
 * while its debit waits out the notice, nothing is debited.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRazorpayServer, type RazorpayServer } from '../support/razorpay-server.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinFor } from '../support/billing.js';

const HOUR = 3_600_000;
let server: RazorpayServer;
let t: TestKosh;
let tenant: Tenant;

beforeAll(async () => {
  server = await startRazorpayServer();
  t = await startTestKosh({ env: { KOSH_RAZORPAY_API_BASE: server.url } });
  tenant = await t.registerTenant({ gstin: gstinFor('29') });
  const res = await tenant.http.POST('/v1/gateway-connections', {
    body: {
      provider: 'razorpay',
      credentials: { key_id: server.keyId, key_secret: server.keySecret, webhook_secret: server.webhookSecret },
      currencies: ['INR'],
    },
  });
  expect(res.status, res.text).toBe(201);
});
afterAll(async () => {
  await t.close();
  await server.close();
});

type Card = { pm: string; token: string };

/** A customer in Karnataka with two saved cards: `main` (the default) and `wallet`. */
async function customerWithTwoCards(n: number): Promise<{ customer: string; main: Card; wallet: Card }> {
  const email = `${n}.topup@asha.example.in`;
  const created = await tenant.http.POST('/v1/customers', {
    body: {
      email,
      name: 'Asha Rao',
      phone: '+919900000001',
      billing_address: { state_code: '29', country: 'IN' },
    },
  });
  expect(created.status, created.text).toBe(201);
  const customer = created.body.data.id as string;
  const save = async (last4: string): Promise<Card> => {
    const { tokenId } = server.addToken({ email, contact: '+919900000001', method: 'card', network: 'Visa', last4 });
    const res = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: tokenId } });
    expect(res.status, res.text).toBe(201);
    return { pm: res.body.data.id, token: tokenId };
  };
  const main = await save('1111');
  const wallet = await save('2222');
  expect((await tenant.http.POST('/v1/customers/{id}/payment-methods/{pm_id}/default', { path: { id: customer, pm_id: main.pm } })).status).toBeLessThan(300);
  const methods = (await tenant.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data as { id: string; is_default: boolean }[];
  expect(methods.find((m) => m.is_default)?.id).toBe(main.pm);
  return { customer, main, wallet };
}

/** 10 000 of paid credit, paid offline, and an auto top-up of 20 000 below 5 000 charged to `pm`. */
async function walletWithAutoTopUp(customer: string, pm: string) {
  const grant = await tenant.http.POST('/v1/customers/{id}/credit-grants', {
    path: { id: customer },
    body: { category: 'paid', amount: 10_000, currency: 'INR' },
  });
  expect(grant.status, grant.text).toBe(201);
  const topUp = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: grant.body.data.invoice_id! } })).body.data;
  const paid = await tenant.http.POST('/v1/payments/offline', {
    body: {
      customer_id: customer,
      invoice_id: topUp.id,
      amount: topUp.amount_due,
      payment_type: 'bank_transfer',
    },
  });
  expect(paid.status, paid.text).toBe(201);
  const put = await tenant.http.PUT('/v1/customers/{id}/auto-top-up', {
    path: { id: customer },
    body: {
      enabled: true,
      threshold: 5_000,
      amount: 20_000,
      currency: 'INR',
      payment_method_id: pm,
    },
  });
  expect(put.status, put.text).toBe(200);
}

/** 6 000 of service (+ 1 080 GST), settled from the credit: 4 000 left, below the threshold. */
async function drawBelowThreshold(customer: string) {
  const res = await tenant.http.POST('/v1/invoices', {
    body: {
      customer_id: customer,
      currency: 'INR',
      lines: [{ description: 'API calls', unit_amount: 6_000 }],
      auto_finalize: true,
    },
  });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data).toMatchObject({ status: 'paid', amount_credited: 7_080 });
}

const autoGrants = async (customer: string) =>
  (
    (await tenant.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer } })).body.data as {
      name: string | null;
      status: string;
      invoice_id: string;
    }[]
  ).filter((g) => g.name === 'Auto top-up');
const debits = () => server.requests.filter((r) => r.method === 'POST' && r.path === '/v1/payments/create/recurring');

describe('auto top-up charges the payment method it names', () => {
  it('debits the named card, not the default one, after the 24-hour pre-debit notice', async () => {
    const { customer, main, wallet } = await customerWithTwoCards(1);
    await walletWithAutoTopUp(customer, wallet.pm);
    server.requests.length = 0;
    await drawBelowThreshold(customer);
    const [auto] = await autoGrants(customer);
    expect(auto).toMatchObject({ status: 'pending' });

    // The charge job starts a mandate debit on the named card: announced, nothing sent for 24 h.
    await t.kosh.worker.drain();
    const attempts = (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: auto!.invoice_id } })).body.data;
    expect(attempts).toEqual([expect.objectContaining({ status: 'pending', payment_method_id: wallet.pm })]);
    expect(attempts[0]!.charge_after).not.toBeNull();
    expect(debits()).toHaveLength(0);

    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    expect(debits().map((d) => (d.body as { token: string }).token)).toEqual([wallet.token]);
    expect(debits().some((d) => (d.body as { token: string }).token === main.token)).toBe(false);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: auto!.invoice_id } })).body.data).toMatchObject({ status: 'paid', amount_due: 0 });
    expect((await autoGrants(customer))[0]).toMatchObject({ status: 'active' });
  });

  it('buys nothing and charges no other card when the named one is detached: auto_top_up.failed says why', async () => {
    const { customer, wallet } = await customerWithTwoCards(2);
    await walletWithAutoTopUp(customer, wallet.pm);
    expect((await tenant.http.DELETE('/v1/customers/{id}/payment-methods/{pm_id}', { path: { id: customer, pm_id: wallet.pm } })).status).toBeLessThan(300);
    server.requests.length = 0;
    await drawBelowThreshold(customer);
    expect(await autoGrants(customer)).toEqual([]);
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    expect(debits()).toHaveLength(0);
    expect((await tenant.http.GET('/v1/customers/{id}/auto-top-up', { path: { id: customer } })).body.data.in_flight_invoice_id).toBeNull();
    const events = (await tenant.http.GET('/v1/events', { query: { type: 'auto_top_up.failed', limit: 10 } })).body.data as {
      data: { object: Record<string, unknown> };
    }[];
    expect(events.map((e) => e.data.object)).toContainEqual(
      expect.objectContaining({ customer_id: customer, payment_method_id: wallet.pm, failure_code: 'payment_method_unavailable' }),
    );
  });

  it('charges no other card when the named one is detached before the charge job runs: invoice.payment_failed with the reason', async () => {
    const { customer, wallet } = await customerWithTwoCards(3);
    await walletWithAutoTopUp(customer, wallet.pm);
    server.requests.length = 0;
    await drawBelowThreshold(customer);
    const [auto] = await autoGrants(customer);
    // Detached in the moment between the top-up's sale and its charge.
    expect((await tenant.http.DELETE('/v1/customers/{id}/payment-methods/{pm_id}', { path: { id: customer, pm_id: wallet.pm } })).status).toBeLessThan(300);
    await t.kosh.worker.drain();
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    expect(debits()).toHaveLength(0);
    expect((await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: auto!.invoice_id } })).body.data).toEqual([]);
    const invoice = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: auto!.invoice_id } })).body.data;
    expect(invoice).toMatchObject({ status: 'open', last_payment_error: { code: 'payment_method_unavailable' } });
    expect(invoice.last_payment_error!.message).toContain(wallet.pm);
    const failed = (await tenant.http.GET('/v1/events', { query: { type: 'invoice.payment_failed', limit: 20 } })).body.data;
    expect(failed.some((e) => e.data.object.id === auto!.invoice_id)).toBe(true);
  });

  it('debits nothing when the named card is detached while its debit waits out the notice', async () => {
    const { customer, wallet } = await customerWithTwoCards(4);
    await walletWithAutoTopUp(customer, wallet.pm);
    server.requests.length = 0;
    await drawBelowThreshold(customer);
    const [auto] = await autoGrants(customer);
    await t.kosh.worker.drain();
    expect((await tenant.http.DELETE('/v1/customers/{id}/payment-methods/{pm_id}', { path: { id: customer, pm_id: wallet.pm } })).status).toBeLessThan(300);
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    expect(debits()).toHaveLength(0);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: auto!.invoice_id } })).body.data.status).toBe('open');
  });
});
