import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumSkipNote, hasChromium, startBrowserKosh } from '../support/browser.js';
import { type TestKosh } from '../support/harness.js';

/**
 * The API reference at /docs renders in a real browser under the security headers (its CSP lets
 * its own scripts and styles run, nothing else). Skipped, saying so, where chromium is missing.
 */
const skipNote = chromiumSkipNote('docs');

let t: TestKosh;
let browser: Browser;
let base: string;

beforeAll(async () => {
  if (!hasChromium) return;
  ({ t, browser, base } = await startBrowserKosh());
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`/docs in a browser${skipNote}`, () => {
  it('renders the API reference without a CSP violation', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text());
    });
    page.on('pageerror', (error) => violations.push(error.message));
    const res = await page.goto(`${base}/docs`);
    expect(res?.status()).toBe(200);
    expect(res?.headers()['content-security-policy']).toMatch(/script-src 'self'/);
    await page.waitForSelector('.swagger-ui .info .title', { timeout: 60_000 });
    expect(await page.textContent('.swagger-ui .info .title')).toContain('Kosh API');
    await page.waitForSelector('.opblock', { timeout: 60_000 });
    expect(violations).toEqual([]);
    await page.close();
  });
});
