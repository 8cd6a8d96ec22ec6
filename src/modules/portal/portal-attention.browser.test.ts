import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, startBrowserKosh } from '../../../test/support/browser.js';
import { gstinFor } from '../../../test/support/billing.js';
import { type Tenant, type TestKosh } from '../../../test/support/harness.js';

/**
 * The portal's banner in a real browser: a customer with an overdue invoice, then behind the
 * dunning payment wall, sees it with a pay button; the button opens the hosted checkout, paying
 * there lifts the wall and the banner goes.
 */
const skipNote = chromiumSkipNote('portal banner');
const HOUR = 3_600_000;

let t: TestKosh;
let browser: Browser;
let base: string;
let acme: Tenant;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ t, browser, base } = await startBrowserKosh());
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
  // A GST-registered supplier: its invoices carry GST.
  acme = await t.registerTenant({ name: 'Acme Cloud', gstin: gstinFor('29') });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function ok(res: { status: number; text: string; body: { data: Record<string, unknown> } }) {
  expect(res.status, res.text).toBeLessThan(300);
  return res.body.data as Record<string, string> & { amount_due: number };
}

describe.skipIf(!hasChromium)(`portal banner in a browser${skipNote}`, () => {
  it('shows overdue and walled invoices with a pay button that pays through the hosted checkout', async () => {
    // Overdue invoices are dunned by a campaign whose first step raises the payment wall a day after.
    const campaign = await ok(await acme.api('POST', '/v1/dunning-campaigns', { name: 'Wall', is_default: true, trigger_event: 'invoice_overdue' }));
    await ok(await acme.api('POST', `/v1/dunning-campaigns/${campaign.id}/steps`, { delay_hours: 24, channel: 'in_app', is_payment_wall: true }));
    await ok(await acme.api('POST', `/v1/dunning-campaigns/${campaign.id}/steps`, { delay_hours: 240, channel: 'in_app' }));
    const customer = await ok(await acme.api('POST', '/v1/customers', { email: 'late@example.in', name: 'Late Payer' }));
    const due = new Date(t.clock.now().getTime() + HOUR).toISOString();
    const invoice = await ok(
      await acme.api('POST', '/v1/invoices', {
        customer_id: customer.id,
        currency: 'INR',
        due_date: due,
        lines: [{ description: 'Hosting', unit_amount: 50_000 }],
      }),
    );

    const context = await browser.newContext();
    const page = await context.newPage();
    const signIn = async () => {
      const link = await ok(await acme.api('POST', `/v1/customers/${customer.id}/portal-sessions`));
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.token!)}`);
      expect(new URL(page.url()).pathname).toBe('/portal');
    };
    try {
      // Not yet due: no banner.
      await signIn();
      expect(await page.locator('#attention').count()).toBe(0);

      // Overdue: the banner lists it with a pay button.
      t.clock.set(new Date(t.clock.now().getTime() + 2 * HOUR));
      await t.kosh.worker.drain();
      await page.goto(`${base}/portal`);
      const banner = page.locator('#attention');
      expect(await banner.isVisible()).toBe(true);
      expect(await banner.innerText()).toContain('You have an overdue invoice.');
      expect(await banner.locator(`[data-pay-invoice="${invoice.id}"]`).innerText()).toContain('₹590.00');

      // A day into dunning the payment wall is up: the banner says the account is paused.
      t.clock.set(new Date(t.clock.now().getTime() + 25 * HOUR));
      await t.kosh.worker.drain();
      await t.kosh.worker.drain();
      const runs = (await acme.api('GET', `/v1/dunning-executions?invoice_id=${invoice.id}`)).body.data;
      expect(runs, JSON.stringify(runs)).toHaveLength(1);
      expect((await acme.api('GET', `/v1/customers/${customer.id}/access`)).body.data.blocked, JSON.stringify(runs)).toBe(true);
      await page.goto(`${base}/portal`);
      expect(await banner.innerText()).toContain('Your account is paused until the invoices below are paid.');
      expect(await banner.getAttribute('class')).toContain('blocked');
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/portal-attention.png', fullPage: true });

      // The pay button opens the hosted checkout for that invoice; paying there lifts the wall.
      await banner.locator('button', { hasText: `Pay ${invoice.number}` }).click();
      expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/checkout/${acme.tenantId}/`));
      expect(await page.locator('h1').innerText()).toBe(`Invoice ${invoice.number}`);
      await page.fill('#card_number', '4242 4242 4242 4242');
      await page.click('#pay');
      expect(await page.locator('[data-paid]').innerText()).toContain('Paid');
      expect((await acme.api('GET', `/v1/invoices/${invoice.id}`)).body.data.status).toBe('paid');
      expect((await acme.api('GET', `/v1/customers/${customer.id}/access`)).body.data.blocked).toBe(false);

      await page.goto(`${base}/portal`);
      expect(await page.locator('#attention').count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it("refuses to pay another customer's invoice from the portal", async () => {
    const mine = await ok(await acme.api('POST', '/v1/customers', { email: 'me@example.in', name: 'Me' }));
    const other = await ok(await acme.api('POST', '/v1/customers', { email: 'other@example.in', name: 'Other' }));
    const theirs = await ok(
      await acme.api('POST', '/v1/invoices', { customer_id: other.id, currency: 'INR', lines: [{ description: 'X', unit_amount: 1_000 }] }),
    );
    const link = await ok(await acme.api('POST', `/v1/customers/${mine.id}/portal-sessions`));
    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.token!)}`);
      const csrf = await page.locator('input[name=csrf_token]').first().getAttribute('value');
      const res = await page.request.post(`${base}/portal/invoices/${theirs.id}/pay`, { form: { csrf_token: csrf! }, maxRedirects: 0 });
      expect(res.status()).toBe(404);
      expect((await acme.api('GET', `/v1/invoices/${theirs.id}`)).body.data.status).toBe('open');
    } finally {
      await context.close();
    }
  });
});
