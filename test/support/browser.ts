import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestKosh, type TestKosh } from './harness.js';

/**
 * Browser tests drive Debian's chromium through playwright-core against a Kosh listening on a
 * loopback port. CI installs chromium (.ci/run); where it is missing the caller skips, saying so.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/** Warns once for a file whose browser tests are skipped; returns the suffix for the describe title. */
export function chromiumSkipNote(what: string): string {
  if (hasChromium) return '';
  console.warn(`${what} browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
  return ` (skipped: ${CHROMIUM} missing)`;
}

/** Builds the dashboard into dist/dashboard/ (npm's prepare does it too; a test builds what dashboard/ holds now). */
export function buildDashboard(): void {
  const built = spawnSync(process.execPath, ['bin/kosh.js', '--build-dashboard'], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the dashboard build failed');
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}

export interface BrowserKosh {
  t: TestKosh;
  browser: Browser;
  /** `http://127.0.0.1:<port>` of the listening app. */
  base: string;
  close(): Promise<void>;
}

/** A fresh Kosh listening on loopback and a headless chromium. */
export async function startBrowserKosh(options?: Parameters<typeof startTestKosh>[0]): Promise<BrowserKosh> {
  const t = await startTestKosh(options);
  await t.kosh.app.listen({ host: '127.0.0.1', port: 0 });
  const base = `http://127.0.0.1:${(t.kosh.app.server.address() as AddressInfo).port}`;
  const browser = await launchChromium();
  return {
    t,
    browser,
    base,
    async close() {
      await browser.close();
      await t.close();
    },
  };
}

export type AxeViolation = { id: string; impact: string; targets: string[] };

/**
 * A full-page screenshot at `screenshotPath`, then axe-core on the page: the serious and critical
 * violations (the caller expects none). axe is evaluated through the DevTools protocol, so a page's
 * CSP (which refuses injected script tags, as it should) does not stop it. `idle: false` for a page
 * that may never report network idle (the e-mail preview's sandboxed frame); its caller waits for
 * what it needs instead.
 */
export async function screenshotAndSeriousAxeViolations(page: Page, screenshotPath: string, { idle = true }: { idle?: boolean } = {}): Promise<AxeViolation[]> {
  if (idle) await page.waitForLoadState('networkidle');
  await page.screenshot({ path: screenshotPath, fullPage: true });
  await page.evaluate(readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8'));
  const violations = await page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: { run: (ctx: Document, o: unknown) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
      }
    ).axe;
    const r = await axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, targets: v.nodes.map((n) => n.target.join(' ')).slice(0, 3) }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/** Signs in to the dashboard with a tenant's API key (the development sign-in) and waits for the overview. */
export async function signInWithApiKey(page: Page, base: string, key: string): Promise<void> {
  await page.goto(`${base}/dashboard/sign-in`);
  await page.getByRole('button', { name: /API key/ }).click();
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
}
