import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, startBrowserKosh } from '../../../test/support/browser.js';
import { type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createPlan, invoicesOf, karnatakaTenant, subscribe } from '../../../test/subscriptions/helpers.js';

/**
 * Issue #33's portal journey in Chromium: a customer pays an open (not overdue) invoice, changes
 * seats and cancels with a reason — each previewed in words, then confirmed — and every result is
 * checked over the API. Monthly 1 000.00 + 18% GST from 2026-04-01; the changes on 2026-04-11
 * (20 of 30 days left): a seat for the rest of April is 100 000 × 20 / 30 → 66 667, two seats
 * 133 334 + GST 24 000 = 157 334; the unused 1 180.00 × 20 / 30 → 786.67 credited; 786.67 to pay.
 */
const skipNote = chromiumSkipNote('portal self-service');

let t: TestKosh;
let browser: Browser;
let base: string;
let acme: Tenant;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ t, browser, base } = await startBrowserKosh());
  acme = await karnatakaTenant(t);
  expect((await acme.api('PATCH', '/v1/settings', { portal_quantity_change: true })).status).toBe(200);
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`portal self-service in a browser${skipNote}`, () => {
  it('pays an open invoice, changes seats and cancels with a reason', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const plan = await createPlan(acme, { amount: 100_000 });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    const [invoice] = await invoicesOf(acme, sub.id);
    t.clock.set('2026-04-11T00:00:00Z'); // due 2026-05-01: open, not overdue
    const link = (await acme.api('POST', `/v1/customers/${customer}/portal-sessions`)).body.data;

    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.token)}`);
      expect(await page.locator('#attention').count()).toBe(0); // nothing overdue
      const row = page.locator(`#invoices tr[data-invoice="${invoice.id}"]`);
      expect(await row.innerText()).toContain('₹1,180.00');
      await row.locator('button', { hasText: 'Pay' }).click();
      expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/checkout/${acme.tenantId}/`));
      await page.fill('#card_number', '4242 4242 4242 4242');
      await page.click('#pay');
      expect(await page.locator('[data-paid]').innerText()).toContain('Paid');
      expect((await acme.api('GET', `/v1/invoices/${invoice.id}`)).body.data.status).toBe('paid');

      await page.goto(`${base}/portal`);
      await page.locator(`#subscriptions tr[data-subscription="${sub.id}"] a`, { hasText: 'Manage' }).click();
      await page.fill('#quantity', '2');
      await page.click('#seats button[type=submit]');
      const summary = await page.locator('[data-preview-summary]').innerText();
      expect(summary).toContain('20 of 30 days');
      expect(summary).toContain('a credit of ₹786.67');
      expect(summary).toContain('an invoice of ₹1,573.34');
      expect(summary).toContain('₹786.67 to pay after the credit');
      expect((await acme.api('GET', `/v1/subscriptions/${sub.id}`)).body.data.quantity).toBe(1); // a preview writes nothing
      await page.click('#pending button[type=submit]');
      expect(await page.locator('.notice').innerText()).toBe('Your seats are changed.');
      expect((await acme.api('GET', `/v1/subscriptions/${sub.id}`)).body.data.quantity).toBe(2);
      expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({ billing_reason: 'subscription_update', total: 157_334, amount_due: 78_667 });

      await page.locator(`#subscriptions tr[data-subscription="${sub.id}"] a`, { hasText: 'Manage' }).click();
      await page.selectOption('#reason', 'too_expensive');
      await page.fill('#feedback', 'Two seats is more than we need');
      await page.click('#cancel button[type=submit]');
      expect(await page.locator('[data-preview-summary]').innerText()).toContain('stays active until 01 May 2026');
      await page.click('#pending button[type=submit]');
      expect(await page.locator('.notice').innerText()).toBe('Your subscription is cancelled.');
      mkdirSync('test-output', { recursive: true });
      await page.screenshot({ path: 'test-output/portal-self-service.png', fullPage: true });
      expect((await acme.api('GET', `/v1/subscriptions/${sub.id}`)).body.data).toMatchObject({
        status: 'active',
        cancel_at_period_end: true,
        cancellation_reason: 'too_expensive',
        cancellation_feedback: 'Two seats is more than we need',
      });
    } finally {
      await context.close();
    }
  });
});
