import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, screenshotAndSeriousAxeViolations, startBrowserKosh } from '../support/browser.js';
import type { Tenant, TestKosh } from '../support/harness.js';
import { createCustomer, createPlan, karnatakaTenant, subscribe } from '../subscriptions/helpers.js';

/**
 * The portal's credits and features pages in Chromium (issue #30): reached from the dashboard's
 * links, readable as a person sees them, with no serious or critical axe-core violation.
 * Screenshots in test-output/screenshots/.
 */
const skipNote = chromiumSkipNote('portal credits');
const OUT = 'test-output/screenshots';

let t: TestKosh;
let browser: Browser;
let base: string;
let acme: Tenant;

beforeAll(async () => {
  if (!hasChromium) return;
  mkdirSync(OUT, { recursive: true });
  ({ t, browser, base } = await startBrowserKosh());
  acme = await karnatakaTenant(t);
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`portal credits and features in a browser${skipNote}`, () => {
  it('shows the credit grants and features from the dashboard links, without serious axe violations', async () => {
    t.clock.set('2026-04-01T00:00:00Z');
    const plan = await createPlan(acme, { amount: 100_000 });
    expect((await acme.api('POST', '/v1/features', { key: 'seats', name: 'Seats', type: 'quantity' })).status).toBe(201);
    expect((await acme.api('PUT', `/v1/plans/${plan.id}/entitlements`, [{ feature_key: 'seats', value: 10 }])).status).toBe(200);
    const customer = await createCustomer(acme);
    await subscribe(acme, { customer_id: customer, plan_id: plan.id });
    const promo = await acme.api('POST', `/v1/customers/${customer}/credit-grants`, {
      currency: 'INR',
      category: 'promotional',
      amount: 50_000,
      name: 'Welcome',
    });
    expect(promo.status, promo.text).toBe(201);
    const link = await acme.api('POST', `/v1/customers/${customer}/portal-sessions`);

    const context = await browser.newContext();
    const page = await context.newPage();
    try {
      await page.goto(`${base}/portal/login?token=${encodeURIComponent(link.body.data.token)}`);
      await page.getByRole('navigation', { name: 'More of your account' }).getByRole('link', { name: 'Prepaid credits' }).click();
      await page.getByRole('heading', { level: 1, name: 'Prepaid credits' }).waitFor();
      expect(await page.locator('tr[data-credit-balance="INR"]').innerText()).toContain('₹500.00');
      expect(await page.locator(`tr[data-credit-grant="${promo.body.data.id}"]`).innerText()).toMatch(/Welcome\s+Promotional\s+active/);
      expect(await screenshotAndSeriousAxeViolations(page, `${OUT}/portal-credits.png`)).toEqual([]);

      await page.getByRole('link', { name: 'Back to your billing' }).click();
      await page.getByRole('link', { name: 'Features' }).click();
      await page.getByRole('heading', { level: 1, name: 'Features' }).waitFor();
      expect(await page.locator('tr[data-feature="seats"]').innerText()).toMatch(/Seats\s+Up to 10/);
      expect(await screenshotAndSeriousAxeViolations(page, `${OUT}/portal-features.png`)).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
