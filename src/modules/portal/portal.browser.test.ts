import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, startBrowserKosh } from '../../../test/support/browser.js';
import { gstinFor } from '../../../test/support/billing.js';
import { type Tenant, type TestKosh } from '../../../test/support/harness.js';

/**
 * The portal end to end in a real browser (Debian's chromium driven by playwright-core) against a
 * real listening Kosh: open a magic link, see the invoices, redeem a gift code, see the new
 * subscription. CI installs chromium (.ci/run); without it this file is skipped, saying so.
 */
const skipNote = chromiumSkipNote('portal');

let t: TestKosh;
let browser: Browser;
let base: string;
let acme: Tenant;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ t, browser, base } = await startBrowserKosh());
  // A GST-registered supplier: its invoices carry GST.
  acme = await t.registerTenant({ name: 'Acme Cloud', gstin: gstinFor('29') });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function created(res: { status: number; text: string; body: { data: Record<string, unknown> } }) {
  expect(res.status, res.text).toBe(201);
  return res.body.data as Record<string, string> & { amount_due: number };
}

describe.skipIf(!hasChromium)(`portal in a browser${skipNote}`, () => {
  it('opens a magic link, shows the invoices, redeems a gift code and shows the new subscription', async () => {
    const buyer = await created(await acme.api('POST', '/v1/customers', { email: 'buyer@example.in', name: 'Buyer' }));
    const recipient = await created(await acme.api('POST', '/v1/customers', { email: 'riya@example.in', name: 'Riya Sharma' }));
    const plan = await created(await acme.api('POST', '/v1/plans', { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 49_900, currency: 'INR' }));
    const invoice = await created(
      await acme.api('POST', '/v1/invoices', { customer_id: recipient.id, currency: 'INR', lines: [{ description: 'Onboarding', unit_amount: 25_000 }] }),
    );
    const gift = await created(
      await acme.api('POST', '/v1/gifts', { plan_id: plan.id, buyer_customer_id: buyer.id, recipient_email: 'riya@example.in', duration_months: 6 }),
    );
    const giftInvoice = (await acme.api('GET', `/v1/invoices/${gift.invoice_id}`)).body.data;
    await created(
      await acme.api('POST', '/v1/payments/offline', {
        customer_id: buyer.id,
        invoice_id: giftInvoice.id,
        payment_type: 'bank_transfer',
        amount: giftInvoice.amount_due,
      }),
    );
    const link = await created(await acme.api('POST', `/v1/customers/${recipient.id}/portal-sessions`));

    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.token!)}`);
      expect(new URL(page.url()).pathname).toBe('/portal');
      expect(await page.locator('.brand').innerText()).toBe('Acme Cloud');

      const invoiceRow = page.locator(`#invoices tr[data-invoice="${invoice.id}"]`);
      expect(await invoiceRow.innerText()).toContain(invoice.number!);
      expect(await invoiceRow.innerText()).toContain('₹295.00'); // 250.00 + 18% GST
      expect(await page.locator('#subscriptions').innerText()).toContain('You have no subscriptions yet.');

      const pdfHref = await invoiceRow.locator('a', { hasText: 'PDF' }).getAttribute('href');
      const pdf = await page.request.get(`${base}${pdfHref}`);
      expect(pdf.status()).toBe(200);
      expect(pdf.headers()['content-type']).toBe('application/pdf');

      await page.fill('#code', 'WRNG-CODE-2345-6789');
      await page.click('#redeem button[type=submit]');
      expect(await page.locator('.error').innerText()).toBe('This gift code is not valid.');

      await page.fill('#code', gift.code!.toLowerCase());
      await page.click('#redeem button[type=submit]');
      expect(await page.locator('.notice').innerText()).toContain('Gift redeemed');
      const subscriptions = await page.locator('#subscriptions tbody tr').allInnerTexts();
      expect(subscriptions).toHaveLength(1);
      expect(subscriptions[0]).toMatch(/Pro\s+gift/);
      expect(subscriptions[0]).toContain('active');
      expect(subscriptions[0]).toContain('01 Apr 2026 – 01 Oct 2026');
      expect(subscriptions[0]).toContain('Ends 01 Oct 2026');

      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/portal.png', fullPage: true });

      await page.click('header button[type=submit]');
      expect(await page.locator('.notice').innerText()).toBe('You are signed out.');
      expect((await context.cookies()).filter((c) => c.name === 'portal_session')).toEqual([]);
    } finally {
      await context.close();
    }
    expect((await acme.api('GET', `/v1/gifts/${gift.id}`)).body.data).toMatchObject({ status: 'redeemed', redeemed_by_customer_id: recipient.id });
  });
});
