import { mkdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, launchChromium } from '../../../test/support/browser.js';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { SAMPLE_DATA, TEMPLATE_NAMES } from './index.js';

/**
 * Every default e-mail template's HTML, rendered by the preview endpoint, opened in Chromium:
 * screenshots land in test-output/emails/ and the key content must be visible (not just present).
 */
const skipNote = chromiumSkipNote('e-mail templates');

let t: TestKosh;
let browser: Browser;
let tenant: Tenant;

beforeAll(async () => {
  if (!hasChromium) return;
  t = await startTestKosh();
  browser = await launchChromium();
  tenant = await t.registerTenant({ name: 'Nilgiri Software' });
  mkdirSync('test-output/emails', { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** What must be readable in each template's HTML (from its sample data). */
function keyContent(name: (typeof TEMPLATE_NAMES)[number]): string[] {
  const data = SAMPLE_DATA[name] as Record<string, Record<string, string>>;
  const out = ['Nilgiri Software', data.customer!.name!];
  if (data.invoice?.number) out.push(data.invoice.number);
  if (data.invoice?.amount_due && name !== 'invoice_finalized') out.push(data.invoice.amount_due);
  if (data.payment?.amount) out.push(data.payment.amount);
  if (data.credit_note?.number) out.push(data.credit_note.number);
  if (data.subscription?.plan_name) out.push(data.subscription.trial_ends_on!);
  return out;
}

describe.skipIf(!hasChromium)(`default e-mail templates in a browser${skipNote}`, () => {
  it.each([...TEMPLATE_NAMES])('%s renders its key content visibly', async (name) => {
    const res = await tenant.api('POST', `/v1/email-templates/${name}/preview`, {});
    expect(res.status, res.text).toBe(200);
    const preview = res.body.data;
    expect(preview.missing_variables).toEqual([]);
    const page = await browser.newPage({ viewport: { width: 640, height: 800 } });
    try {
      await page.setContent(preview.html, { waitUntil: 'load' });
      for (const text of keyContent(name)) await expect(page.getByText(text, { exact: false }).first().isVisible(), `${name}: ${text}`).resolves.toBe(true);
      if ((SAMPLE_DATA[name] as { pay_url?: string }).pay_url) {
        const link = page.getByRole('link', { name: /Pay invoice/ });
        expect(await link.isVisible()).toBe(true);
        expect(await link.getAttribute('href')).toBe((SAMPLE_DATA[name] as { pay_url: string }).pay_url);
      }
      // Nothing the engine should have replaced is left for the reader.
      expect(await page.locator('body').innerText()).not.toContain('{{');
      await page.screenshot({ path: `test-output/emails/${name}.png`, fullPage: true });
    } finally {
      await page.close();
    }
  });
});
