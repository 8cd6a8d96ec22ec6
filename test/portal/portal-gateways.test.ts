/**
 * The portal with Razorpay and Stripe (issues #32 and #33, docs/decisions/0730), against the local
 * provider servers: a customer saves a payment method on the provider's hosted page — a UPI
 * AutoPay mandate with its limits and consent (Razorpay registration link), a card (Stripe
 * Checkout in setup mode) — and pays an open invoice on the provider's hosted checkout.
 *
 * Over HTTP, with the provider's webhooks withheld: the return page alone must ask the provider
 * (server-to-server) and record the method and the payment; a return before anything happened on
 * the provider's page records nothing (the redirect is never believed); the webhooks delivered
 * afterwards, a replayed return and a replayed delivery change nothing. In Chromium (when
 * installed), with the webhooks delivered: the journey a customer takes, screenshots kept.
 * Every result is checked over the API: one payment method, one payment, one ledger entry.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, launchChromium, screenshotAndSeriousAxeViolations } from '../support/browser.js';
import { createCustomer, createInvoice, gstinFor } from '../support/billing.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { startRazorpayServer, type RazorpayServer } from '../support/razorpay-server.js';
import { startStripeServer, type StripeServer } from '../support/stripe-server.js';

type Provider = 'stripe' | 'razorpay';

let stripe: StripeServer;
let razorpay: RazorpayServer;
let t: TestKosh;
let base: string;
let tenant: Tenant;
let browser: Browser | undefined;
const connections: Record<Provider, string> = { stripe: '', razorpay: '' };
const skipNote = chromiumSkipNote('portal with Razorpay and Stripe');

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
  razorpay = await startRazorpayServer();
  // The providers send the browser back to Kosh's public URL: the app listens there.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await startTestKosh({ env: { KOSH_STRIPE_API_BASE: stripe.url, KOSH_RAZORPAY_API_BASE: razorpay.url, KOSH_PUBLIC_URL: base } });
  await t.kosh.app.listen({ host: '127.0.0.1', port });
  t.clock.set('2026-04-10T06:00:00Z');
  tenant = await t.registerTenant({ name: 'Acme Cloud', gstin: gstinFor('29') });
  for (const [provider, credentials, currency] of [
    ['stripe', { secret_key: stripe.secretKey, webhook_secret: stripe.webhookSecret }, 'USD'],
    ['razorpay', { key_id: razorpay.keyId, key_secret: razorpay.keySecret, webhook_secret: razorpay.webhookSecret }, 'INR'],
  ] as const) {
    const res = await tenant.http.POST('/v1/gateway-connections', { body: { provider, credentials, currencies: [currency] } });
    expect(res.status, res.text).toBe(201);
    connections[provider] = res.body.data.id;
  }
  if (hasChromium) browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await stripe?.close();
  await razorpay?.close();
});

/** Turns the provider pages' webhook deliveries on (to Kosh's endpoint for the connection) or off. */
function webhooks(on: boolean): void {
  const target = (provider: Provider) =>
    on ? { webhookUrl: `${base}/webhooks/gateways/${provider}/${connections[provider]}`, now: () => t.clock.now() } : null;
  stripe.hostedCheckout = target('stripe');
  razorpay.hostedCheckout = target('razorpay');
}

let n = 0;
/** A customer of the provider's currency with one open invoice: INR 1 000.00 + 18% GST = 1 180.00; USD 250.00 (an export, no GST). */
async function customerWithInvoice(provider: Provider): Promise<{ customer: string; invoice: { id: string; number: string; total: number } }> {
  n += 1;
  const customer = await createCustomer(
    tenant,
    provider === 'stripe'
      ? { email: `buyer${n}@acme.example`, name: 'Acme Inc', billing_address: { line1: '1 Congress Ave', city: 'Austin', country: 'US' } }
      : { email: `riya${n}@example.in`, name: 'Riya Sharma', phone: '+919800000001', billing_address: { state_code: '29', country: 'IN' } },
  );
  const invoice = await createInvoice(tenant, customer, [provider === 'stripe' ? 25_000 : 100_000], provider === 'stripe' ? { currency: 'USD' } : {});
  expect(invoice.total).toBe(provider === 'stripe' ? 25_000 : 118_000);
  return { customer, invoice };
}

/** A signed-in portal session over plain HTTP: the cookie and the CSRF token. */
async function signIn(customer: string): Promise<{ cookie: string; csrf: string }> {
  const link = (await tenant.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: customer } })).body.data;
  const login = await fetch(`${base}/portal/login?token=${encodeURIComponent(link.token)}`, { redirect: 'manual' });
  expect(login.status).toBe(303);
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
  const me = await fetch(`${base}/portal/api/me`, { headers: { cookie } });
  return { cookie, csrf: ((await me.json()) as { data: { csrf_token: string } }).data.csrf_token };
}

const get = (url: string, cookie?: string) => fetch(url.startsWith('http') ? url : `${base}${url}`, { redirect: 'manual', headers: cookie ? { cookie } : {} });
const postForm = (path: string, cookie: string, fields: Record<string, string>) =>
  fetch(`${base}${path}`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });

const paymentMethodsOf = async (customer: string) =>
  (await tenant.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data as Record<string, unknown>[];
const paymentsOf = async (invoiceId: string) => (await tenant.http.GET('/v1/payments', { query: { invoice_id: invoiceId } })).body.data as { id: string }[];
async function ledgerEntriesOf(paymentId: string): Promise<unknown[]> {
  const entries = (await tenant.http.GET('/v1/ledger/journal-entries', { query: { kind: 'payment.recorded', limit: 100 } })).body.data as {
    reference_id: string;
  }[];
  return entries.filter((e) => e.reference_id === paymentId);
}

/** The signed webhooks the provider sends for what happened on its page (built from its state, as a late or replayed delivery). */
function providerEvents(provider: Provider, reference: string): { rawBody: Buffer; headers: Record<string, string> }[] {
  const at = t.clock.now();
  if (provider === 'stripe') {
    const session = stripe.checkoutSessions.get(reference)!;
    const events = [stripe.webhook('checkout.session.completed', session, { at })];
    const intent = session.payment_intent ? stripe.paymentIntents.get(String(session.payment_intent)) : undefined;
    if (intent) events.push(stripe.webhook('payment_intent.succeeded', intent, { at }));
    return events;
  }
  const registration = razorpay.registrationLinks.get(reference);
  if (registration) {
    const payment = razorpay.payments.get(registration.payment_id!)!;
    return [razorpay.webhook('invoice.paid', { invoice: registration, payment, order: razorpay.orders.get(registration.order_id) })];
  }
  const link = razorpay.paymentLinks.get(reference)!;
  const payment = razorpay.payments.get((link.payments[0] as { payment_id: string }).payment_id)!;
  return [razorpay.webhook('payment.captured', { payment }), razorpay.webhook('payment_link.paid', { payment_link: link, payment })];
}

async function deliver(provider: Provider, events: { rawBody: Buffer; headers: Record<string, string> }[]): Promise<void> {
  for (const event of events) {
    const res = await t.kosh.app.inject({
      method: 'POST',
      url: `/webhooks/gateways/${provider}/${connections[provider]}`,
      headers: event.headers,
      payload: event.rawBody,
    });
    expect(res.statusCode, res.body).toBe(200);
  }
}

const SETUP_FORM: Record<Provider, Record<string, string>> = {
  razorpay: { option: 'razorpay:upi_mandate', max_amount: '5000', frequency: 'monthly', valid_until: '2031-03-31', consent: 'yes' },
  stripe: { option: 'stripe:card', consent: 'yes' },
};

describe.each(['razorpay', 'stripe'] as const)('portal with %s over HTTP (webhooks withheld: the return page asks the provider)', (provider) => {
  it('saves a payment method on the hosted page once, and pays an open invoice once', async () => {
    webhooks(false);
    const server = provider === 'stripe' ? stripe : razorpay;
    const { customer, invoice } = await customerWithInvoice(provider);
    const { cookie, csrf } = await signIn(customer);
    const dashboard = await (await get('/portal', cookie)).text();
    expect(dashboard).toContain('id="setup-form"');
    expect(dashboard).toContain(`value="${SETUP_FORM[provider].option}"`);

    // Without consent nothing is asked of the provider.
    const before = server.requests.length;
    const refused = await postForm('/portal/payment-methods/setup', cookie, { ...SETUP_FORM[provider], consent: '', csrf_token: csrf });
    expect(refused.status).toBe(400);
    expect(server.requests.length).toBe(before);

    const made = await postForm('/portal/payment-methods/setup', cookie, { ...SETUP_FORM[provider], csrf_token: csrf });
    expect(made.status, await made.clone().text()).toBe(303);
    const handover = made.headers.get('location')!;
    expect(handover).toMatch(/^\/portal\/payment-methods\/setup\/[0-9a-f-]{36}$/);
    const setupId = handover.split('/').at(-1)!;
    const page = await (await get(handover, cookie)).text();
    const providerPage = /id="setup-continue" href="([^"]+)"/.exec(page)![1]!.replace(/&amp;/g, '&');
    expect(providerPage.startsWith(server.url)).toBe(true);
    const returnUrl = `${base}/portal/payment-methods/setup/${setupId}/return`;

    let reference: string;
    if (provider === 'razorpay') {
      // 5 000 rupees → 500 000 paise, monthly, to the end of 31 March 2031 in India (18:29:59 UTC).
      expect(page).toContain('up to ₹5,000.00 a debit, monthly, until 31 Mar 2031');
      const [created] = razorpay.requestsTo('POST', '/v1/subscription_registration/auth_links').slice(-1);
      expect(created!.body).toMatchObject({
        type: 'link',
        amount: 100,
        currency: 'INR',
        customer: { email: expect.stringContaining('@example.in'), contact: '+919800000001' },
        subscription_registration: { method: 'upi', max_amount: 500_000, frequency: 'monthly', expire_at: Date.parse('2031-03-31T18:29:59Z') / 1000 },
        notes: { setup_session_id: setupId, tenant_id: tenant.tenantId, customer_id: customer },
        callback_url: returnUrl,
        callback_method: 'get',
      });
      reference = [...razorpay.registrationLinks.values()].find((l) => l.notes.setup_session_id === setupId)!.id;
    } else {
      const [created] = stripe.requestsTo('POST', '/v1/checkout/sessions').slice(-1);
      expect(created!.headers['idempotency-key']).toBe(`kosh_setup_${setupId}`);
      expect(created!.body).toMatchObject({
        mode: 'setup',
        currency: 'usd',
        customer: expect.stringMatching(/^cus_/),
        success_url: returnUrl,
        metadata: { setup_session_id: setupId },
        setup_intent_data: { metadata: { setup_session_id: setupId } },
      });
      reference = String([...stripe.checkoutSessions.values()].find((s) => (s.metadata as Record<string, string>).setup_session_id === setupId)!.id);
    }

    // Coming back before anything happened on the provider's page, with a forged success query, saves nothing.
    const forged = await get(`${returnUrl}?razorpay_invoice_status=paid&razorpay_payment_id=pay_forged&session_id=${reference}`, cookie);
    expect(forged.headers.get('location')).toBe('/portal?notice=setup_pending#payment-methods');
    expect(await paymentMethodsOf(customer)).toHaveLength(0);

    // On the provider's page (twice at once), then back: the return page asks the provider and saves it.
    const answers = await Promise.all([
      fetch(providerPage, { method: 'POST', redirect: 'manual' }),
      fetch(providerPage, { method: 'POST', redirect: 'manual' }),
    ]);
    const back = answers[0]!.headers.get('location')!;
    expect(back.startsWith(returnUrl)).toBe(true);
    const returned = await Promise.all([get(back, cookie), get(back, cookie)]);
    for (const r of returned) expect(r.headers.get('location')).toBe('/portal?notice=payment_method_added#payment-methods');
    const methods = await paymentMethodsOf(customer);
    expect(methods).toHaveLength(1);
    if (provider === 'razorpay') {
      const token = [...razorpay.tokens.values()].at(-1)!;
      expect(token).toMatchObject({ method: 'upi', max_amount: 500_000, frequency: 'monthly' });
      expect(methods[0]).toMatchObject({
        type: 'upi_mandate',
        gateway: 'razorpay',
        is_default: true,
        mandate: { reference: token.id, max_amount: 500_000, frequency: 'monthly', valid_until: '2031-03-31T18:29:59.000Z' },
      });
    } else {
      const intent = [...stripe.setupIntents.values()].at(-1)!;
      expect(methods[0]).toMatchObject({ type: 'card', brand: 'visa', last4: '4242', gateway: 'stripe', is_default: true, mandate: null });
      expect(stripe.paymentMethods.get(intent.payment_method!)!.customer).toBe(intent.customer);
    }
    // The provider's webhook arriving late, a redelivery of it, and the return replayed: still one.
    await deliver(provider, providerEvents(provider, reference));
    await deliver(provider, providerEvents(provider, reference));
    expect((await get(back, cookie)).headers.get('location')).toBe('/portal?notice=payment_method_added#payment-methods');
    expect(await paymentMethodsOf(customer)).toHaveLength(1);
    const listed = await (await get('/portal', cookie)).text();
    if (provider === 'razorpay') expect(listed).toContain('Up to ₹5,000.00 a debit, monthly, until 31 Mar 2031');
    // Consent and the setup are audited with the customer as the actor.
    const audit = (await tenant.http.GET('/v1/audit-log', { query: { object_id: setupId } })).body.data as { action: string; actor: { type: string } }[];
    expect(audit.map((a) => a.action)).toContain('payment_method.setup');
    expect(audit.every((a) => a.actor.type === 'customer')).toBe(true);

    // Paying the open invoice on the provider's hosted checkout; the return page asks the provider.
    const pay = await postForm(`/portal/invoices/${invoice.id}/pay`, cookie, { csrf_token: csrf });
    expect(pay.status).toBe(200);
    const link = `${base}${/id="pay-continue" href="([^"]+)"/.exec(await pay.text())![1]!.replace(/&amp;/g, '&')}`;
    const toProvider = await get(link);
    expect(toProvider.status).toBe(303);
    const checkoutPage = toProvider.headers.get('location')!;
    expect(checkoutPage.startsWith(server.url)).toBe(true);
    const early = await get(link.replace('?token=', '/return?token='));
    expect(await early.text()).not.toContain('data-paid');
    expect(await paymentsOf(invoice.id)).toHaveLength(0);
    const paid = await fetch(checkoutPage, { method: 'POST', redirect: 'manual' });
    const paidBack = paid.headers.get('location')!;
    const shown = await Promise.all([get(paidBack), get(paidBack)]);
    for (const s of shown) expect(await s.text()).toContain('data-paid');
    const checkoutReference =
      provider === 'stripe'
        ? String([...stripe.checkoutSessions.values()].find((s) => (s.metadata as Record<string, string>).invoice_id === invoice.id)!.id)
        : [...razorpay.paymentLinks.values()].find((l) => l.notes.invoice_id === invoice.id)!.id;
    await deliver(provider, providerEvents(provider, checkoutReference));
    await get(paidBack);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data).toMatchObject({
      status: 'paid',
      amount_paid: invoice.total,
      amount_due: 0,
    });
    const payments = await paymentsOf(invoice.id);
    expect(payments).toHaveLength(1);
    expect(payments[0]).toMatchObject({ gateway: provider, amount: invoice.total, status: 'succeeded' });
    expect(await ledgerEntriesOf(payments[0]!.id)).toHaveLength(1);
  });
});

describe.skipIf(!hasChromium)(`portal with Razorpay and Stripe in a browser${skipNote}`, () => {
  it.each(['razorpay', 'stripe'] as const)('%s: the customer saves a payment method and pays an open invoice (webhooks delivered)', async (provider) => {
    webhooks(true);
    const { customer, invoice } = await customerWithInvoice(provider);
    const link = (await tenant.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: customer } })).body.data;
    const context = await browser!.newContext();
    const page = await context.newPage();
    try {
      mkdirSync('test-output', { recursive: true });
      // The portal's own pages on the way have no serious or critical axe violation.
      const axeClean = async (name: string) =>
        expect(await screenshotAndSeriousAxeViolations(page, `test-output/portal-${provider}-${name}.png`), name).toEqual([]);
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.token)}`);
      await axeClean('setup-form');
      await page.check(`#setup-form input[value="${SETUP_FORM[provider].option}"]`);
      if (provider === 'razorpay') {
        await page.fill('#max_amount', '5000');
        await page.selectOption('#frequency', 'monthly');
      }
      await page.check('#consent');
      await page.click('#setup-form button[type=submit]');
      if (provider === 'razorpay')
        expect(await page.locator('[data-mandate-terms]').innerText()).toContain('₹5,000.00 a debit, monthly, until you withdraw it');
      await axeClean('setup-handover');
      await page.click('#setup-continue');
      expect(page.url().startsWith(provider === 'stripe' ? stripe.url : razorpay.url)).toBe(true);
      await page.click('#provider-pay');
      expect(await page.locator('.notice').innerText()).toBe('Payment method saved.');
      const row = page.locator('#payment-methods tr[data-payment-method]');
      expect(await row.count()).toBe(1);
      expect(await row.innerText()).toContain(provider === 'stripe' ? 'Visa •••• 4242' : 'UPI AutoPay mandate');
      await axeClean('method-saved');

      await page.locator(`#invoices tr[data-invoice="${invoice.id}"] button`, { hasText: 'Pay' }).click();
      await page.click('#pay-continue');
      expect(page.url().startsWith(provider === 'stripe' ? stripe.url : razorpay.url)).toBe(true);
      await page.click('#provider-pay');
      expect(await page.locator('[data-paid]').innerText()).toContain('Paid');
      await page.screenshot({ path: `test-output/portal-${provider}-invoice-paid.png`, fullPage: true });
    } finally {
      await context.close();
    }
    expect(await paymentMethodsOf(customer)).toHaveLength(1);
    const payments = await paymentsOf(invoice.id);
    expect(payments).toHaveLength(1);
    expect(await ledgerEntriesOf(payments[0]!.id)).toHaveLength(1);
    expect((await tenant.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body.data.status).toBe('paid');
    // The signed webhook, delivered before the browser came back, saved the method (asking the provider first).
    const [method] = await paymentMethodsOf(customer);
    const audit = (await tenant.http.GET('/v1/audit-log', { query: { object_id: method!.id as string } })).body.data as {
      action: string;
      actor: { type: string; label: string };
    }[];
    expect(audit).toEqual([
      expect.objectContaining({ action: 'payment_method.create', actor: expect.objectContaining({ type: 'system', label: 'setup.completed webhook' }) }),
    ]);
    const deliveries = provider === 'stripe' ? stripe.hostedDeliveries : razorpay.hostedDeliveries;
    expect(deliveries.length).toBeGreaterThan(0);
    expect(deliveries.every((d) => d.status === 200)).toBe(true);
  });
});
