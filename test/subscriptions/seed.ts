import { sql, type Kysely } from 'kysely';
import { registerTenant } from '../../src/flows/tenants/register-tenant.js';
import type { DB } from '../../src/platform/db/schema.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';

export type Seeded = { tenantId: string; subscriptions: number };

/**
 * Bulk SQL seeding for the billing bench and the crash test (through the API would take longer
 * than what they measure): one tenant with a Karnataka entity, `customers` customers (half in
 * Karnataka, half in Maharashtra), one monthly plan at 499.00 and `n` active subscriptions of
 * period 0 [anchor, due) — all due at `due`.
 */
export async function seedDueSubscriptions(db: Kysely<DB>, options: { n: number; anchor: Date; due: Date; customers?: number }): Promise<Seeded> {
  const { n, anchor, due } = options;
  const customers = options.customers ?? 1_000;
  const base = '29AAACA1234A1Z';
  const { tenant } = await registerTenant(
    db,
    anchor,
    {
      name: 'Seeded',
      email: `seed-${anchor.getTime()}-${n}@kosh.test`,
      base_currency: 'INR',
      data_region: 'in',
      country_code: 'IN',
      gstin: base + gstinCheckCharacter(base),
      invoice_prefix: 'INV-',
    },
    'test',
  );
  await sql`
    INSERT INTO plans (tenant_id, id, name, code, interval_unit, interval_count, hsn_code, created_at, updated_at)
    VALUES (${tenant.id}, gen_random_uuid(), 'Seeded monthly', 'seeded-monthly', 'month', 1, '998314', ${anchor}, ${anchor})`.execute(db);
  await sql`
    INSERT INTO prices (tenant_id, id, plan_id, currency, amount, created_at)
    SELECT tenant_id, gen_random_uuid(), id, 'INR', 49900, ${anchor} FROM plans WHERE tenant_id = ${tenant.id}`.execute(db);
  await sql`
    INSERT INTO customers (tenant_id, id, email, name, billing_address, created_at, updated_at)
    SELECT ${tenant.id}, gen_random_uuid(), 'c' || i || '@seed.test', 'Customer ' || i,
           jsonb_build_object('state_code', CASE WHEN i % 2 = 0 THEN '29' ELSE '27' END, 'country', 'IN'), ${anchor}, ${anchor}
    FROM generate_series(1, ${customers}) AS i`.execute(db);
  await sql`
    INSERT INTO subscriptions (tenant_id, id, customer_id, plan_id, currency, quantity, status, interval_unit, interval_count,
                               billing_anchor, period_index, current_period_start, current_period_end, created_at, updated_at)
    SELECT ${tenant.id}, gen_random_uuid(), c.id, p.id, 'INR', 1 + (i % 3), 'active', 'month', 1,
           ${anchor}, 0, ${anchor}, ${due}, ${anchor}, ${anchor}
    FROM generate_series(1, ${n}) AS i
    JOIN (SELECT id, row_number() OVER (ORDER BY id) - 1 AS k FROM customers WHERE tenant_id = ${tenant.id}) AS c ON c.k = i % ${customers}
    CROSS JOIN (SELECT id FROM plans WHERE tenant_id = ${tenant.id}) AS p`.execute(db);
  // Statistics for what was seeded only: analyzing the still-empty invoice and ledger tables would
  // record them as empty, and the foreign-key checks planned from that scan them in full on every
  // row the run inserts (0.4 ms per check at a few thousand entries, quadratic overall).
  await sql`ANALYZE subscriptions, customers, plans, prices`.execute(db);
  return { tenantId: tenant.id, subscriptions: n };
}

export type BillingCheck = {
  invoices: number;
  distinctPeriods: number;
  subscriptionsMoved: number;
  latestMatches: number;
  minNumber: number | null;
  maxNumber: number | null;
  renewedEvents: number;
  unbalancedEntries: number;
  entriesWithoutInvoice: number;
};

/** What the crash test and the bench assert after a run: once per period, gapless, balanced. */
export async function checkBilling(db: Kysely<DB>, tenantId: string, due: Date): Promise<BillingCheck> {
  const { rows } = await sql<BillingCheck>`
    SELECT
      (SELECT count(*)::int FROM invoices WHERE tenant_id = ${tenantId} AND billing_reason = 'subscription_cycle') AS "invoices",
      (SELECT count(DISTINCT (subscription_id, period_start))::int FROM invoices WHERE tenant_id = ${tenantId} AND billing_reason = 'subscription_cycle') AS "distinctPeriods",
      (SELECT count(*)::int FROM subscriptions WHERE tenant_id = ${tenantId} AND current_period_start = ${due} AND period_index = 1) AS "subscriptionsMoved",
      (SELECT count(*)::int FROM subscriptions s JOIN invoices i ON i.tenant_id = s.tenant_id AND i.id = s.latest_invoice_id
        WHERE s.tenant_id = ${tenantId} AND i.period_start = s.current_period_start) AS "latestMatches",
      (SELECT min(right(number, 6)::int) FROM invoices WHERE tenant_id = ${tenantId} AND number IS NOT NULL) AS "minNumber",
      (SELECT max(right(number, 6)::int) FROM invoices WHERE tenant_id = ${tenantId} AND number IS NOT NULL) AS "maxNumber",
      (SELECT count(*)::int FROM events WHERE tenant_id = ${tenantId} AND type = 'subscription.renewed') AS "renewedEvents",
      (SELECT count(*)::int FROM (
         SELECT e.id FROM journal_entries e LEFT JOIN journal_lines l ON l.tenant_id = e.tenant_id AND l.entry_id = e.id
         WHERE e.tenant_id = ${tenantId} GROUP BY e.id HAVING coalesce(sum(l.debit), 0) <> coalesce(sum(l.credit), 0) OR count(l.id) < 2) AS u) AS "unbalancedEntries",
      (SELECT count(*)::int FROM journal_entries e WHERE e.tenant_id = ${tenantId} AND e.kind = 'invoice.finalized'
         AND NOT EXISTS (SELECT 1 FROM invoices i WHERE i.tenant_id = e.tenant_id AND i.id = e.reference_id)) AS "entriesWithoutInvoice"`.execute(db);
  return rows[0]!;
}
