import { mkdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, chromiumSkipNote, hasChromium, launchChromium, screenshotAndSeriousAxeViolations, signInWithApiKey } from '../support/browser.js';
import { startAccountingSandbox, type AccountingSandbox } from '../support/accounting-sandbox.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';

/**
 * The finance screens in Chromium, each used as a person would (names, never ids) and checked over
 * the API: advances (receive, refund paid by hand, mark paid), the customer's balance statement,
 * quotes (create from a plan, accept into an invoice), gifts, checkout links, accounting (connect
 * Xero through its sign-in, sync now) and the customer's usage by day. Screenshots in
 * test-output/finance-screens/, axe-core with no serious or critical violation on every screen.
 */
const skipNote = chromiumSkipNote('finance screens');
const OUT = 'test-output/finance-screens';

let t: TestKosh;
let sandbox: AccountingSandbox;
let browser: Browser;
let base: string;
let tenant: Tenant;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
let customerId: string;

async function check(p: Page, name: string): Promise<void> {
  const serious = await screenshotAndSeriousAxeViolations(p, `${OUT}/${name}.png`);
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([]);
}

async function go(path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${base}/dashboard${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

function rupees(minor: number): string {
  return new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR' }).format(minor / 100);
}

async function pick(scope: Page | ReturnType<Page['locator']>, label: string, text: string, option: RegExp): Promise<void> {
  await scope.getByRole('combobox', { name: label }).fill(text);
  await scope.getByRole('option', { name: option }).click();
}

/** A free loopback port, so KOSH_PUBLIC_URL (where the OAuth providers send the browser back) is this Kosh. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeAll(async () => {
  if (!hasChromium) return;
  buildDashboard();
  mkdirSync(OUT, { recursive: true });
  sandbox = await startAccountingSandbox();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  t = await startTestKosh({ env: { ...sandbox.env(), KOSH_PUBLIC_URL: base } });
  await t.kosh.app.listen({ host: '127.0.0.1', port });
  browser = await launchChromium();
  tenant = await t.registerTenant({ state_code: '29', gstin: `29AAPFU0939F1Z${gstinCheckCharacter('29AAPFU0939F1Z')}` });
  customerId = (
    await tenant.api('POST', '/v1/customers', {
      email: 'accounts@acme.test',
      name: 'Acme Traders',
      billing_address: { line1: '12 MG Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
    })
  ).body.data.id;
  expect((await tenant.api('POST', '/v1/plans', { name: 'Growth monthly', interval_unit: 'month', amount: 499_900, currency: 'INR' })).status).toBe(201);
  expect((await tenant.api('POST', '/v1/billable-metrics', { code: 'api_calls', name: 'API calls', aggregation: 'count' })).status).toBe(201);
  const usagePlan = await tenant.api('POST', '/v1/plans', {
    name: 'API usage',
    interval_unit: 'month',
    prices: [{ currency: 'INR', billing_scheme: 'metered', metric_code: 'api_calls', amount: 50 }],
  });
  expect(usagePlan.status, usagePlan.text).toBe(201);
  expect((await tenant.api('POST', '/v1/subscriptions', { customer_id: customerId, plan_id: usagePlan.body.data.id })).status).toBe(201);
  const gateway = await tenant.api('POST', '/v1/gateway-connections', {
    provider: 'test',
    credentials: { webhook_secret: 'whsec_finance_screens' },
    currencies: ['INR'],
  });
  expect(gateway.status, gateway.text).toBe(201);
  context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // The owner's API key (development sign-in): every action is offered.
  await signInWithApiKey(page, base, tenant.key);
}, 240_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await t?.close();
  await sandbox?.close();
});

describe.skipIf(!hasChromium)(`the finance screens in a browser${skipNote}`, () => {
  it('receives an advance, refunds part of it by hand, marks the refund paid, and shows the balance statement', async () => {
    await go('/advances', 'Advances');
    const form = page.getByRole('form', { name: 'Receive an advance' });
    await pick(form, 'Customer', 'Acme', /Acme Traders/);
    await form.getByLabel('Amount received').fill('11,800.00');
    await form.getByLabel('Reference').fill('UTR0001');
    await check(page, '01-advance-form');
    await form.getByRole('button', { name: 'Record the advance' }).click();
    await page.getByText('Advance of ₹11,800.00 recorded with its receipt voucher.').waitFor();
    expect(await form.getByLabel('Amount received').inputValue()).toBe('');
    const advances = (await tenant.api('GET', `/v1/advances?customer_id=${customerId}`)).body.data as {
      id: string;
      amount: number;
      receipt_voucher_number: string;
    }[];
    expect(advances).toHaveLength(1);
    expect(advances[0]!.amount).toBe(1_180_000);
    // The list names the customer and the voucher; the voucher opens the advance.
    await page.getByRole('row').filter({ hasText: 'Acme Traders' }).getByRole('link', { name: advances[0]!.receipt_voucher_number }).click();
    await page.getByRole('heading', { level: 1, name: `Advance ${advances[0]!.receipt_voucher_number}` }).waitFor();

    const refund = page.getByRole('form', { name: 'Refund the advance' });
    await refund.getByLabel('Amount to refund').fill('1,000.00');
    await refund.getByLabel('Reason').fill('Scope reduced');
    await refund.getByRole('button', { name: 'Refund' }).click();
    await page.getByText(/Refund of ₹1,000.00 issued .*to be paid by hand/).waitFor();
    await page.getByLabel('Payout reference').fill('UTR0002');
    await check(page, '02-advance-refund');
    await page.getByRole('button', { name: 'Mark paid' }).click();
    await page.getByText('Refund marked paid (UTR0002).').waitFor();
    const advance = (await tenant.api('GET', `/v1/advances/${advances[0]!.id}`)).body.data;
    expect(advance.balance).toBe(1_080_000);
    const movement = advance.movements.find((m: { kind: string }) => m.kind === 'refunded');
    expect(movement).toMatchObject({ amount: 100_000, payout: 'offline', reason: 'Scope reduced' });
    expect((await tenant.api('GET', `/v1/refunds/${movement.refund_id}`)).body.data.status).toBe('succeeded');

    await go(`/customers/${customerId}`, 'Acme Traders');
    const statement = page.locator('section', { has: page.getByRole('heading', { name: 'Balance statement' }) });
    await statement.getByTestId('statement-closing').getByText('Closing balance: ₹10,800.00').waitFor();
    await statement.getByText('Opening balance: ₹0.00').waitFor();
    await statement.getByRole('cell', { name: 'advance received' }).waitFor();
    await statement.getByRole('cell', { name: 'advance refunded' }).waitFor();
    // From tomorrow on, both movements are before the range: they make up the opening balance.
    await statement.getByLabel('From').fill('2026-04-02');
    await statement.getByText('Opening balance: ₹10,800.00').waitFor();
    await statement.getByLabel('From').fill('');
    const csv = decodeURIComponent(
      (await statement.getByRole('link', { name: 'Download the statement (CSV)' }).getAttribute('href'))!.split(',').slice(1).join(','),
    );
    expect(csv).toContain('advance_received');
    expect(csv.trim().split('\n').at(-1)).toBe(',closing_balance,,,10800.00');
    // The API's own balance agrees.
    const balance = (await tenant.api('GET', `/v1/customers/${customerId}/balance`)).body.data.balances[0];
    expect(balance.sources.advances).toBe(1_080_000);
    await check(page, '03-customer-statement');
  }, 120_000);

  it('creates a quote from a plan, accepts it into an invoice, and makes a checkout link for that invoice', async () => {
    await go('/quotes', 'Quotes');
    const form = page.getByRole('form', { name: 'New quote' });
    await pick(form, 'Customer', 'Acme', /Acme Traders/);
    await pick(form, 'Plan', 'Growth', /Growth monthly/);
    await form.getByLabel('Quantity').fill('2');
    await check(page, '04-quote-form');
    await form.getByRole('button', { name: 'Create quote' }).click();
    // 2 × ₹4,999.00 with 18 % GST (Karnataka to Karnataka) = ₹11,797.64.
    await page.getByText(/Quote .+ created: ₹11,797.64 with GST\./).waitFor();
    expect(await form.getByRole('combobox', { name: 'Customer' }).inputValue()).toBe('');
    const [quote] = (await tenant.api('GET', '/v1/quotes')).body.data;
    expect(quote).toMatchObject({ customer_id: customerId, status: 'draft', subtotal: 999_800, total: 1_179_764 });
    expect(quote.line_items).toMatchObject([{ description: 'Growth monthly', quantity: 2, unit_amount: 499_900 }]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Accept ${quote.quote_number}` }).click();
    await page.getByText(`Quote ${quote.quote_number} accepted: its invoice is issued.`).waitFor();
    const accepted = (await tenant.api('GET', `/v1/quotes/${quote.id}`)).body.data;
    expect(accepted.status).toBe('accepted');
    const invoice = (await tenant.api('GET', `/v1/invoices/${accepted.invoice_id}`)).body.data;
    expect(invoice.status).toBe('open');
    await page.getByRole('row').filter({ hasText: quote.quote_number }).getByRole('link', { name: invoice.number }).waitFor();
    await check(page, '05-quotes');

    await go('/checkout-links', 'Checkout links');
    const link = page.getByRole('form', { name: 'New checkout link' });
    await pick(link, 'Customer', 'Acme', /Acme Traders/);
    await pick(link, 'Open invoice', invoice.number, new RegExp(invoice.number));
    await link.getByRole('button', { name: 'Create link' }).click();
    // The advance left on the customer's balance (₹10,800.00) was applied when the invoice was issued.
    expect(invoice.amount_due).toBe(1_179_764 - 1_080_000);
    await page.getByText(`Checkout link for ${invoice.number} (${rupees(invoice.amount_due)} due) created.`).waitFor();
    const url = await page.getByRole('link', { name: `Open the checkout page for ${invoice.number}` }).getAttribute('href');
    expect(url).toMatch(new RegExp(`^${base}/checkout/${tenant.tenantId}/`));
    await page.getByRole('button', { name: `Copy link for ${invoice.number}` }).click();
    await page.getByText(`The checkout link for ${invoice.number} is copied.`).waitFor();
    // The link is Kosh's hosted checkout page of that invoice.
    const hosted = await fetch(url!);
    expect(hosted.status).toBe(200);
    expect(await hosted.text()).toContain(invoice.number);
    await check(page, '06-checkout-links');
  }, 120_000);

  it('sells a gift to a buyer picked by name', async () => {
    await go('/gifts', 'Gifts');
    const form = page.getByRole('form', { name: 'Sell a gift' });
    await pick(form, 'Plan', 'Growth', /Growth monthly/);
    await pick(form, 'Buyer', 'Acme', /Acme Traders/);
    await form.getByLabel("Recipient's e-mail").fill('friend@example.test');
    await form.getByLabel('Months').fill('3');
    await form.getByRole('button', { name: 'Create gift' }).click();
    await page.getByText(/Gift \S+ created for friend@example.test: ₹14,997.00 before GST, invoiced to the buyer\./).waitFor();
    const [gift] = (await tenant.api('GET', '/v1/gifts')).body.data;
    expect(gift).toMatchObject({
      buyer_customer_id: customerId,
      recipient_email: 'friend@example.test',
      duration_months: 3,
      status: 'purchased',
      amount: 1_499_700,
    });
    await page.getByRole('row').filter({ hasText: gift.code }).getByRole('link', { name: 'Acme Traders' }).waitFor();
    await check(page, '07-gifts');
  }, 120_000);

  it('connects Xero through its sign-in page, shows the connection and queues a sync', async () => {
    await go('/accounting', 'Accounting');
    const form = page.getByRole('form', { name: 'Connect an accounting system' });
    await form.getByLabel('Provider').selectOption('xero');
    await check(page, '08-accounting-empty');
    await form.getByRole('button', { name: 'Connect' }).click();
    // The provider's sign-in (the local OAuth server) sends the browser back to the dashboard.
    await page.waitForURL(/\/dashboard\/settings\/accounting\?/);
    await page.getByText('Xero is connected.').waitFor();
    const connections = (await tenant.api('GET', '/v1/accounting/connections')).body.data;
    expect(connections).toHaveLength(1);
    expect(connections[0]).toMatchObject({ provider: 'xero', status: 'active' });
    // Tokens are kept by Kosh and never shown back.
    expect(JSON.stringify(connections[0])).not.toMatch(/token/i);
    expect(await page.content()).not.toMatch(/access_token|refresh_token/);
    await page.getByRole('cell', { name: 'Xero', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Sync Xero now' }).click();
    await page.getByText('A sync of Xero is queued.').waitFor();
    const runs = (await tenant.api('GET', '/v1/accounting/sync-status')).body.runs;
    expect(runs).toHaveLength(1);
    expect(runs[0].connection_id).toBe(connections[0].id);
    await check(page, '09-accounting');
  }, 120_000);

  it("charts the customer's usage this period day by day", async () => {
    // Days of India time (UTC+5:30): 1 April has one call; 19:00 UTC on 1 April is already 2 April
    // there (three calls in all); 3 April has one.
    const events = [['2026-04-01T00:00:00Z'], ['2026-04-01T19:00:00Z'], ['2026-04-02T09:00:00Z'], ['2026-04-02T18:00:00Z'], ['2026-04-03T10:00:00Z']].map(
      ([ts], i) => ({ transaction_id: `call-${i}`, customer_id: customerId, metric_code: 'api_calls', timestamp: ts }),
    );
    t.clock.set('2026-04-03T12:00:00Z');
    const recorded = await tenant.api('POST', '/v1/usage/events/batch', { events });
    expect(recorded.body.data, recorded.text).toMatchObject({ accepted: 5, rejected: [] });
    const daily = (await tenant.api('GET', `/v1/usage/daily?customer_id=${customerId}&metric_code=api_calls&from=2026-04-01T00:00:00Z&to=2026-05-01T00:00:00Z`))
      .body.data;
    expect(daily.time_zone).toBe('Asia/Kolkata');
    expect(daily.days.slice(0, 4)).toEqual([
      { date: '2026-04-01', quantity: 1 },
      { date: '2026-04-02', quantity: 3 },
      { date: '2026-04-03', quantity: 1 },
      { date: '2026-04-04', quantity: 0 },
    ]);
    await go(`/customers/${customerId}`, 'Acme Traders');
    const chart = page.locator('figure.chart', { hasText: 'API calls by day this period' });
    await chart.waitFor();
    await chart.getByText('Data').click();
    const days = await chart.locator('tbody tr').allTextContents();
    expect(days).toHaveLength(daily.days.length);
    expect(days.slice(0, 3)).toEqual(daily.days.slice(0, 3).map((d: { quantity: number }) => expect.stringMatching(new RegExp(`${d.quantity}$`))));
    await check(page, '10-customer-usage-by-day');
  }, 120_000);

  it('shows a support operator the records but none of the money or admin actions', async () => {
    const invited = await tenant.api('POST', '/v1/users/invitations', { email: 'support@acme-billing.test', role: 'support' });
    expect(invited.status).toBe(201);
    const link = new URL(invited.body.data.accept_url as string);
    const support = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const p = await support.newPage();
    p.on('pageerror', (error) => pageErrors.push(error.message));
    await p.goto(`${base}${link.pathname}${link.search}`);
    await p.getByLabel('Your name').fill('Sam Support');
    await p.getByLabel('Password', { exact: true }).fill('correct horse battery 9');
    await p.getByLabel('Password again').fill('correct horse battery 9');
    await p.getByRole('button', { name: 'Join' }).click();
    await p.waitForURL(/\/dashboard\/settings\/security/);
    for (const [path, heading, row, forms] of [
      ['/advances', 'Advances', 'Acme Traders', ['Receive an advance']],
      ['/quotes', 'Quotes', 'Growth monthly', ['New quote']],
      ['/gifts', 'Gifts', 'friend@example.test', ['Sell a gift']],
      ['/accounting', 'Accounting', 'Demo Company', ['Connect an accounting system']],
    ] as const) {
      await p.goto(`${base}/dashboard${path}`);
      await p.getByRole('heading', { level: 1, name: heading }).waitFor();
      await p.getByRole('row').filter({ hasText: row }).first().waitFor();
      for (const name of forms) expect(await p.getByRole('form', { name }).count(), `${path}: ${name}`).toBe(0);
      expect(await p.getByRole('button', { name: /^(Accept|Decline|Cancel|Sync|Disconnect) / }).count(), path).toBe(0);
    }
    await p.goto(`${base}/dashboard/checkout-links`);
    await p.getByText('Checkout links are created by finance.').waitFor();
    await check(p, '11-support-checkout-links');
    await support.close();
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
