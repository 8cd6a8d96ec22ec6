/**
 * npm run bench:dashboard — the dashboard's overview and table pages in Chromium with a large tenant.
 *
 * Seeds one tenant (set-based SQL, not through the API) with 10 000 customers and N invoices
 * (default 100 000: 60 % paid, 30 % open — a third of those overdue — 10 % void), one line each.
 * Then serves Kosh on loopback, opens the built dashboard in Debian's chromium, and measures
 * from navigation start to the page's data on screen (median of 5 loads each):
 *   overview_ms        /dashboard: MRR and revenue charts, outstanding and overdue (invoice aging)
 *   invoices_ms        /dashboard/invoices: the first page of the server-paginated table, total count
 *   invoices_open_ms   the table filtered by status=open
 *   invoices_search_ms the table searched by invoice number (q)
 *   customers_ms       /dashboard/customers
 *   customer_ms        a customer's page: subscriptions, usage, payment methods, credit, its invoices (every section loaded)
 *   invoice_ms         an invoice's page: lines, payments, collecting (charge now, TDS certified later) (every section loaded)
 *   gst_returns_ms     /dashboard/gst-returns: last month's GSTR-1 and GSTR-3B (about 8 200 of the invoices)
 *   plans_ms, metrics_ms, subscriptions_ms, payments_ms, credit_notes_ms
 *                      the other main lists (empty in this data set: the page, its query and count)
 * The list count cache is off (KOSH_LIST_COUNT_CACHE_MS=0): every load counts the rows.
 * PostgreSQL when DATABASE_URL is set (a fresh database, dropped afterwards), else PGlite.
 * Prints the figures, then LAST one JSON line.
 *   --n 100000   invoices
 */
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { pino } from 'pino';
import { createKosh } from '../src/app.js';
import { loadConfig } from '../src/platform/config.js';
import { buildDashboard, launchChromium } from '../test/support/browser.js';
import { openTestDatabase } from '../test/support/database.js';
import { gstinCheckCharacter } from '../src/modules/tax/index.js';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
}

const N = arg('n', 100_000);
const CUSTOMERS = Math.min(10_000, N);
const RUNS = 5;

async function main() {
  buildDashboard();
  const database = await openTestDatabase();
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    KOSH_MODE: 'test',
    KOSH_DB_POOL_SIZE: '8',
    KOSH_LIST_COUNT_CACHE_MS: '0',
    KOSH_RATE_LIMIT_KEY_PER_MINUTE: '100000',
    KOSH_RATE_LIMIT_IP_PER_MINUTE: '100000',
  });
  const kosh = await createKosh({ config, database, logger: pino({ level: 'silent' }) });
  const db = database.db;
  const browser = await launchChromium();
  try {
    const registered = await kosh.app.inject({ method: 'POST', url: '/auth/register', payload: { name: 'Dashboard bench', email: 'bench@dashboard.test' } });
    const { tenant, api_key } = registered.json().data as { tenant: { id: string }; api_key: { key: string } };
    const tenantId = tenant.id;
    const seedStarted = performance.now();
    // A GST-registered supplier in Karnataka (29), as the seeded intra-state invoices say: the GST returns page needs its GSTIN.
    const gstin = `29AAPFU0939F1Z${gstinCheckCharacter('29AAPFU0939F1Z')}`;
    await sql`UPDATE legal_entities SET gstin = ${gstin}, state_code = '29' WHERE tenant_id = ${tenantId} AND is_primary`.execute(db);
    await sql`
      INSERT INTO customers (tenant_id, id, email, name, billing_address, created_at, updated_at)
      SELECT ${tenantId}::uuid, gen_random_uuid(), 'c' || i || '@bench.test', 'Customer ' || i, jsonb_build_object('state_code', '29', 'country', 'IN'),
             now() - (i || ' minutes')::interval, now()
      FROM generate_series(1, ${CUSTOMERS}::int) AS i`.execute(db);
    await sql`
      CREATE TEMP TABLE bench_customers AS
      SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenantId}`.execute(db);
    await sql`
      INSERT INTO invoices (tenant_id, id, entity_id, customer_id, number, status, currency, subtotal, tax_amount, cgst_amount, sgst_amount, igst_amount,
                            tax_type, total, amount_paid, amount_due, issued_at, due_date, paid_at, voided_at, created_at, updated_at)
      SELECT ${tenantId}::uuid, gen_random_uuid(), e.id, c.id, 'INV-' || lpad(g.i::text, 7, '0'),
             CASE WHEN g.i % 10 < 6 THEN 'paid' WHEN g.i % 10 < 9 THEN 'open' ELSE 'void' END,
             'INR', 100000, 18000, 9000, 9000, 0, 'intra_state', 118000,
             CASE WHEN g.i % 10 < 6 THEN 118000 ELSE 0 END,
             CASE WHEN g.i % 10 < 6 THEN 0 ELSE 118000 END,
             now() - ((g.i % 365) || ' days')::interval,
             now() - ((g.i % 365) || ' days')::interval + CASE WHEN g.i % 3 = 0 THEN interval '400 days' ELSE interval '30 days' END,
             CASE WHEN g.i % 10 < 6 THEN now() - ((g.i % 365) || ' days')::interval + interval '3 days' END,
             CASE WHEN g.i % 10 = 9 THEN now() - ((g.i % 365) || ' days')::interval + interval '1 day' END,
             now() - ((g.i % 365) || ' days')::interval - (g.i || ' seconds')::interval, now()
      FROM generate_series(1, ${N}::int) AS g(i)
      JOIN bench_customers c ON c.k = g.i % ${CUSTOMERS}::int
      CROSS JOIN (SELECT id FROM legal_entities WHERE tenant_id = ${tenantId} AND is_primary) e`.execute(db);
    await sql`
      INSERT INTO invoice_lines (tenant_id, id, invoice_id, position, description, quantity, unit_amount, amount, hsn_code, rate_bp,
                                 cgst_amount, sgst_amount, igst_amount, tax_amount, total)
      SELECT tenant_id, gen_random_uuid(), id, 0, 'Pro monthly', 1, 100000, 100000, '998314', 1800, 9000, 9000, 0, 18000, 118000
      FROM invoices WHERE tenant_id = ${tenantId}`.execute(db);
    await sql`ANALYZE customers, invoices, invoice_lines`.execute(db);
    const seedSeconds = (performance.now() - seedStarted) / 1000;
    console.log(`seeded ${N} invoices and ${CUSTOMERS} customers in ${seedSeconds.toFixed(1)} s (${database.kind})`);

    // The API calls behind those pages, through the full HTTP stack (median of 5, ms). The GST
    // returns page asks for last month's GSTR-1 and GSTR-3B of the primary entity.
    const entity = await sql<{ id: string }>`SELECT id FROM legal_entities WHERE tenant_id = ${tenantId} AND is_primary`.execute(db);
    const today = new Date(Date.now());
    const lastMonth = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 1, 1));
    const gstQuery = `entity_id=${entity.rows[0]!.id}&period=${String(lastMonth.getUTCMonth() + 1).padStart(2, '0')}${lastMonth.getUTCFullYear()}`;
    const apiMs: Record<string, number> = {};
    for (const url of [
      '/v1/invoices?page=1&limit=25',
      '/v1/invoices?page=1&limit=25&status=open',
      '/v1/invoices?page=1&limit=25&q=0042',
      '/v1/invoices?page=2000&limit=25',
      '/v1/customers?page=1&limit=25',
      '/v1/analytics/invoice-aging',
      '/v1/analytics/mrr',
      '/v1/finance/revenue',
      `/v1/gst/gstr1?${gstQuery}`,
      `/v1/gst/gstr3b?${gstQuery}`,
    ]) {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        const started = performance.now();
        const res = await kosh.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${api_key.key}` } });
        if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const name = url.replace(/entity_id=[^&]+&/, '');
      apiMs[name] = Math.round(times[Math.floor(RUNS / 2)]!);
      console.log(`api ${name.padEnd(45)} ${apiMs[name]} ms`);
    }

    await kosh.app.listen({ host: '127.0.0.1', port: 0 });
    const base = `http://127.0.0.1:${(kosh.app.server.address() as AddressInfo).port}`;
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    // The API-key sign-in (this tab's sessionStorage): the same /v1 calls a session makes.
    await context.addInitScript((key: string) => window.sessionStorage.setItem('kosh.dashboard.api_key', key), api_key.key);
    const page = await context.newPage();
    await page.goto(`${base}/dashboard`);
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    /** Navigation start → the selector on screen (and, when `settled`, no section still "Loading…"), in ms (the page's own clock). */
    async function measure(path: string, ready: string, { settled = false } = {}): Promise<number> {
      const times: number[] = [];
      for (let i = 0; i < RUNS; i += 1) {
        await page.goto('about:blank');
        await page.goto(`${base}/dashboard${path}`, { waitUntil: 'commit' });
        await page.waitForSelector(ready, { timeout: 30_000 });
        if (settled) {
          await page.waitForFunction(() => ![...document.querySelectorAll('[role=status]')].some((e) => e.textContent === 'Loading…'), undefined, {
            timeout: 30_000,
            polling: 'raf',
          });
        }
        times.push(await page.evaluate(() => performance.now()));
      }
      times.sort((a, b) => a - b);
      return Math.round(times[Math.floor(RUNS / 2)]!);
    }

    // A customer with invoices, and one open invoice of theirs, for the detail pages.
    const sample = await sql<{ customer_id: string; invoice_id: string }>`
      SELECT customer_id, id AS invoice_id FROM invoices WHERE tenant_id = ${tenantId} AND status = 'open' ORDER BY number LIMIT 1`.execute(db);
    const { customer_id: customerId, invoice_id: invoiceId } = sample.rows[0]!;
    const firstCell = 'main table tbody tr td >> nth=0';
    const figures: Record<string, number> = {
      overview_ms: await measure('', '.kpi .figure >> nth=3'),
      invoices_ms: await measure('/invoices', 'table tbody tr td a >> nth=0'),
      invoices_open_ms: await measure('/invoices?status=open', 'table tbody tr td a >> nth=0'),
      invoices_search_ms: await measure('/invoices?q=0042', 'table tbody tr td a >> nth=0'),
      customers_ms: await measure('/customers', 'table tbody tr td a >> nth=0'),
    };
    const totals = await page.evaluate(() => document.querySelector('.pager span')?.textContent ?? '');
    console.log(`customers page: ${totals}`);
    Object.assign(figures, {
      customer_ms: await measure(`/customers/${customerId}`, 'section:has(h2:text-is("Invoices")) table tbody tr td a >> nth=0', { settled: true }),
      invoice_ms: await measure(`/invoices/${invoiceId}`, 'main table tbody tr td >> nth=0', { settled: true }),
      gst_returns_ms: await measure('/gst-returns', '.grid2 .card h2:text-is("GSTR-3B")'),
      plans_ms: await measure('/plans', firstCell),
      metrics_ms: await measure('/metrics', firstCell),
      subscriptions_ms: await measure('/subscriptions', firstCell),
      payments_ms: await measure('/payments', firstCell),
      credit_notes_ms: await measure('/credit-notes', firstCell),
    });
    await page.goto(`${base}/dashboard/invoices`);
    await page.waitForSelector('.pager span:has-text("in all")');
    console.log(`invoices page: ${await page.textContent('.pager span')}`);
    for (const [name, ms] of Object.entries(figures)) console.log(`${name.padEnd(20)} ${ms} ms`);
    const load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`load average: ${load}`);
    console.log(JSON.stringify({ ...figures, api_ms: apiMs, invoices: N, customers: CUSTOMERS, database: database.kind, loadavg: load }));
  } finally {
    await browser.close();
    await kosh.close();
    await database.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
