/**
 * An advance that came through a gateway goes back through it (DESIGN §20, docs/decisions/0401):
 * a hosted Stripe Checkout payment arrives for an invoice the customer has meanwhile paid by bank
 * transfer, so all of it is the customer's advance (a receipt voucher with its GST); refunding the
 * advance issues a refund voucher that reverses that GST and asks Stripe — the local
 * Stripe-compatible server, over HTTP — to refund the PaymentIntent.
 */
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startStripeServer, type StripeServer } from '../support/stripe-server.js';

let stripe: StripeServer;
let t: TestKosh;
let tenant: Tenant;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

beforeAll(async () => {
  stripe = await startStripeServer();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  t = await startTestKosh({ env: { KOSH_STRIPE_API_BASE: stripe.url, KOSH_PUBLIC_URL: base } });
  await t.kosh.app.listen({ host: '127.0.0.1', port });
  tenant = await t.registerTenant({ gstin: gstinFor('29') });
  const conn = await tenant.http.POST('/v1/gateway-connections', {
    body: {
      provider: 'stripe',
      credentials: { secret_key: stripe.secretKey, webhook_secret: stripe.webhookSecret },
      currencies: ['INR'],
    },
  });
  expect(conn.status, conn.text).toBe(201);
  stripe.hostedCheckout = { webhookUrl: `${base}/webhooks/gateways/stripe/${conn.body.data.id}`, now: () => t.clock.now() };
});
afterAll(async () => {
  await t?.close();
  await stripe?.close();
});

type Line = { account_code: number; debit: number; credit: number };
async function entry(kind: string, referenceId: string) {
  const list = (await tenant.http.GET('/v1/ledger/journal-entries', { query: { kind, limit: 1000 } })).body.data as { reference_id: string; lines: Line[] }[];
  const out: Record<number, number> = {};
  for (const l of list.find((e) => e.reference_id === referenceId)!.lines) out[l.account_code] = (out[l.account_code] ?? 0) + l.debit - l.credit;
  return out;
}

describe('refunding a gateway advance', () => {
  it('issues the refund voucher and refunds the money through Stripe', async () => {
    // ₹350 + CGST 9 % + SGST 9 % = ₹413.00, intra-state.
    const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const invoice = await createInvoice(tenant, customer, [35_000], { auto_finalize: true });
    expect(invoice.total).toBe(41_300);
    const checkout = await tenant.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: invoice.id } });
    expect(checkout.status, checkout.text).toBe(201);
    const providerPage = (await fetch(checkout.body.data.url, { redirect: 'manual' })).headers.get('location')!;
    expect(providerPage.startsWith(stripe.url)).toBe(true);
    // The customer pays by bank transfer meanwhile, then completes the Stripe page as well.
    const bank = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: customer,
        invoice_id: invoice.id,
        payment_type: 'bank_transfer',
        amount: 41_300,
      },
    });
    expect(bank.status, bank.text).toBe(201);
    expect((await fetch(providerPage, { method: 'POST', redirect: 'manual' })).status).toBe(303);
    await t.kosh.worker.drain();

    const card = (
      (await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data as {
        id: string;
        gateway: string | null;
        gateway_payment_id: string;
      }[]
    ).find((p) => p.gateway === 'stripe')!;
    expect(card).toBeDefined();
    const [advance] = (await tenant.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
    // ₹413.00 received: value 350.00, CGST 31.50, SGST 31.50.
    expect(advance).toMatchObject({ payment_id: card.id, amount: 41_300, subtotal: 35_000, cgst_amount: 3_150, sgst_amount: 3_150, balance: 41_300 });

    // ₹118.00 back: refund voucher RFV-000001 with value 100.00, CGST 9.00, SGST 9.00 reversed,
    // and the money through Stripe (Cr 1050 gateway clearing, not refunds payable).
    const res = await tenant.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: { amount: 11_800, reason: 'order reduced' } });
    expect(res.status, res.text).toBe(201);
    const voucher = res.body.data.movements[0];
    expect(voucher).toMatchObject({
      kind: 'refunded',
      refund_voucher_number: 'RFV-000001',
      amount: 11_800,
      cgst_amount: 900,
      sgst_amount: 900,
      payout: 'gateway',
    });
    expect(voucher!.refund_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await entry('advance.refunded', voucher!.id)).toEqual({ 2310: 11_800, 1050: -11_800, 2100: 900, 2110: 900, 1300: -1_800 });

    await t.kosh.worker.drain();
    const sent = stripe.requestsTo('POST', '/v1/refunds');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers['idempotency-key']).toBe(`kosh_ref_${voucher!.refund_id}`);
    expect(sent[0]!.body).toMatchObject({ payment_intent: card.gateway_payment_id, amount: '11800' });
    const refund = (await tenant.http.GET('/v1/refunds/{id}', { path: { id: voucher!.refund_id! } })).body.data;
    expect(refund).toMatchObject({
      status: 'succeeded',
      advance_id: advance!.id,
      credit_note_id: null,
      payment_id: card.id,
      amount: 11_800,
      gateway: 'stripe',
    });
    expect((await tenant.http.GET('/v1/payments/{id}', { path: { id: card.id } })).body.data.amount_refunded).toBe(11_800);

    // An offline payment's advance is still paid by hand: an offline refund (decision 0740), no Stripe call.
    await tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer, payment_type: 'bank_transfer', amount: 11_800 } });
    const offline = ((await tenant.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data as { id: string; payment_id: string }[]).find(
      (a) => a.payment_id !== card.id,
    )!;
    const byHand = await tenant.http.POST('/v1/advances/{id}/refunds', { path: { id: offline.id }, body: {} });
    expect(byHand.body.data.movements[0]).toMatchObject({ payout: 'offline', refund_id: expect.any(String) });
    expect((await tenant.http.GET('/v1/refunds/{id}', { path: { id: byHand.body.data.movements[0]!.refund_id! } })).body.data).toMatchObject({
      gateway: null,
      status: 'pending',
    });
    expect(stripe.requestsTo('POST', '/v1/refunds')).toHaveLength(1);
  });

  it('keeps the voucher and owes the money by hand when Stripe refuses the refund (decision 0401)', async () => {
    // ₹200 + CGST 9 % + SGST 9 % = ₹236.00, paid by bank transfer and again through Stripe.
    const customer = await createCustomer(tenant, { gstin: gstinFor('29', 'CCCCC3333C1Z') });
    const invoice = await createInvoice(tenant, customer, [20_000], { auto_finalize: true });
    expect(invoice.total).toBe(23_600);
    const checkout = await tenant.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: invoice.id } });
    const providerPage = (await fetch(checkout.body.data.url, { redirect: 'manual' })).headers.get('location')!;
    const bank = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: customer,
        invoice_id: invoice.id,
        payment_type: 'bank_transfer',
        amount: 23_600,
      },
    });
    expect(bank.status, bank.text).toBe(201);
    expect((await fetch(providerPage, { method: 'POST', redirect: 'manual' })).status).toBe(303);
    await t.kosh.worker.drain();
    const [advance] = (await tenant.http.GET('/v1/advances', { query: { customer_id: customer } })).body.data;
    expect(advance).toMatchObject({ amount: 23_600, balance: 23_600, cgst_amount: 1_800, sgst_amount: 1_800 });
    const before = await customerAccounts(customer);
    // Received through Stripe: 1050 +236.00 (not settled yet), 2310 −236.00, 1300 +36.00, 2100/2110 −18.00 each.
    expect(before).toMatchObject({ 1050: 23_600, 2310: -23_600, 1300: 3_600 });

    // ₹118.00 back (value 100.00, CGST 9.00, SGST 9.00), refused by Stripe.
    stripe.failNextRefund('expired_or_canceled_card');
    const res = await tenant.http.POST('/v1/advances/{id}/refunds', { path: { id: advance!.id }, body: { amount: 11_800, reason: 'order reduced' } });
    expect(res.status, res.text).toBe(201);
    const voucher = res.body.data.movements[0];
    expect(voucher).toMatchObject({ kind: 'refunded', amount: 11_800, payout: 'gateway' });
    await t.kosh.worker.drain();

    const refunds = stripe.requestsTo('POST', '/v1/refunds').filter((r) => r.headers['idempotency-key'] === `kosh_ref_${voucher!.refund_id}`);
    expect(refunds).toHaveLength(1);
    const refund = (await tenant.http.GET('/v1/refunds/{id}', { path: { id: voucher!.refund_id! } })).body.data;
    expect(refund).toMatchObject({ status: 'failed', failure_code: 'expired_or_canceled_card', advance_id: advance!.id, amount: 11_800 });
    const events = (await tenant.http.GET('/v1/events', { query: { object_id: refund.id, limit: 100 } })).body.data.map((e: { type: string }) => e.type);
    expect(events).toEqual(expect.arrayContaining(['refund.created', 'refund.failed']));
    const card = (await tenant.http.GET('/v1/payments/{id}', { path: { id: advance!.payment_id! } })).body.data;
    // The money is still refunded to the customer, by hand (decision 0740): an offline refund
    // replacing the failed one carries it, and counts against the payment in its place.
    const byHand = (
      (await tenant.http.GET('/v1/payments/{id}/refunds', { path: { id: card.id } })).body.data as { id: string; replaces_refund_id: string | null }[]
    ).find((r) => r.replaces_refund_id === refund.id);
    expect(byHand).toMatchObject({ status: 'pending', gateway: null, advance_id: advance!.id, amount: 11_800, payment_id: card.id });
    expect(card.amount_refunded, 'the payment still has the 118.00 refunded (by hand)').toBe(11_800);

    // The refund voucher stands (decision 0401: no supply will be made; its GST stays reversed):
    // the advance keeps 236.00 − 118.00 = 118.00 and its open tax 18.00.
    const after = (await tenant.http.GET('/v1/advances/{id}', { path: { id: advance!.id } })).body.data;
    expect(after.balance).toBe(11_800);
    // Gateway clearing is back where it was (Cr 118.00 by the voucher, Dr 118.00 by refund.failed);
    // the 118.00 is owed by hand in 2320; 2310 and 1300 fell with the voucher; 2100/2110 +9.00 each.
    expect(await entry('refund.failed', refund.id)).toEqual({ 1050: 11_800, 2320: -11_800 });
    const now = await customerAccounts(customer);
    expect(now[1050]).toBe(before[1050]);
    expect(now[2320]).toBe(-11_800);
    expect(now[2310]).toBe(before[2310]! + 11_800);
    expect(now[1300]).toBe(before[1300]! - 1_800);
    expect(now[2100]).toBe(before[2100]! + 900);
    expect(now[2110]).toBe(before[2110]! + 900);
    // Stripe refunded nothing on the PaymentIntent.
    expect(stripe.paymentIntents.get(card.gateway_payment_id!)?.amount_refunded).toBe(0);

    // Paid by bank transfer: refund.paid Dr 2320 118.00 / Cr 1000 118.00; nothing owed any more.
    const paid = await tenant.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: byHand!.id }, body: { reference: 'UTR-ADV-0001' } });
    expect(paid.status, paid.text).toBe(200);
    expect(paid.body.data).toMatchObject({ status: 'succeeded', reference: 'UTR-ADV-0001', replaces_refund_id: refund.id });
    expect(await entry('refund.paid', byHand!.id)).toEqual({ 2320: 11_800, 1000: -11_800 });
    const settled = await customerAccounts(customer);
    expect(settled[2320]).toBe(0);
    expect(settled[1000]! - (now[1000] ?? 0)).toBe(-11_800);
    // The failed gateway refund stays failed and cannot be marked paid itself.
    expect((await tenant.http.POST('/v1/refunds/{id}/mark_paid', { path: { id: refund.id }, body: { reference: 'X' } })).error!.reason).toBe('refund_failed');
  });
});

/** Net debit (− credit) per account over the lines tagged with the customer (and its invoices' taxes). */
async function customerAccounts(customerId: string): Promise<Record<number, number>> {
  const list = (await tenant.http.GET('/v1/ledger/journal-entries', { query: { limit: 1000 } })).body.data as {
    lines: (Line & { customer_id: string | null })[];
  }[];
  const out: Record<number, number> = {};
  for (const e of list) {
    if (!e.lines.some((l) => l.customer_id === customerId)) continue;
    for (const l of e.lines) out[l.account_code] = (out[l.account_code] ?? 0) + l.debit - l.credit;
  }
  return out;
}
