/**
 * Hosted checkout handed over to the provider (DESIGN §11, docs/decisions/0195): Kosh's checkout
 * link redirects to a Stripe Checkout Session / a Razorpay Payment Link on the local provider
 * servers, whose hosted page takes the payment, POSTs the signed webhooks to Kosh's endpoint and
 * sends the customer back to Kosh's return page. The invoice is paid once: the provider's two
 * events for one payment, a double submission and a replayed delivery change nothing more.
 *
 * Driven twice: by plain HTTP (always), and in Chromium (playwright-core) when it is installed,
 * keeping screenshots in test-output/.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, launchChromium } from '../support/browser.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startRazorpayServer, type RazorpayServer } from '../support/razorpay-server.js';
import { startStripeServer, type StripeServer } from '../support/stripe-server.js';
import type { ProviderServer } from '../support/provider-server.js';

let stripe: StripeServer;
let razorpay: RazorpayServer;
let sink: MailSink;
let t: TestKosh;
let base: string;
let tenant: Tenant;
let browser: Browser | undefined;
const connections: Record<'stripe' | 'razorpay', string> = { stripe: '', razorpay: '' };

beforeAll(async () => {
  stripe = await startStripeServer();
  razorpay = await startRazorpayServer();
  sink = await startMailSink();
  // The provider sends the browser back to Kosh's public URL: the app listens there.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await startTestKosh({ env: { KOSH_STRIPE_API_BASE: stripe.url, KOSH_RAZORPAY_API_BASE: razorpay.url, KOSH_PUBLIC_URL: base, SMTP_URL: sink.url } });
  await t.kosh.app.listen({ host: '127.0.0.1', port });
  tenant = await t.registerTenant({ name: 'Acme Cloud', gstin: gstinFor('29') });
  for (const [provider, credentials, currency] of [
    ['stripe', { secret_key: stripe.secretKey, webhook_secret: stripe.webhookSecret }, 'USD'],
    ['razorpay', { key_id: razorpay.keyId, key_secret: razorpay.keySecret, webhook_secret: razorpay.webhookSecret }, 'INR'],
  ] as const) {
    const res = await tenant.http.POST('/v1/gateway-connections', { body: { provider, credentials, currencies: [currency] } });
    expect(res.status, res.text).toBe(201);
    connections[provider] = res.body.data.id;
  }
  const target = (provider: 'stripe' | 'razorpay') => ({
    webhookUrl: `${base}/webhooks/gateways/${provider}/${connections[provider]}`,
    now: () => t.clock.now(),
  });
  stripe.hostedCheckout = target('stripe');
  razorpay.hostedCheckout = target('razorpay');
  if (hasChromium) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await stripe?.close();
  await razorpay?.close();
  await sink?.close();
});

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

type Provider = 'stripe' | 'razorpay';
const serverOf = (provider: Provider): ProviderServer => (provider === 'stripe' ? stripe : razorpay);

/** An open invoice for the provider's currency and Kosh's checkout link for it (on the listening app). */
async function invoiceAndLink(provider: Provider): Promise<{ invoice: { id: string; number: string; total: number }; link: string }> {
  // INR: 350.00 + 9% CGST + 9% SGST = 413.00; USD: an export to a US customer, without GST.
  const customer = await createCustomer(
    tenant,
    provider === 'stripe'
      ? { name: 'Acme Inc', billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' } }
      : { name: 'Riya Sharma', gstin: gstinFor('29', 'BBBBB2222B1Z') },
  );
  const invoice = await createInvoice(tenant, customer, [25_000, 10_000], provider === 'stripe' ? { currency: 'USD' } : {});
  const res = await tenant.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: invoice.id } });
  expect(res.status, res.text).toBe(201);
  expect(res.body.data.url.startsWith(`${base}/checkout/`)).toBe(true);
  return { invoice, link: res.body.data.url };
}

/** What Kosh asked the provider for: one Checkout Session / Payment Link naming the invoice and the return page. */
function expectHandoverRequest(provider: Provider, invoiceId: string, amount: number): void {
  if (provider === 'stripe') {
    const [created] = stripe.requestsTo('POST', '/v1/checkout/sessions').slice(-1);
    expect(created!.headers['idempotency-key']).toMatch(/^kosh_chk_/);
    expect(created!.body).toMatchObject({
      mode: 'payment',
      line_items: [{ quantity: '1', price_data: { currency: 'usd', unit_amount: String(amount) } }],
      metadata: { invoice_id: invoiceId, tenant_id: tenant.tenantId },
      payment_intent_data: { metadata: { invoice_id: invoiceId } },
    });
    const body = created!.body as { success_url: string; cancel_url: string; client_reference_id: string };
    expect(body.success_url).toContain(`/checkout/${tenant.tenantId}/${body.client_reference_id}/return?token=`);
    expect(body.cancel_url).toBe(`${body.success_url}&cancelled=1`);
  } else {
    const [created] = razorpay.requestsTo('POST', '/v1/payment_links').slice(-1);
    expect(created!.headers.authorization).toBe(`Basic ${Buffer.from(`${razorpay.keyId}:${razorpay.keySecret}`).toString('base64')}`);
    expect(created!.body).toMatchObject({ amount, currency: 'INR', accept_partial: false, callback_method: 'get', notes: { invoice_id: invoiceId } });
    expect((created!.body as { callback_url: string }).callback_url).toContain('/return?token=');
  }
}

/** The provider's id of the invoice's Checkout Session / Payment Link. */
function referenceOf(provider: Provider, invoiceId: string): string {
  if (provider === 'stripe')
    return String([...stripe.checkoutSessions.values()].find((s) => (s.metadata as Record<string, string>).invoice_id === invoiceId)!.id);
  return [...razorpay.paymentLinks.values()].find((l) => l.notes.invoice_id === invoiceId)!.id;
}

const deliveriesOf = (provider: Provider, reference: string) =>
  (provider === 'stripe' ? stripe.hostedDeliveries : razorpay.hostedDeliveries).filter((d) => d.reference === reference);

/** The invoice is paid exactly once, and the provider's deliveries were all accepted. */
async function expectPaidOnce(provider: Provider, invoice: { id: string; total: number }): Promise<void> {
  const reference = referenceOf(provider, invoice.id);
  expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data).toMatchObject({
    status: 'paid',
    amount_paid: invoice.total,
    amount_due: 0,
  });
  const payments = (await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data;
  expect(payments).toHaveLength(1);
  expect(payments[0]).toMatchObject({ gateway: provider, amount: invoice.total, payment_type: 'card' });
  const deliveries = deliveriesOf(provider, reference);
  expect(deliveries.length).toBeGreaterThanOrEqual(2);
  expect(deliveries.every((d) => d.status === 200)).toBe(true);
}

/** The same delivery again (same event id), and the payment announced under a new event id: nothing more is paid. */
async function replay(provider: Provider, invoice: { id: string; total: number }): Promise<void> {
  const url = `/webhooks/gateways/${provider}/${connections[provider]}`;
  const send = async (delivery: { rawBody: Buffer; headers: Record<string, string> }) => {
    const res = await t.kosh.app.inject({ method: 'POST', url, headers: delivery.headers, payload: delivery.rawBody });
    expect(res.statusCode, res.body).toBe(200);
    return JSON.parse(res.body) as { duplicate: boolean; type: string };
  };
  const reference = referenceOf(provider, invoice.id);
  const first = deliveriesOf(provider, reference)[0]!;
  const at = t.clock.now();
  if (provider === 'stripe') {
    const session = stripe.checkoutSessions.get(reference)!;
    expect(await send(stripe.webhook(first.type, session, { at, id: first.id }))).toMatchObject({ duplicate: true });
    expect(await send(stripe.webhook('checkout.session.completed', session, { at }))).toMatchObject({ duplicate: false, type: 'payment.succeeded' });
  } else {
    const link = razorpay.paymentLinks.get(reference)!;
    const payment = razorpay.payments.get((link.payments[0] as { payment_id: string }).payment_id)!;
    // Razorpay redelivers the bytes it signed; a new X-Razorpay-Event-Id on them changes nothing.
    const sent = razorpay.hostedDeliveries.find((d) => d.reference === reference && d.id === first.id)!.sent;
    expect(await send(sent)).toMatchObject({ duplicate: true });
    expect(await send({ ...sent, headers: { ...sent.headers, 'x-razorpay-event-id': 'evt_replayed' } })).toMatchObject({ duplicate: true });
    expect(await send(razorpay.webhook('payment_link.paid', { payment_link: link, payment }))).toMatchObject({ duplicate: false, type: 'payment.succeeded' });
  }
  expect((await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data).toHaveLength(1);
}

describe.each(['stripe', 'razorpay'] as const)('checkout handed over to %s', (provider) => {
  it('over HTTP: redirect, pay twice at once on the provider page, back to a paid invoice', async () => {
    const { invoice, link } = await invoiceAndLink(provider);
    const handover = await fetch(link, { redirect: 'manual' });
    expect(handover.status).toBe(303);
    const providerPage = handover.headers.get('location')!;
    expect(providerPage.startsWith(serverOf(provider).url)).toBe(true);
    expectHandoverRequest(provider, invoice.id, invoice.total);

    const page = await (await fetch(providerPage)).text();
    expect(page).toContain('id="provider-pay"');
    const pay = () => fetch(providerPage, { method: 'POST', redirect: 'manual' });
    const answers = await Promise.all([pay(), pay()]);
    for (const a of answers) expect(a.status).toBe(303);
    const back = answers[0]!.headers.get('location')!;
    expect(back.startsWith(`${base}/checkout/${tenant.tenantId}/`)).toBe(true);
    expect(new URL(back).pathname).toMatch(/\/return$/);
    const returned = await fetch(back);
    expect(returned.status).toBe(200);
    expect(await returned.text()).toContain('data-paid');
    await expectPaidOnce(provider, invoice);
    await replay(provider, invoice);
    // The link now shows the paid invoice instead of handing over again.
    const again = await fetch(link, { redirect: 'manual' });
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('data-paid');
  });

  it('comes back cancelled: the return page offers the provider again, nothing is paid', async () => {
    const { invoice, link } = await invoiceAndLink(provider);
    const providerPage = (await fetch(link, { redirect: 'manual' })).headers.get('location')!;
    const cancelled = await fetch(`${link.replace('?token=', '/return?token=')}&cancelled=1`);
    const html = await cancelled.text();
    expect(html).toContain('data-cancelled');
    expect(html).toContain(`href="${providerPage.replace(/&/g, '&amp;')}"`);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.status).toBe('open');
  });
});

describe('checkout handed over while a mandate debit is scheduled (decision 0196)', () => {
  const HOUR = 3_600_000;
  let n = 0;
  /** A customer with a Razorpay recurring token (a mandate: 24-hour pre-debit notice), an open invoice, and /pay on it: a debit scheduled. */
  async function scheduledDebit(): Promise<{ customer: string; invoice: { id: string; number: string; total: number } }> {
    const email = `mandate${++n}@acme.example`;
    const created = await tenant.http.POST('/v1/customers', {
      body: {
        email,
        name: 'Asha Rao',
        phone: '+919800000001',
        billing_address: { state_code: '29', country: 'IN' },
      },
    });
    const { tokenId } = razorpay.addToken({ email, contact: '+919800000001', method: 'card', network: 'Visa', last4: '1111', outcome: { kind: 'pending' } });
    const pm = await tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: created.body.data.id }, body: { token: tokenId } });
    expect(pm.status, pm.text).toBe(201);
    const invoice = await createInvoice(tenant, created.body.data.id, [10_000]);
    expect((await tenant.http.POST('/v1/invoices/{id}/pay', { path: { id: invoice.id }, body: { payment_method_id: pm.body.data.id } })).status).toBe(200);
    const [attempt] = await attemptsOf(invoice.id);
    expect(attempt).toMatchObject({ status: 'pending' });
    expect(new Date(attempt!.charge_after!).getTime()).toBe(t.clock.now().getTime() + 24 * HOUR);
    return { customer: created.body.data.id, invoice };
  }
  const attemptsOf = async (invoiceId: string) =>
    (await tenant.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: invoiceId } })).body.data as {
      status: string;
      charge_after: string | null;
      failure_code: string | null;
      payment_id: string | null;
    }[];
  const debitsSent = () => razorpay.requests.filter((r) => r.method === 'POST' && (r.path === '/v1/payments/create/recurring' || r.path === '/v1/orders'));
  /** The customer pays on the Payment Link page; the local server delivers its two signed webhooks to Kosh. */
  async function payOnProviderPage(invoiceId: string): Promise<void> {
    const checkout = await tenant.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: invoiceId } });
    expect(checkout.status, checkout.text).toBe(201);
    const providerPage = (await fetch(checkout.body.data.url, { redirect: 'manual' })).headers.get('location')!;
    expect(providerPage.startsWith(razorpay.url)).toBe(true);
    expect((await fetch(providerPage, { method: 'POST', redirect: 'manual' })).status).toBe(303);
  }
  const advances = async () =>
    ((await tenant.http.GET('/v1/ledger/trial-balance', { query: { currency: 'INR' } })).body.data.accounts.find((a: { code: number }) => a.code === 2310)
      ?.credit ?? 0) as number;

  it('in its notice wait: the hosted payment cancels the debit and pays the invoice once; past the notice nothing is sent to Razorpay', async () => {
    const { invoice } = await scheduledDebit();
    await payOnProviderPage(invoice.id);
    const deliveries = deliveriesOf('razorpay', referenceOf('razorpay', invoice.id));
    expect(deliveries.map((d) => d.status)).toEqual([200, 200]);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data).toMatchObject({
      status: 'paid',
      amount_paid: invoice.total,
      amount_due: 0,
    });
    const payments = (await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data;
    expect(payments).toEqual([expect.objectContaining({ gateway: 'razorpay', amount: invoice.total, status: 'succeeded' })]);
    const attempts = await attemptsOf(invoice.id);
    expect(attempts.map((a) => a.status).sort()).toEqual(['canceled', 'succeeded']);
    expect(attempts.find((a) => a.status === 'canceled')).toMatchObject({ failure_code: 'paid_by_checkout', payment_id: null });
    expect(attempts.find((a) => a.status === 'succeeded')!.payment_id).toBe(payments[0]!.id);
    await t.kosh.worker.drain();
    const mails = sink.messages.filter((m) => m.subject.includes(`invoice ${invoice.number}`)).map((m) => m.subject);
    expect(mails.some((s) => s.startsWith('Upcoming mandate debit'))).toBe(true);
    expect(mails).toContain(`UPI AutoPay debit for invoice ${invoice.number} canceled`);
    const canceledMail = sink.messages.find((m) => m.subject === `UPI AutoPay debit for invoice ${invoice.number} canceled`)!;
    expect(canceledMail.text).toContain('will not be made: the invoice was paid on the Razorpay checkout page');

    // The day the debit was due: the worker's sweep and charge job find it canceled and send nothing.
    razorpay.requests.length = 0;
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    t.clock.advance(2 * HOUR);
    await t.kosh.worker.drain();
    expect(debitsSent()).toEqual([]);
    expect((await attemptsOf(invoice.id)).map((a) => a.status).sort()).toEqual(['canceled', 'succeeded']);
    expect((await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data).toHaveLength(1);
  });

  it('due but not yet picked up by the sweep: still never sent, so still canceled', async () => {
    const { invoice } = await scheduledDebit();
    razorpay.requests.length = 0;
    t.clock.advance(25 * HOUR);
    await payOnProviderPage(invoice.id);
    expect(deliveriesOf('razorpay', referenceOf('razorpay', invoice.id)).find((d) => d.type === 'payment_link.paid')!.status).toBe(200);
    await t.kosh.worker.drain();
    expect(debitsSent()).toEqual([]);
    expect((await attemptsOf(invoice.id)).map((a) => a.status).sort()).toEqual(['canceled', 'succeeded']);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data).toMatchObject({ status: 'paid', amount_paid: invoice.total });
  });

  it('already sent to Razorpay: 409 payment_in_progress; when both succeed, the redelivered hosted payment lands in customer advances', async () => {
    const { invoice } = await scheduledDebit();
    razorpay.requests.length = 0;
    t.clock.advance(25 * HOUR);
    await t.kosh.worker.drain();
    expect(debitsSent().map((r) => r.path)).toEqual(['/v1/orders', '/v1/payments/create/recurring']);
    expect((await attemptsOf(invoice.id)).map((a) => a.status)).toEqual(['pending']);

    await payOnProviderPage(invoice.id);
    const reference = referenceOf('razorpay', invoice.id);
    // payment_link.paid names the session (payment.captured of a link payment carries no notes here: 200, nothing to apply).
    expect(deliveriesOf('razorpay', reference).find((d) => d.type === 'payment_link.paid')!.status).toBe(409);
    expect((await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data).toHaveLength(0);
    expect((await attemptsOf(invoice.id)).map((a) => a.status)).toEqual(['pending']);

    // The bank answers the debit: it pays the invoice.
    const order = (debitsSent()[1]!.body as { order_id: string }).order_id;
    const debit = [...razorpay.payments.values()].find((p) => p.order_id === order)!;
    const captured = razorpay.settlePayment(debit.id, 'captured');
    const url = `/webhooks/gateways/razorpay/${connections.razorpay}`;
    const deliver = async (d: { rawBody: Buffer; headers: Record<string, string> }) =>
      (await t.kosh.app.inject({ method: 'POST', url, headers: { ...d.headers, 'content-type': 'application/json' }, payload: d.rawBody })).statusCode;
    expect(await deliver(razorpay.webhook('payment.captured', { payment: captured }))).toBe(200);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data).toMatchObject({ status: 'paid', amount_paid: invoice.total });
    const before = await advances();

    // Razorpay redelivers the hosted payment's events (same ids): recorded once, all of it a customer advance.
    const link = razorpay.paymentLinks.get(reference)!;
    const hosted = razorpay.payments.get((link.payments[0] as { payment_id: string }).payment_id)!;
    for (const d of deliveriesOf('razorpay', reference)) {
      const entities = d.type === 'payment.captured' ? { payment: hosted } : { payment_link: link, payment: hosted };
      expect(await deliver(razorpay.webhook(d.type, entities, { eventId: d.id }))).toBe(200);
    }
    const payments = (await tenant.http.GET('/v1/payments', { query: { invoice_id: invoice.id } })).body.data as {
      gateway_payment_id: string;
      amount: number;
    }[];
    expect(payments.map((p) => p.gateway_payment_id).sort()).toEqual([debit.id, hosted.id].sort());
    expect(payments.every((p) => p.amount === invoice.total)).toBe(true);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data).toMatchObject({
      status: 'paid',
      amount_paid: invoice.total,
      amount_due: 0,
    });
    expect((await advances()) - before).toBe(invoice.total);
  });
});

describe.skipIf(!hasChromium)(`checkout handed over, in Chromium${chromiumSkipNote('checkout hand-over')}`, () => {
  it.each(['stripe', 'razorpay'] as const)('%s: Kosh link → provider page → double-click Pay → Kosh shows the invoice paid', async (provider) => {
    const { invoice, link } = await invoiceAndLink(provider);
    const context = await browser!.newContext();
    const page = await context.newPage();
    try {
      await page.goto(link);
      expect(page.url().startsWith(serverOf(provider).url)).toBe(true);
      expect(await page.locator('[data-provider]').innerText()).toBe(provider === 'stripe' ? 'Stripe' : 'Razorpay');
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: `test-output/checkout-${provider}-provider.png`, fullPage: true });
      // The double click submits twice: the first navigation may be aborted by the second, so
      // wait for where the page lands (a locator waits across navigations), not for one of them.
      await page.dblclick('#provider-pay');
      await page.locator('[data-paid]').waitFor();
      expect(page.url()).toMatch(/\/return\?/);
      expect(await page.locator('h1').innerText()).toBe(`Invoice ${invoice.number}`);
      if (provider === 'razorpay') expect(await page.locator('[data-tax=cgst]').innerText()).toBe('₹31.50');
      await page.screenshot({ path: `test-output/checkout-${provider}-paid.png`, fullPage: true });
    } finally {
      await context.close();
    }
    await expectPaidOnce(provider, invoice);
    await replay(provider, invoice);
  });
});
