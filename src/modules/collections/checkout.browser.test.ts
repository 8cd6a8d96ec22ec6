import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, startBrowserKosh } from '../../../test/support/browser.js';
import { type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';

/**
 * The hosted checkout page in a real browser (Debian's chromium driven by playwright-core) against
 * a listening Kosh: the invoice with its GST breakdown, a declined test card, then a good one;
 * and a form submitted twice at once pays once. Skipped, saying so, without chromium.
 */
const skipNote = chromiumSkipNote('checkout');

let t: TestKosh;
let browser: Browser;
let base: string;
let acme: Tenant;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ t, browser, base } = await startBrowserKosh());
  acme = await t.registerTenant({ name: 'Acme Cloud', gstin: gstinFor('29') });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function checkoutLink(invoiceId: string): Promise<string> {
  const res = await acme.http.POST('/v1/invoices/{id}/checkout-sessions', { path: { id: invoiceId } });
  expect(res.status, res.text).toBe(201);
  expect(Date.parse(res.body.data.expires_at)).toBeGreaterThan(t.clock.now().getTime());
  const url = new URL(res.body.data.url);
  return `${base}${url.pathname}${url.search}`;
}

describe.skipIf(!hasChromium)(`hosted checkout in a browser${skipNote}`, () => {
  it('shows the GST breakdown, refuses the declined card, pays with 4242 4242 4242 4242', async () => {
    const customer = await createCustomer(acme, { name: 'Riya Sharma', gstin: gstinFor('29', 'BBBBB2222B1Z') });
    const inv = await createInvoice(acme, customer, [25_000, 10_000]); // 350.00 + 9% CGST + 9% SGST = 413.00
    const link = await checkoutLink(inv.id);
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(link);
      expect(await page.locator('h1').innerText()).toBe(`Invoice ${inv.number}`);
      expect(await page.locator('[data-tax=cgst]').innerText()).toBe('₹31.50');
      expect(await page.locator('[data-tax=sgst]').innerText()).toBe('₹31.50');
      expect(await page.locator('[data-total]').innerText()).toBe('₹413.00');

      await page.fill('#card_number', '4000 0000 0000 0002');
      await page.click('#pay');
      expect(await page.locator('.error').innerText()).toContain('Your card was declined.');
      expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data.status).toBe('open');

      await page.fill('#card_number', '4242 4242 4242 4242');
      await page.click('#pay');
      expect(await page.locator('[data-paid]').innerText()).toContain('Paid');
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/checkout.png', fullPage: true });
    } finally {
      await context.close();
    }
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({ status: 'paid', amount_paid: 41_300 });
    const attempts = (await acme.http.GET('/v1/invoices/{id}/payment-attempts', { path: { id: inv.id } })).body.data;
    expect(attempts.map((a: { status: string }) => a.status)).toEqual(['failed', 'succeeded']);
  });

  it('pays once when the form is submitted twice at once', async () => {
    const customer = await createCustomer(acme);
    const inv = await createInvoice(acme, customer, [5_000]);
    const link = await checkoutLink(inv.id);
    const context = await browser.newContext();
    try {
      const submit = () => context.request.post(link, { form: { card_number: '4242424242424242' }, maxRedirects: 0 });
      const answers = await Promise.all([submit(), submit(), submit()]);
      for (const a of answers) expect(a.status()).toBe(303);
    } finally {
      await context.close();
    }
    expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: inv.id } })).body.data).toMatchObject({ status: 'paid', amount_paid: 5_900 });
    expect((await acme.http.GET('/v1/payments', { query: { invoice_id: inv.id } })).body.data).toHaveLength(1);
    // A forged link shows no invoice.
    const forged = await fetch(link.replace(/token=[^&]+/, 'token=forged'));
    expect(forged.status).toBe(404);
  });

  it('lets a customer add a card and a UPI mandate in the portal and choose the default', async () => {
    const customer = await createCustomer(acme, { name: 'Arjun Rao' });
    const link = await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: customer } });
    expect(link.status).toBe(201);
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.body.data.token)}`);
      expect(await page.locator('#payment-methods').innerText()).toContain('No saved payment methods.');
      await page.selectOption('#token', 'tok_visa');
      await page.click('#payment-methods button[type=submit]');
      expect(await page.locator('.notice').innerText()).toBe('Payment method saved.');
      await page.selectOption('#token', 'tok_upi_autopay');
      await page.click('#payment-methods form:not(.inline) button[type=submit]');
      const rows = await page.locator('#payment-methods tbody tr').allInnerTexts();
      expect(rows).toHaveLength(2);
      expect(rows.find((r) => r.includes('UPI AutoPay mandate'))).toContain('default');
      await page.locator('#payment-methods tr', { hasText: 'Visa •••• 4242' }).locator('button').click();
      expect(await page.locator('.notice').innerText()).toBe('Default payment method changed.');
      await page.screenshot({ path: 'test-output/portal-payment-methods.png', fullPage: true });
    } finally {
      await context.close();
    }
    const methods = (await acme.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body.data;
    expect(methods.map((m: { type: string; is_default: boolean }) => [m.type, m.is_default]).sort()).toEqual([
      ['card', true],
      ['upi_mandate', false],
    ]);
  });
});
