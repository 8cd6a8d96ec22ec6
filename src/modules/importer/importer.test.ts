import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { createCustomer, createCustomerBody } from '../customers/index.js';
import { createSubscriptionRecord } from '../subscriptions/index.js';
import { compareImport } from './compare-import.js';
import { csvFileSource } from './csv-source.js';
import { documentSource, type ImportSource } from './import-source.js';
import type { ImportReport } from './importer.schemas.js';
import { jsonFileSource } from './json-source.js';
import { runImport, type ImportOptions } from './run-import.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/import/', import.meta.url));
const fixture = (name: string) => join(FIXTURES, name);
const validJson = () => jsonFileSource(fixture('valid.json'));
const validCsv = () => csvFileSource({ plans: fixture('plans.csv'), customers: fixture('customers.csv'), subscriptions: fixture('subscriptions.csv') });

let t: TestKosh;
beforeAll(async () => {
  t = await startTestKosh(); // the clock starts at 2026-04-01T00:00:00Z
});
afterAll(() => t.close());

const importInto = (tenant: Tenant, source: ImportSource, options: Partial<ImportOptions> = {}) =>
  runImport(t.database.db, tenant.tenantId, source, { now: () => t.clock.now(), ...options });

const compare = (tenant: Tenant, source: ImportSource) => compareImport({ tx: t.database.db, tenantId: tenant.tenantId, now: t.clock.now() }, source);

/** Rows in every table of the database: what "writes nothing" is measured by. */
async function tableCounts(): Promise<Record<string, number>> {
  const tables = await sql<{ name: string }>`
    SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1`.execute(t.database.db);
  const counts: Record<string, number> = {};
  for (const { name } of tables.rows) {
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(name)}`.execute(t.database.db);
    counts[name] = rows[0]!.n;
  }
  return counts;
}

/** The rows of a typed list call (ask for `limit: 1000`). */
async function listAll(request: Promise<{ status: number; text: string; body: { data: object[] } }>) {
  const res = await request;
  expect(res.status, res.text).toBe(200);
  return res.body.data as Record<string, unknown>[];
}

async function subscriptionsByExternalId(tenant: Tenant) {
  return Object.fromEntries((await listAll(tenant.http.GET('/v1/subscriptions', { query: { limit: 1000 } }))).map((s) => [s.external_id as string, s]));
}

const cleanReport = (created: [number, number, number], skipped: [number, number, number] = [0, 0, 0], dryRun = false): ImportReport => ({
  dry_run: dryRun,
  created: { plans: created[0], customers: created[1], subscriptions: created[2] },
  skipped: { plans: skipped[0], customers: skipped[1], subscriptions: skipped[2] },
  failed: [],
});

describe('import', () => {
  describe('a JSON document', () => {
    let acme: Tenant;
    beforeAll(async () => {
      acme = await t.registerTenant();
    });

    it('creates plans, customers and subscriptions as the file states them, and invoices no one', async () => {
      const before = await tableCounts();
      expect(await importInto(acme, validJson())).toEqual(cleanReport([3, 6, 7]));
      const after = await tableCounts();
      // Nothing but the records themselves: no invoice, ledger entry, event, job or e-mail.
      const changed = Object.keys(after).filter((table) => after[table] !== before[table]);
      expect(changed.sort()).toEqual(['customers', 'plans', 'prices', 'subscriptions']);
      expect(after.subscriptions! - before.subscriptions!).toBe(7);

      const plans = Object.fromEntries((await listAll(acme.http.GET('/v1/plans', { query: { limit: 1000 } }))).map((p) => [p.code as string, p]));
      expect(plans['team-quarterly']).toMatchObject({
        name: 'Team, quarterly',
        interval_unit: 'month',
        interval_count: 3,
        hsn_code: '',
        prices: [expect.objectContaining({ currency: 'USD', amount: 2999 })],
      });
      expect(plans['basic-monthly']).toMatchObject({ hsn_code: '998314', prices: [expect.objectContaining({ currency: 'INR', amount: 49900 })] });

      const customers = Object.fromEntries(
        (await listAll(acme.http.GET('/v1/customers', { query: { limit: 1000 } }))).map((c) => [(c.email as string).toLowerCase(), c]),
      );
      expect(customers['vikram@example.in']).toMatchObject({ email: 'Vikram@Example.in', name: 'Vikram Shah', billing_address: null });
      expect(customers['asha@example.in']).toMatchObject({
        external_id: 'cus_001',
        gstin: '29AAACA1234A1ZG',
        billing_address: { line1: '12 MG Road', line2: null, city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
      });
      expect(customers['omar@example.in']).toMatchObject({ name: null });

      const subs = await subscriptionsByExternalId(acme);
      const planId = (code: string) => plans[code]!.id;
      expect(subs.sub_001).toMatchObject({
        status: 'active',
        customer_id: customers['asha@example.in']!.id,
        plan_id: planId('basic-monthly'),
        currency: 'INR',
        current_period_start: '2026-03-15T00:00:00.000Z',
        current_period_end: '2026-04-15T00:00:00.000Z',
        cancel_at_period_end: false,
        latest_invoice_id: null,
      });
      expect(subs.sub_002).toMatchObject({ status: 'trialing', trial_start: '2026-03-20T00:00:00.000Z', trial_end: '2026-04-20T00:00:00.000Z' });
      expect(subs.sub_003).toMatchObject({ status: 'paused', currency: 'USD', paused_at: '2026-04-01T00:00:00.000Z' });
      expect(subs.sub_004).toMatchObject({ status: 'canceled', ended_at: '2026-03-10T00:00:00.000Z', canceled_at: '2026-03-10T00:00:00.000Z' });
      expect(subs.sub_005).toMatchObject({
        status: 'past_due',
        current_period_start: '2026-03-25T05:00:00.000Z',
        current_period_end: '2026-04-25T05:00:00.000Z',
      });
      expect(subs.sub_006).toMatchObject({ status: 'unpaid', current_period_end: '2026-06-01T00:00:00.000Z' });
      expect(subs.sub_007).toMatchObject({ status: 'active', cancel_at_period_end: true, canceled_at: '2026-04-01T00:00:00.000Z', ended_at: null });
      expect(await listAll(acme.http.GET('/v1/invoices', { query: { limit: 1000 } }))).toEqual([]);
    });

    it('skips on a re-run everything already there, reports it, and changes nothing', async () => {
      const before = await tableCounts();
      expect(await importInto(acme, validJson())).toEqual(cleanReport([0, 0, 0], [3, 6, 7]));
      expect(await tableCounts()).toEqual(before);
    });

    it('skips a subscription already there even when the file now names another customer or plan', async () => {
      const moved = {
        external_id: 'sub_001',
        customer_email: 'ghost@example.in',
        plan_code: 'gone',
        status: 'active',
        current_period_start: '2026-03-15T00:00:00Z',
        current_period_end: '2026-04-15T00:00:00Z',
      };
      expect(await importInto(acme, documentSource({ subscriptions: [moved] }), { dryRun: true })).toEqual(cleanReport([0, 0, 0], [0, 0, 1], true));
      expect(await importInto(acme, documentSource({ subscriptions: [moved] }))).toEqual(cleanReport([0, 0, 0], [0, 0, 1]));
    });

    it('matches customers by e-mail case-insensitively and only within the tenant', async () => {
      const other = await t.registerTenant();
      const shouting = documentSource({ customers: [{ email: 'ASHA@EXAMPLE.IN', name: 'Asha again' }] });
      expect(await importInto(acme, shouting)).toEqual(cleanReport([0, 0, 0], [0, 1, 0]));
      expect(await importInto(other, shouting)).toEqual(cleanReport([0, 1, 0]));
    });

    it('answers not found for a tenant that does not exist, before reading anything', async () => {
      const ghost = { ...acme, tenantId: '0190a4c8-0000-7000-8000-000000000000' };
      await expect(importInto(ghost, validJson())).rejects.toMatchObject({ kind: 'not_found', message: 'tenant not found' });
    });
  });

  describe('dry run', () => {
    it('reports what a real run would do and writes nothing', async () => {
      const tenant = await t.registerTenant();
      const before = await tableCounts();
      const dry = await importInto(tenant, validJson(), { dryRun: true });
      expect(await tableCounts()).toEqual(before);
      expect(dry).toEqual(cleanReport([3, 6, 7], [0, 0, 0], true));
      expect(await importInto(tenant, validJson())).toEqual({ ...dry, dry_run: false });
      const again = await tableCounts();
      expect(await importInto(tenant, validJson(), { dryRun: true })).toEqual(cleanReport([0, 0, 0], [3, 6, 7], true));
      expect(await tableCounts()).toEqual(again);
    });

    it('finds in a broken file every failure the real run finds', async () => {
      const [first, second] = [await t.registerTenant(), await t.registerTenant()];
      const before = await tableCounts();
      const dry = await importInto(first, jsonFileSource(fixture('broken.json')), { dryRun: true });
      expect(await tableCounts()).toEqual(before);
      const real = await importInto(second, jsonFileSource(fixture('broken.json')));
      expect(dry.failed).toEqual(real.failed);
      expect(dry.created).toEqual(real.created);
    });
  });

  describe('three CSV files', () => {
    it('import exactly what the JSON document imports (the compare gate finds no difference)', async () => {
      const tenant = await t.registerTenant();
      expect(await importInto(tenant, validCsv())).toEqual(cleanReport([3, 6, 7]));
      const report = await compare(tenant, validJson());
      expect(report.issues).toEqual([]);
      expect(report.ready).toBe(true);
      const lee = (await listAll(tenant.http.GET('/v1/customers', { query: { email: 'lee@example.com', limit: 1000 } })))[0];
      expect(lee).toMatchObject({
        name: 'Lee "Jo", Jr.',
        billing_address: { line1: '1 Main St', city: 'Austin', state_code: 'TX', country: 'US', postal_code: null },
      });
    });
  });

  describe('validation', () => {
    it('reports every bad row of a JSON file with its line and reason, and imports the others', async () => {
      const tenant = await t.registerTenant();
      const report = await importInto(tenant, jsonFileSource(fixture('broken.json')));
      // gst2@example.in (line 17): a Karnataka GSTIN with a Maharashtra branch address is valid.
      expect(report.created).toEqual({ plans: 1, customers: 3, subscriptions: 1 });
      expect(report.failed.map((f) => [f.kind, f.key, f.line, f.error])).toEqual([
        ['plan', 'zero', 4, 'amount: must be greater than 0'],
        ['plan', 'fraction', 5, 'amount: must be a whole number'],
        ['plan', 'bad-currency', 6, 'currency: is not an ISO 4217 currency code'],
        ['plan', 'bad-interval', 7, 'interval_unit: must be one of day, week, month, year'],
        ['plan', 'ok-plan', 8, "duplicate code 'ok-plan': already on line 3"],
        ['plan', 'typo', 9, 'unknown field amout'],
        ['plan', null, 10, expect.stringMatching(/^malformed JSON: /)],
        ['customer', 'not-an-email', 14, 'email: must be an e-mail address'],
        ['customer', 'GOOD@example.in', 15, "duplicate email 'GOOD@example.in': already on line 13"],
        ['customer', 'gst@example.in', 16, 'gstin: GSTIN has a wrong check character'],
        ['subscription', 's-status', 22, 'status: must be one of active, trialing, paused, canceled, past_due, unpaid'],
        ['subscription', 's-time', 23, expect.stringMatching(/^current_period_start: must be an RFC 3339 date-time/)],
        ['subscription', 's-order', 24, 'current_period_end: must be after current_period_start'],
        ['subscription', 's-plan', 25, "plan_code: no plan 'nope' in this file or in Kosh"],
        ['subscription', 's-customer', 26, "customer_email: no customer 'ghost@example.in' in this file or in Kosh"],
        [
          'subscription',
          's-failed-refs',
          27,
          "plan_code: plan 'zero' was not imported (its row, line 4, failed); customer_email: customer 'gst@example.in' was not imported (its row, line 16, failed)",
        ],
        ['subscription', 's-ok', 28, "duplicate external_id 's-ok': already on line 21"],
        ['subscription', 's-feb30', 29, expect.stringMatching(/^current_period_end: must be an RFC 3339 date-time/)],
        ['subscription', null, 30, 'must be an object'],
      ]);
      const subs = await subscriptionsByExternalId(tenant);
      expect(Object.keys(subs)).toEqual(['s-ok']);
    });

    it('reports malformed CSV rows — quoting, extra and missing columns — and reads on', async () => {
      const tenant = await t.registerTenant();
      const report = await importInto(tenant, csvFileSource({ plans: fixture('broken-plans.csv') }));
      expect(report.failed.map((f) => [f.line, f.key, f.error])).toEqual([
        [3, null, expect.stringMatching(/^malformed quoting/)],
        [4, 'extra', 'extra columns: the row has 8 fields, the header has 7'],
        [5, 'short', 'missing columns: the row has 5 fields, the header has 7'],
        [6, 'amount', 'amount: must be a whole number'],
        [7, 'multi\nline', expect.stringMatching(/^code: letters, digits/)],
      ]);
      const codes = (await listAll(tenant.http.GET('/v1/plans', { query: { limit: 1000 } }))).map((p) => p.code).sort();
      expect(codes).toEqual(['after', 'good-csv']);
    });

    it('reports a quote that is never closed and reads the lines after it', async () => {
      const tenant = await t.registerTenant();
      const report = await importInto(tenant, csvFileSource({ plans: fixture('unclosed-quote-plans.csv') }));
      expect(report.failed).toEqual([{ kind: 'plan', key: null, line: 3, error: expect.stringContaining('opened on line 3 is never closed') }]);
      expect(report.created.plans).toBe(2);
    });

    it('refuses a CSV file whose header lacks a required column or names an unknown one, and reads the other files', async () => {
      const tenant = await t.registerTenant();
      const report = await importInto(tenant, csvFileSource({ plans: fixture('plans.csv'), customers: fixture('missing-column-customers.csv') }));
      expect(report.created).toEqual({ plans: 3, customers: 0, subscriptions: 0 });
      expect(report.failed).toEqual([
        { kind: 'customer', key: null, line: 1, error: expect.stringMatching(/^header row: missing column email; unknown column nickname/) },
      ]);
    });

    it('stops at a broken JSON structure, naming its line, keeping what came before it', async () => {
      const tenant = await t.registerTenant();
      const report = await importInto(tenant, jsonFileSource(fixture('broken-structure.json')));
      expect(report.created).toEqual({ plans: 1, customers: 0, subscriptions: 0 });
      expect(report.failed).toEqual([{ kind: 'file', key: null, line: 6, error: expect.stringContaining('"}" does not close "["') }]);
    });

    it('lets subscriptions name plans and customers already in Kosh, priced in the base currency when the plan has several', async () => {
      const tenant = await t.registerTenant();
      const plan = await tenant.http.POST('/v1/plans', {
        body: {
          name: 'Legacy',
          code: 'legacy',
          interval_unit: 'month',
          prices: [
            { amount: 1000, currency: 'USD' },
            { amount: 80000, currency: 'INR' },
          ],
        },
      });
      expect(plan.status, plan.text).toBe(201);
      expect((await tenant.http.POST('/v1/customers', { body: { email: 'Old@Customer.test' } })).status).toBe(201);
      const sub = {
        customer_email: 'old@customer.test',
        plan_code: 'legacy',
        status: 'active',
        current_period_start: '2026-03-01T00:00:00Z',
        current_period_end: '2026-04-01T00:00:00Z',
      };
      const report = await importInto(tenant, documentSource({ subscriptions: [{ external_id: 'legacy-1', ...sub }] }));
      expect(report).toEqual(cleanReport([0, 0, 1]));
      expect((await subscriptionsByExternalId(tenant))['legacy-1']).toMatchObject({ plan_id: plan.body.data.id, currency: 'INR' });
    });

    it('refuses a row that would meter a metric the customer already has metered, in Kosh or earlier in the file (decision 0190)', async () => {
      const tenant = await t.registerTenant();
      const metric = await tenant.http.POST('/v1/billable-metrics', { body: { name: 'Calls', code: 'calls', aggregation: 'count' } });
      expect(metric.status, metric.text).toBe(201);
      for (const code of ['api-a', 'api-b']) {
        const plan = await tenant.http.POST('/v1/plans', {
          body: {
            name: code,
            code,
            interval_unit: 'month',
            prices: [
              { amount: 100_000, currency: 'INR' },
              { billing_scheme: 'metered', metric_code: 'calls', amount: 5, currency: 'INR' },
            ],
          },
        });
        expect(plan.status, plan.text).toBe(201);
      }
      const flat = await tenant.http.POST('/v1/plans', {
        body: { name: 'Flat', code: 'flat', interval_unit: 'month', prices: [{ amount: 9_900, currency: 'INR' }] },
      });
      expect(flat.status, flat.text).toBe(201);
      const inKosh = await tenant.http.POST('/v1/customers', { body: { email: 'metered@customer.test' } });
      const existing = await tenant.http.POST('/v1/subscriptions', {
        body: {
          customer_id: inKosh.body.data.id,
          plan_id: (await tenant.http.GET('/v1/plans', { query: { q: 'api-a' } })).body.data[0]!.id,
        },
      });
      expect(existing.status, existing.text).toBe(201);
      const period = { status: 'active', current_period_start: '2026-03-15T00:00:00Z', current_period_end: '2026-04-15T00:00:00Z' };
      const document = {
        customers: [{ email: 'new@customer.test' }],
        subscriptions: [
          { external_id: 'kosh-clash', customer_email: 'metered@customer.test', plan_code: 'api-b', ...period },
          { external_id: 'flat-ok', customer_email: 'metered@customer.test', plan_code: 'flat', ...period },
          { external_id: 'ended-ok', customer_email: 'metered@customer.test', plan_code: 'api-b', ...period, status: 'canceled' },
          { external_id: 'first-ok', customer_email: 'new@customer.test', plan_code: 'api-a', ...period },
          { external_id: 'file-clash', customer_email: 'new@customer.test', plan_code: 'api-b', ...period },
        ],
      };
      const expected = [
        [
          'kosh-clash',
          `plan_code: the customer's subscription ${existing.body.data.id} already meters calls; a metric is billed by one subscription per customer`,
        ],
        ['file-clash', "plan_code: subscription 'first-ok' of this file already meters calls; a metric is billed by one subscription per customer"],
      ];
      const dry = await importInto(tenant, documentSource(document), { dryRun: true });
      expect(dry.failed.map((f) => [f.key, f.error])).toEqual(expected);
      const report = await importInto(tenant, documentSource(document));
      expect(report.failed.map((f) => [f.key, f.error])).toEqual(expected);
      expect(report.created.subscriptions).toBe(3);
      const imported = Object.values(await subscriptionsByExternalId(tenant)).filter((sub) => sub.external_id);
      expect(imported.map((sub) => sub.external_id).sort()).toEqual(['ended-ok', 'first-ok', 'flat-ok']);
    });
  });

  describe('atomicity', () => {
    it('rolls back only the row the database refuses; the rest of its batch goes in', async () => {
      const tenant = await t.registerTenant();
      const report = await importInto(
        tenant,
        documentSource({ customers: [{ email: 'one@nul.test' }, { email: 'two@nul.test', name: 'nul \u0000 byte' }, { email: 'three@nul.test' }] }),
      );
      expect(report.created.customers).toBe(2);
      expect(report.failed).toEqual([{ kind: 'customer', key: 'two@nul.test', index: 1, error: expect.stringMatching(/^refused by the database: /) }]);
      const emails = (await listAll(tenant.http.GET('/v1/customers', { query: { limit: 1000 } }))).map((c) => c.email).sort();
      expect(emails).toEqual(['one@nul.test', 'three@nul.test']);
    });

    it('leaves whole batches after a crash part way, and a re-run completes the import', async () => {
      const tenant = await t.registerTenant();
      const crash = new Error('power cut');
      // Batches of 2: plans 1-2, plan 3, customers 1-2, … The fourth batch dies before its commit.
      await expect(
        importInto(tenant, validJson(), {
          batchSize: 2,
          beforeCommit: (_section, batch) => {
            if (batch === 4) throw crash;
          },
        }),
      ).rejects.toBe(crash);
      expect((await listAll(tenant.http.GET('/v1/plans', { query: { limit: 1000 } }))).length).toBe(3);
      expect((await listAll(tenant.http.GET('/v1/customers', { query: { limit: 1000 } }))).length).toBe(2);
      expect(await importInto(tenant, validJson(), { batchSize: 2 })).toEqual(cleanReport([0, 4, 7], [3, 2, 0]));
      expect((await compare(tenant, validJson())).ready).toBe(true);
    });
  });

  describe('rows as the owning modules store them', () => {
    let tenant: Tenant;
    beforeAll(async () => {
      tenant = await t.registerTenant();
    });

    /** Two rows of a table as plain objects, without what must differ (ids, keys, instants of creation). */
    async function rowsOf(table: 'plans' | 'prices' | 'customers' | 'subscriptions', column: string, values: string[]) {
      const { rows } = await sql<
        Record<string, unknown>
      >`SELECT * FROM ${sql.table(table)} WHERE tenant_id = ${tenant.tenantId} AND ${sql.ref(column)} IN (${sql.join(values)})`.execute(t.database.db);
      return values.map((v) => {
        const row = rows.find((r) => r[column] === v)!;
        expect(row, `${table} ${column}=${v}`).toBeDefined();
        const { id: _id, created_at: _c, updated_at: _u, [column]: _key, ...rest } = row;
        return rest;
      });
    }

    it('stores a plan and its price as POST /v1/plans does', async () => {
      const fields = { name: 'Parity', interval_unit: 'week' as const, interval_count: 2, amount: 12345, currency: 'INR', hsn_code: '998314' };
      expect((await tenant.http.POST('/v1/plans', { body: { ...fields, code: 'parity-api' } })).status).toBe(201);
      expect(await importInto(tenant, documentSource({ plans: [{ ...fields, code: 'parity-import' }] }))).toEqual(cleanReport([1, 0, 0]));
      const [api, imported] = await rowsOf('plans', 'code', ['parity-api', 'parity-import']);
      expect(imported).toEqual(api);
      const planIds = await sql<{
        id: string;
      }>`SELECT id FROM plans WHERE tenant_id = ${tenant.tenantId} AND code IN ('parity-api', 'parity-import') ORDER BY code`.execute(t.database.db);
      const [apiPrice, importedPrice] = await rowsOf(
        'prices',
        'plan_id',
        planIds.rows.map((r) => r.id),
      );
      expect(importedPrice).toEqual(apiPrice);
    });

    it('stores a customer as createCustomer does', async () => {
      const fields = {
        name: 'Parity Person',
        external_id: 'x-1',
        phone: '+91 98450 00000',
        gstin: '29AAACA1234A1ZG',
        billing_address: { line1: '1 Road', state_code: '29' },
      };
      await t.database.db.transaction().execute(async (tx) => {
        await createCustomer({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, createCustomerBody.parse({ ...fields, email: 'api@parity.test' }));
      });
      expect(await importInto(tenant, documentSource({ customers: [{ ...fields, email: 'import@parity.test' }] }))).toEqual(cleanReport([0, 1, 0]));
      const [api, imported] = await rowsOf('customers', 'email', ['api@parity.test', 'import@parity.test']);
      expect(imported).toEqual(api);
    });

    it.each([
      ['active', {}],
      ['trialing', { trial_end: '2026-04-20T00:00:00Z' }],
      ['paused', {}],
      ['canceled', {}],
      ['past_due', { cancel_at_period_end: true }],
      ['unpaid', {}],
    ] as const)('stores a %s subscription as createSubscriptionRecord does', async (status, extra) => {
      const period = { current_period_start: '2026-03-20T00:00:00Z', current_period_end: '2026-04-20T00:00:00Z' };
      const source = {
        plans: [{ code: `p-${status}`, name: 'P', interval_unit: 'month', amount: 5000, currency: 'INR' }],
        customers: [{ email: `${status}@parity.test` }],
        subscriptions: [{ external_id: `import-${status}`, customer_email: `${status}@parity.test`, plan_code: `p-${status}`, status, ...period, ...extra }],
      };
      expect(await importInto(tenant, documentSource(source))).toEqual(cleanReport([1, 1, 1]));
      const imported = await sql<{
        customer_id: string;
        plan_id: string;
      }>`SELECT customer_id, plan_id FROM subscriptions WHERE tenant_id = ${tenant.tenantId} AND external_id = ${`import-${status}`}`.execute(t.database.db);
      const now = t.clock.now();
      const cancelAtPeriodEnd = 'cancel_at_period_end' in extra;
      await t.database.db.transaction().execute((tx) =>
        createSubscriptionRecord(
          { tx, tenantId: tenant.tenantId, now },
          {
            customerId: imported.rows[0]!.customer_id,
            planId: imported.rows[0]!.plan_id,
            status,
            currentPeriodStart: new Date(period.current_period_start),
            currentPeriodEnd: new Date(period.current_period_end),
            cancelAtPeriodEnd,
            // What the importer reads the source as saying: a trial is the current period; a
            // pending cancellation was asked for when Kosh learned of it.
            trialStart: status === 'trialing' ? new Date(period.current_period_start) : null,
            trialEnd: 'trial_end' in extra ? new Date(extra.trial_end) : null,
            canceledAt: cancelAtPeriodEnd ? now : null,
            externalId: `module-${status}`,
            emit: false,
          },
        ),
      );
      const [module, importedRow] = await rowsOf('subscriptions', 'external_id', [`module-${status}`, `import-${status}`]);
      expect(importedRow).toEqual(module);
    });
  });
});
