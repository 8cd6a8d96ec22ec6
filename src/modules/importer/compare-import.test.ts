import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { compareImport } from './compare-import.js';
import { documentSource } from './import-source.js';
import type { CompareIssue } from './importer.schemas.js';
import { runImport } from './run-import.js';

let t: TestKosh;
let acme: Tenant;

const plan = (code: string, extra: Record<string, unknown> = {}) => ({
  code,
  name: code,
  interval_unit: 'month',
  interval_count: 1,
  amount: 1000,
  currency: 'INR',
  ...extra,
});
const subscription = (externalId: string, extra: Record<string, unknown> = {}) => ({
  external_id: externalId,
  customer_email: 'c-case@example.test',
  plan_code: 'p-same',
  status: 'active',
  current_period_start: '2026-03-15T00:00:00Z',
  current_period_end: '2026-04-15T00:00:00Z',
  ...extra,
});

/** What Kosh holds after the import: the base of every comparison below. */
const imported = {
  plans: [plan('p-amount'), plan('p-shape'), plan('p-same'), plan('p-extra')],
  customers: [
    { email: 'c-name@example.test', name: 'Before' },
    { email: 'c-case@example.test', name: 'Case' },
    { email: 'c-extra@example.test', name: 'Extra' },
  ],
  subscriptions: [
    subscription('s-status'),
    subscription('s-drift'),
    subscription('s-near'),
    subscription('s-cancel'),
    subscription('s-customer', { customer_email: 'c-name@example.test' }),
    subscription('s-plan'),
    subscription('s-same'),
    subscription('s-extra'),
  ],
};

/** A source export that differs from Kosh in every way the gate checks. */
const exported = {
  plans: [
    plan('p-amount', { amount: 1500 }),
    plan('p-shape', { interval_unit: 'year', interval_count: 2, currency: 'USD' }),
    plan('p-same'),
    plan('p-missing'),
    plan('p-invalid', { amount: 0 }),
    plan('p-same', { name: 'twice' }),
  ],
  customers: [
    { email: 'C-NAME@example.test', name: 'After' },
    { email: 'C-Case@Example.test', name: 'Case' }, // e-mail matched case-insensitively: no issue
    { email: 'c-missing@example.test', name: 'Missing' },
  ],
  subscriptions: [
    subscription('s-status', { status: 'past_due' }),
    subscription('s-drift', { current_period_end: '2026-04-15T01:00:01Z' }),
    subscription('s-near', { current_period_end: '2026-04-15T01:00:00Z' }), // exactly one hour: tolerated
    subscription('s-cancel', { cancel_at_period_end: true }),
    subscription('s-customer', { customer_email: 'c-case@example.test' }),
    subscription('s-plan', { plan_code: 'p-amount' }),
    subscription('s-same'),
    subscription('s-missing'),
  ],
};

let apiSubscriptionId: string;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
  const report = await runImport(t.database.db, acme.tenantId, documentSource(imported), { now: () => t.clock.now() });
  expect(report.failed).toEqual([]);
  // A subscription made in Kosh itself has no external_id: never in any export.
  const plans = (await acme.http.GET('/v1/plans', { query: { limit: 1000 } })).body.data as { id: string; code: string }[];
  const customers = (await acme.http.GET('/v1/customers', { query: { email: 'c-case@example.test' } })).body.data as { id: string }[];
  const res = await acme.http.POST('/v1/subscriptions', { body: { customer_id: customers[0]!.id, plan_id: plans.find((p) => p.code === 'p-same')!.id } });
  expect(res.status, res.text).toBe(201);
  apiSubscriptionId = res.body.data.id;
});
afterAll(() => t.close());

const compare = (tenant: Tenant, document: Parameters<typeof documentSource>[0]) =>
  compareImport({ tx: t.database.db, tenantId: tenant.tenantId, now: t.clock.now() }, documentSource(document));

const sorted = (issues: CompareIssue[]) => [...issues].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

describe('import compare gate', () => {
  it('finds every kind of difference it claims to, per record', async () => {
    const report = await compare(acme, exported);
    expect(report.ready).toBe(false);
    expect(sorted(report.issues)).toEqual(
      sorted([
        // coverage
        { kind: 'plan', key: 'p-missing', field: 'record', expected: 'present', found: 'missing' },
        { kind: 'plan', key: 'p-extra', field: 'record', expected: 'absent', found: 'present' },
        { kind: 'customer', key: 'c-missing@example.test', field: 'record', expected: 'present', found: 'missing' },
        { kind: 'customer', key: 'c-extra@example.test', field: 'record', expected: 'absent', found: 'present' },
        { kind: 'subscription', key: 's-missing', field: 'record', expected: 'present', found: 'missing' },
        { kind: 'subscription', key: 's-extra', field: 'record', expected: 'absent', found: 'present' },
        { kind: 'subscription', key: `id:${apiSubscriptionId}`, field: 'record', expected: 'absent', found: 'present' },
        // plan fidelity
        { kind: 'plan', key: 'p-amount', field: 'amount', expected: 1500, found: 1000 },
        { kind: 'plan', key: 'p-shape', field: 'interval_unit', expected: 'year', found: 'month' },
        { kind: 'plan', key: 'p-shape', field: 'interval_count', expected: 2, found: 1 },
        { kind: 'plan', key: 'p-shape', field: 'currency', expected: 'USD', found: 'INR' },
        // customer identity
        { kind: 'customer', key: 'C-NAME@example.test', field: 'name', expected: 'After', found: 'Before' },
        // subscription continuity
        { kind: 'subscription', key: 's-status', field: 'status', expected: 'past_due', found: 'active' },
        { kind: 'subscription', key: 's-drift', field: 'current_period_end', expected: '2026-04-15T01:00:01.000Z', found: '2026-04-15T00:00:00.000Z' },
        { kind: 'subscription', key: 's-cancel', field: 'cancel_at_period_end', expected: true, found: false },
        { kind: 'subscription', key: 's-customer', field: 'customer_email', expected: 'c-case@example.test', found: 'c-name@example.test' },
        { kind: 'subscription', key: 's-plan', field: 'plan_code', expected: 'p-amount', found: 'p-same' },
        // the source itself
        { kind: 'plan', key: 'p-invalid', field: 'source', expected: 'a valid record', found: 'index 4: amount: must be greater than 0' },
        { kind: 'plan', key: 'p-same', field: 'source', expected: 'one record per key', found: 'index 5: repeats the record on index 2' },
      ]),
    );
    expect(report.coverage).toEqual({
      plans: { in_source: 4, in_kosh: 4, matched: 3, missing: 1, extra: 1 },
      customers: { in_source: 3, in_kosh: 3, matched: 2, missing: 1, extra: 1 },
      subscriptions: { in_source: 8, in_kosh: 9, matched: 7, missing: 1, extra: 2 },
    });
  });

  it('is ready only when the source and Kosh agree on every record', async () => {
    const almost = await compare(acme, imported);
    // Only the subscription made in Kosh stands between them.
    expect(almost.issues).toEqual([{ kind: 'subscription', key: `id:${apiSubscriptionId}`, field: 'record', expected: 'absent', found: 'present' }]);
    expect(almost.ready).toBe(false);

    const fresh = await t.registerTenant();
    await runImport(t.database.db, fresh.tenantId, documentSource(imported), { now: () => t.clock.now() });
    expect(await compare(fresh, imported)).toEqual({
      ready: true,
      issues: [],
      coverage: {
        plans: { in_source: 4, in_kosh: 4, matched: 4, missing: 0, extra: 0 },
        customers: { in_source: 3, in_kosh: 3, matched: 3, missing: 0, extra: 0 },
        subscriptions: { in_source: 8, in_kosh: 8, matched: 8, missing: 0, extra: 0 },
      },
    });
  });

  it("sees only the caller's tenant", async () => {
    const other = await t.registerTenant();
    const report = await compare(other, { plans: [plan('p-same')] });
    expect(report.issues).toEqual([{ kind: 'plan', key: 'p-same', field: 'record', expected: 'present', found: 'missing' }]);
    expect(report.coverage.plans).toEqual({ in_source: 1, in_kosh: 0, matched: 0, missing: 1, extra: 0 });
  });

  describe('POST /v1/imports/compare', () => {
    it('answers the same report, and writes nothing', async () => {
      const count = async () =>
        (
          await sql<{
            n: number;
          }>`SELECT (SELECT count(*) FROM plans) + (SELECT count(*) FROM customers) + (SELECT count(*) FROM subscriptions) + (SELECT count(*) FROM events) + (SELECT count(*) FROM jobs) AS n`.execute(
            t.database.db,
          )
        ).rows[0]!.n;
      const before = await count();
      const res = await acme.http.POST('/v1/imports/compare', { body: exported });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toEqual(await compare(acme, exported));
      expect(await count()).toBe(before);
    });

    it('refuses a body that is not an import document', async () => {
      const res = await acme.api('POST', '/v1/imports/compare', { plans: [], invoices: [] });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect((await acme.api('POST', '/v1/imports/compare', { plans: 'all' })).status).toBe(400);
    });

    it('needs an API key', async () => {
      expect((await t.api('POST', '/v1/imports/compare', {})).status).toBe(401);
    });
  });
});
