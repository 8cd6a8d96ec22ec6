import { mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, chromiumSkipNote, hasChromium, screenshotAndSeriousAxeViolations, startBrowserKosh } from '../support/browser.js';
import type { Tenant, TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, invoicesOf, karnatakaTenant, subscribe } from '../subscriptions/helpers.js';

/**
 * Issue #33's journey (3) in Chromium, as a person does it, each step checked over the API:
 * the owner allows seat changes in the dashboard (Settings → Customer portal), then a customer in
 * the portal pays an open (not overdue) invoice on the test gateway's checkout, saves a card,
 * changes seats and cancels with a reason — each change previewed in words, then confirmed.
 * Screenshots in test-output/screenshots/ (kept by CI); axe-core with no serious or critical
 * violation on every page visited.
 *
 * Monthly 1 000.00 + 18% GST from 2026-04-01; the changes on 2026-04-11 (20 of 30 days left): a
 * seat for the rest of April is 100 000 × 20 / 30 → 66 667, two seats 133 334 + GST 24 000 =
 * 157 334; the unused 1 180.00 × 20 / 30 → 786.67 credited; 786.67 to pay.
 */
const skipNote = chromiumSkipNote('portal journey');
const OUT = 'test-output/screenshots';

let t: TestKosh;
let browser: Browser;
let base: string;
let acme: Tenant;

/** Screenshot, then axe-core: no serious or critical violation. */
async function check(page: Page, name: string): Promise<void> {
  expect(await screenshotAndSeriousAxeViolations(page, `${OUT}/${name}.png`), name).toEqual([]);
}

beforeAll(async () => {
  if (!hasChromium) return;
  buildDashboard();
  mkdirSync(OUT, { recursive: true });
  ({ t, browser, base } = await startBrowserKosh());
  acme = await karnatakaTenant(t);
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`issue #33 journey (3) in a browser${skipNote}`, () => {
  it('the owner allows seat changes; a customer pays an open invoice, saves a card, changes seats and cancels with a reason', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const plan = await createPlan(acme, { amount: 100_000 });
    const customer = await createCustomer(acme);
    const sub = await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    const [invoice] = await invoicesOf(acme, sub.id);
    t.clock.set('2026-04-11T00:00:00Z'); // due 2026-05-01: open, not overdue
    const subscriptionNow = async () => (await acme.http.GET('/v1/subscriptions/{id}', { path: { id: sub.id } })).body!.data;

    // The owner (API-key sign-in) opens Settings → Customer portal: seat changes are off by default.
    const owner = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const dashboard = await owner.newPage();
    try {
      await dashboard.goto(`${base}/dashboard/sign-in`);
      await dashboard.getByRole('button', { name: /API key/ }).click();
      await dashboard.getByLabel('API key').fill(acme.key);
      await dashboard.getByRole('button', { name: 'Sign in', exact: true }).click();
      await dashboard.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
      await dashboard.getByRole('link', { name: 'Settings' }).first().click();
      const tabs = dashboard.getByRole('navigation', { name: 'Settings sections' });
      await tabs.getByRole('link', { name: 'Customer portal' }).click();
      await expect(tabs.locator('[aria-current=page]').allInnerTexts()).resolves.toEqual(['Customer portal']);
      const form = dashboard.getByRole('form', { name: 'What customers may do in the portal' });
      await expect(form.getByLabel('Change seats').isChecked()).resolves.toBe(false);
      await expect(form.getByLabel('Update billing details').isChecked()).resolves.toBe(true);
      await expect(form.getByLabel('Cancel a subscription').inputValue()).resolves.toBe('at_period_end');
      await form.getByLabel('Change seats').check();
      await check(dashboard, 'portal-journey-00-dashboard-portal-settings');
      await form.getByRole('button', { name: 'Save portal settings' }).click();
      await dashboard.getByText('Portal settings saved.').waitFor();
    } finally {
      await owner.close();
    }
    expect((await acme.http.GET('/v1/settings')).body!.data).toMatchObject({
      portal_cancellation: 'at_period_end',
      portal_plan_change: false,
      portal_quantity_change: true,
      portal_billing_details: true,
    });

    const link = (await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: customer } })).body!.data;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      // Signed in by the link: the invoice is open and nothing is overdue.
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.token)}`);
      expect(await page.locator('#attention').count()).toBe(0);
      const row = page.locator(`#invoices tr[data-invoice="${invoice.id}"]`);
      expect(await row.innerText()).toContain('₹1,180.00');
      await check(page, 'portal-journey-01-portal');

      // Pays the open invoice on the test gateway's checkout.
      await row.getByRole('button', { name: 'Pay' }).click();
      expect(new URL(page.url()).pathname).toMatch(new RegExp(`^/checkout/${acme.tenantId}/`));
      await check(page, 'portal-journey-02-checkout');
      await page.getByLabel('Card number').fill('4242 4242 4242 4242');
      await page.getByRole('button', { name: /^Pay ₹1,180\.00/ }).click();
      expect(await page.locator('[data-paid]').innerText()).toContain('Paid');
      await check(page, 'portal-journey-03-paid');
      expect((await acme.http.GET('/v1/invoices/{id}', { path: { id: invoice.id } })).body!.data).toMatchObject({ status: 'paid', amount_due: 0 });

      // Saves a card (the test gateway's, in test mode); it becomes the default.
      await page.goto(`${base}/portal`);
      await page.getByLabel('Add a payment method').selectOption({ label: 'Test card — Visa •••• 4242' });
      await page.locator('#payment-methods').getByRole('button', { name: 'Add' }).click();
      expect(await page.locator('.notice').innerText()).toBe('Payment method saved.');
      expect(await page.locator('#payment-methods tr[data-payment-method]').innerText()).toContain('Visa •••• 4242');
      await check(page, 'portal-journey-04-card-saved');
      const methods = (await acme.http.GET('/v1/customers/{id}/payment-methods', { path: { id: customer } })).body!.data;
      expect(methods).toEqual([expect.objectContaining({ type: 'card', brand: 'visa', last4: '4242', is_default: true })]);

      // Changes seats: previewed in words (a preview writes nothing), then confirmed.
      await page.locator(`#subscriptions tr[data-subscription="${sub.id}"]`).getByRole('link', { name: 'Manage' }).click();
      await check(page, 'portal-journey-05-subscription');
      await page.getByLabel('Number of seats').fill('2');
      await page.getByRole('button', { name: 'Preview the change' }).click();
      const summary = await page.locator('[data-preview-summary]').innerText();
      expect(summary).toContain('20 of 30 days');
      expect(summary).toContain('a credit of ₹786.67');
      expect(summary).toContain('an invoice of ₹1,573.34');
      expect(summary).toContain('₹786.67 to pay after the credit');
      await check(page, 'portal-journey-06-seats-preview');
      expect((await subscriptionNow()).quantity).toBe(1);
      await page.locator('#pending button[type=submit]').click();
      expect(await page.locator('.notice').innerText()).toBe('Your seats are changed.');
      expect((await subscriptionNow()).quantity).toBe(2);
      expect((await invoicesOf(acme, sub.id)).at(-1)).toMatchObject({ billing_reason: 'subscription_update', total: 157_334, amount_due: 78_667 });

      // Cancels with a reason, after the cancellation preview.
      await page.locator(`#subscriptions tr[data-subscription="${sub.id}"]`).getByRole('link', { name: 'Manage' }).click();
      await page.getByLabel('Why are you leaving?').selectOption('too_expensive');
      await page.locator('#feedback').fill('Two seats is more than we need');
      await page.locator('#cancel button[type=submit]').click();
      expect(await page.locator('[data-preview-summary]').innerText()).toContain('stays active until 01 May 2026');
      await check(page, 'portal-journey-07-cancel-preview');
      expect((await subscriptionNow()).cancel_at_period_end).toBe(false);
      await page.locator('#pending button[type=submit]').click();
      expect(await page.locator('.notice').innerText()).toBe('Your subscription is cancelled.');
      await check(page, 'portal-journey-08-cancelled');
    } finally {
      await context.close();
    }
    expect(await subscriptionNow()).toMatchObject({
      status: 'active',
      quantity: 2,
      cancel_at_period_end: true,
      cancellation_reason: 'too_expensive',
      cancellation_feedback: 'Two seats is more than we need',
    });
  }, 180_000);
});
