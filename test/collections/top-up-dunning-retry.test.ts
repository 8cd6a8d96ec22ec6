/**
 * A dunning retry of an auto top-up's invoice charges the method the top-up names (decision 0410),
 * even when the customer has no default payment method left (decision 0570): before, the retry
 * was skipped with "no saved payment method" although the named card was there.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { signTestWebhook, TEST_SIGNATURE_HEADER } from '../../src/modules/collections/index.js';

const HOUR = 3_600_000;
let t: TestKosh;
let tenant: Tenant;
let connection: string;
const SECRET = 'whsec_top_up_retry';

beforeAll(async () => {
  t = await startTestKosh();
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
  tenant = await t.registerTenant({ gstin: gstinFor('29') });
  connection = (await ok('POST', '/v1/gateway-connections', { provider: 'test', credentials: { webhook_secret: SECRET }, currencies: ['INR'] })).id;
});
afterAll(async () => {
  await t?.close();
});

async function ok(method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, body?: unknown) {
  const res = await tenant.api(method as 'GET', url, body);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
  return res.body.data;
}

async function advance(hours: number) {
  t.clock.set(new Date(t.clock.now().getTime() + hours * HOUR));
  await t.kosh.worker.drain();
  await t.kosh.worker.drain();
}

describe('dunning an auto top-up whose charge failed', () => {
  it('retries on the named card when the default method (a UPI mandate) was revoked', async () => {
    const customer = await ok('POST', '/v1/customers', {
      email: 'wallet@dunning.test',
      name: 'Wallet Holder',
      billing_address: { state_code: '29', country: 'IN' },
    });
    const main = await ok('POST', `/v1/customers/${customer.id}/payment-methods`, { token: 'tok_upi_autopay' });
    const wallet = await ok('POST', `/v1/customers/${customer.id}/payment-methods`, { token: 'tok_chargeDeclinedInsufficientFunds' });
    await ok('POST', `/v1/customers/${customer.id}/payment-methods/${main.id}/default`);
    // 10 000 of paid credit, paid offline; an auto top-up of 20 000 below 5 000 on the wallet card.
    const grant = await ok('POST', `/v1/customers/${customer.id}/credit-grants`, { category: 'paid', amount: 10_000, currency: 'INR' });
    const sale = await ok('GET', `/v1/invoices/${grant.invoice_id}`);
    await ok('POST', '/v1/payments/offline', { customer_id: customer.id, invoice_id: sale.id, amount: sale.amount_due, payment_type: 'bank_transfer' });
    await ok('PUT', `/v1/customers/${customer.id}/auto-top-up`, {
      enabled: true,
      threshold: 5_000,
      amount: 20_000,
      currency: 'INR',
      payment_method_id: wallet.id,
    });
    // 6 000 + 18 % GST = 7 080 settled from the credit: 2 920 left, below the threshold → a top-up is sold and charged.
    const used = await ok('POST', '/v1/invoices', {
      customer_id: customer.id,
      currency: 'INR',
      lines: [{ description: 'API calls', unit_amount: 6_000 }],
      auto_finalize: true,
    });
    expect(used).toMatchObject({ status: 'paid', amount_credited: 7_080 });
    await advance(0.01);
    const grants = (await tenant.http.GET('/v1/customers/{id}/credit-grants', { path: { id: customer.id } })).body.data as {
      name: string | null;
      invoice_id: string;
    }[];
    const topUp = grants.find((g) => g.name === 'Auto top-up')!;
    expect(topUp).toBeDefined();
    const attempts = async () => (await ok('GET', `/v1/invoices/${topUp.invoice_id}/payment-attempts`)) as { status: string; payment_method_id: string }[];
    // The wallet card declined: the invoice is dunned.
    expect((await attempts()).map((a) => [a.status, a.payment_method_id])).toEqual([['failed', wallet.id]]);
    const [execution] = await ok('GET', `/v1/dunning-executions?invoice_id=${topUp.invoice_id}`);
    expect(execution).toMatchObject({ trigger_event: 'payment_failed', status: 'active' });

    // The customer revokes the UPI mandate at the bank: it is retired and nothing takes its place as default.
    const revoke = JSON.stringify({ id: 'evt_revoke_1', type: 'mandate.revoked', data: { payment_method: 'tok_upi_autopay' } });
    const hook = await t.call({
      method: 'POST',
      url: `/webhooks/gateways/test/${connection}`,
      headers: { 'content-type': 'application/json', [TEST_SIGNATURE_HEADER]: signTestWebhook(revoke, SECRET, t.clock.now()) },
      payload: revoke,
    });
    expect(hook.status, hook.text).toBe(200);
    const methods = (await ok('GET', `/v1/customers/${customer.id}/payment-methods`)) as { id: string; is_default: boolean }[];
    expect(methods.map((m) => [m.id, m.is_default])).toEqual([[wallet.id, false]]);

    await advance(25); // the 24-hour retry step
    const [after] = await ok('GET', `/v1/dunning-executions?invoice_id=${topUp.invoice_id}`);
    const retry = (after.actions as { channel: string; outcome: string; detail: string }[]).find((a) => a.channel === 'retry_payment');
    expect(retry).toMatchObject({ outcome: 'succeeded' });
    expect(retry!.detail).toContain(wallet.id);
    // A second charge of the wallet card, never of another.
    expect((await attempts()).map((a) => [a.status, a.payment_method_id])).toEqual([
      ['failed', wallet.id],
      ['failed', wallet.id],
    ]);
  });
});
