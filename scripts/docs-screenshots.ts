/**
 * npm run docs:screenshots — README's dashboard screenshots (docs/screenshots/*.png, 1280×800).
 *
 * Starts Kosh (`kosh serve`, test mode) on a fresh embedded database in a temporary directory,
 * seeds one tenant through the API as a business would use it (a GST-registered supplier in
 * Karnataka, customers with addresses, plans with flat and metered prices, subscriptions and their
 * invoices, payments, usage, a credit note), signs in to the dashboard with the tenant's API key in
 * Debian's chromium (playwright-core) and photographs the main pages. Nothing is kept but the PNGs.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';

const OUT = 'docs/screenshots';
const PORT = Number(process.env.SCREENSHOT_PORT ?? 18_765);
const BASE = `http://127.0.0.1:${PORT}`;
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';

type Body = Record<string, unknown>;

async function request(method: string, path: string, body?: Body, key?: string): Promise<Body> {
  const response = await fetch(`${BASE}${path}`, {
    method,
    headers: {
      ...(body ? { 'content-type': 'application/json' } : {}),
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(method !== 'GET' ? { 'idempotency-key': crypto.randomUUID() } : {}),
    },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return text ? (JSON.parse(text) as Body) : {};
}

async function waitUntilReady(): Promise<void> {
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${BASE}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error('Kosh did not become ready');
}

const data = (b: Body) => b.data as Body;

async function seed(): Promise<string> {
  const gstin = `29AAPFU0939F1Z${gstinCheckCharacter('29AAPFU0939F1Z')}`;
  const registered = data(await request('POST', '/auth/register', { name: 'Ledgerly Software', email: 'owner@ledgerly.example', state_code: '29', gstin }));
  const key = (registered.api_key as Body).key as string;
  const api = (method: string, path: string, body?: Body) => request(method, path, body, key);

  const entities = (await api('GET', '/v1/entities')).data as Body[];
  const primary = entities.find((e) => e.is_primary)!;
  await api('PATCH', `/v1/entities/${primary.id as string}`, {
    legal_name: 'Ledgerly Software Private Limited',
    address: { line1: '4th Floor, 80 Feet Road', city: 'Bengaluru', state_code: '29', postal_code: '560034', country: 'IN' },
  });
  await api('POST', '/v1/gateway-connections', { provider: 'test' });
  await api('POST', '/v1/billable-metrics', { code: 'api_calls', name: 'API calls', aggregation: 'count' });
  const plan = async (name: string, amount: number, metered?: number) =>
    data(
      await api('POST', '/v1/plans', {
        name,
        interval_unit: 'month',
        amount,
        currency: 'INR',
        hsn_code: '998314',
        ...(metered ? { prices: [{ billing_scheme: 'metered', metric_code: 'api_calls', amount: metered, currency: 'INR' }] } : {}),
      }),
    );
  const plans = [await plan('Starter monthly', 99_900), await plan('Team monthly', 4_99_900, 50), await plan('Enterprise monthly', 24_99_900)];

  const people: [string, string, string, string, string][] = [
    ['Mysore Silks', 'accounts@mysore-silks.example', 'Mysuru', '29', '570001'],
    ['Chennai Freight Lines', 'ap@chennai-freight.example', 'Chennai', '33', '600001'],
    ['Pune Precision Tools', 'finance@pune-precision.example', 'Pune', '27', '411001'],
    ['Hyderabad Health Labs', 'billing@hyd-health.example', 'Hyderabad', '36', '500001'],
    ['Kochi Spice Exports', 'accounts@kochi-spice.example', 'Kochi', '32', '682001'],
    ['Delhi Design Studio', 'studio@delhi-design.example', 'New Delhi', '07', '110001'],
    ['Jaipur Textiles', 'ap@jaipur-textiles.example', 'Jaipur', '08', '302001'],
    ['Bengaluru Robotics', 'finance@blr-robotics.example', 'Bengaluru', '29', '560001'],
  ];
  let n = 0;
  for (const [name, email, city, state, pin] of people) {
    const customer = data(
      await api('POST', '/v1/customers', {
        name,
        email,
        billing_address: { line1: `${12 + n} Main Road`, city, state_code: state, postal_code: pin, country: 'IN' },
      }),
    );
    const subscription = data(await api('POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plans[n % 3]!.id, quantity: 1 + (n % 4) }));
    const invoice = data(await api('GET', `/v1/invoices/${subscription.latest_invoice_id as string}`));
    if (n % 3 !== 2)
      await api('POST', '/v1/payments/offline', {
        customer_id: customer.id,
        invoice_id: invoice.id,
        amount: invoice.amount_due,
        currency: 'INR',
        payment_type: 'bank_transfer',
        reference_number: `UTR${String(240_000 + n * 137)}`,
      });
    if (n % 3 === 1) {
      const events = Array.from({ length: 40 + n * 25 }, (_, i) => ({ transaction_id: `seed-${n}-${i}`, customer_id: customer.id, metric_code: 'api_calls' }));
      await api('POST', '/v1/usage/events/batch', { events });
    }
    if (n === 0) await api('POST', '/v1/credit-notes', { customer_id: customer.id, invoice_id: invoice.id, amount: 23_600, reason: 'Two days of downtime' });
    n++;
  }
  return key;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kosh-screenshots-'));
  // The embedded database: no DATABASE_URL.
  const { DATABASE_URL: _unused, ...env } = process.env;
  const kosh = spawn(process.execPath, ['bin/kosh.js', 'serve'], {
    env: { ...env, PORT: String(PORT), KOSH_MODE: 'test', KOSH_DATA_DIR: dir, KOSH_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
  try {
    await waitUntilReady();
    const key = await seed();
    mkdirSync(OUT, { recursive: true });
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${BASE}/dashboard/sign-in`);
    await page.getByRole('button', { name: /API key/ }).click();
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    const customers = data(await request('GET', '/v1/customers?q=Chennai', undefined, key)) as unknown as Body[];
    const customerId = customers[0]!.id as string;
    const invoices = data(await request('GET', `/v1/invoices?customer_id=${customerId}`, undefined, key)) as unknown as Body[];
    const plans = data(await request('GET', '/v1/plans?q=Team', undefined, key)) as unknown as Body[];
    const shots: [string, string, string | RegExp][] = [
      ['overview', '/', 'Overview'],
      ['customers', '/customers', 'Customers'],
      ['customer', `/customers/${customerId}`, 'Chennai Freight Lines'],
      ['invoices', '/invoices', 'Invoices'],
      ['invoice', `/invoices/${invoices[0]!.id as string}`, /^Invoice /],
      ['subscriptions', '/subscriptions', 'Subscriptions'],
      ['plan', `/plans/${plans[0]!.id as string}`, 'Team monthly'],
      ['usage', '/metrics', 'Usage'],
    ];
    for (const [name, path, heading] of shots) {
      await page.goto(`${BASE}/dashboard${path}`);
      await page.getByRole('heading', { level: 1, name: heading }).waitFor();
      await page.waitForLoadState('networkidle');
      await page.screenshot({ path: `${OUT}/${name}.png` });
      console.log(`${OUT}/${name}.png`);
    }
  } finally {
    await browser.close();
    kosh.kill('SIGTERM');
    await new Promise((r) => kosh.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
