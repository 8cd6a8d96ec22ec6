import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { DB, Tx } from '../../platform/db/schema.js';

/**
 * The importer's SQL. It writes the plans, prices, customers and subscriptions tables directly,
 * many rows per statement — the one place outside those modules that does, because a row at a
 * time through their services (three to six round trips each) cannot reach 5 000 records/s.
 * The rows themselves are built by importer.service.ts with those modules' rules, and a test
 * holds each built row equal to what the module's own create function stores
 * (docs/decisions, "import"). Every statement is scoped by tenant.
 */

/**
 * Rows as stored: every column, jsonb columns as their values. The whole batch goes to the server
 * as one JSON parameter and `json_populate_recordset` turns it into rows — one parameter instead
 * of thousands, which is what makes a 500-row statement cheap to send and to plan (on PGlite too).
 */
export type PlanInsert = Selectable<DB['plans']>;
export type PriceInsert = Selectable<DB['prices']>;
export type CustomerInsert = Selectable<DB['customers']>;
export type SubscriptionInsert = Selectable<DB['subscriptions']>;

/** What a subscription needs of its plan, and what the compare gate checks. */
export type PlanRef = {
  id: string;
  code: string;
  interval_unit: DB['plans']['interval_unit'];
  interval_count: number;
  /** `id` is absent for a plan a dry run would create. */
  prices: { id?: string; currency: string; amount: number }[];
};

// ── writes: ON CONFLICT DO NOTHING … RETURNING tells created from already there ───────────────

async function insertRows(tx: Tx, table: 'plans' | 'prices' | 'customers' | 'subscriptions', rows: object[], key: string): Promise<string[]> {
  if (rows.length === 0) return [];
  const target = sql.table(table);
  const { rows: created } = await sql<{ key: string }>`
    INSERT INTO ${target} SELECT * FROM json_populate_recordset(NULL::${target}, ${JSON.stringify(rows)}::json)
    ON CONFLICT DO NOTHING RETURNING ${sql.ref(key)} AS key`.execute(tx);
  return created.map((r) => r.key);
}

/** Inserts the plans that are not there yet (by code) and the prices of those; answers their codes. */
export async function insertNewPlans(tx: Tx, plans: PlanInsert[], prices: PriceInsert[]): Promise<string[]> {
  const codes = new Set(await insertRows(tx, 'plans', plans, 'code'));
  const ids = new Set(plans.filter((p) => codes.has(p.code)).map((p) => p.id));
  await insertRows(
    tx,
    'prices',
    prices.filter((p) => ids.has(p.plan_id)),
    'id',
  );
  return [...codes];
}

/** Inserts the customers whose e-mail (case-insensitively) is new; answers their e-mails. */
export async function insertNewCustomers(tx: Tx, rows: CustomerInsert[]): Promise<string[]> {
  return insertRows(tx, 'customers', rows, 'email');
}

/** Inserts the subscriptions whose external_id is new; answers their external ids. */
export async function insertNewSubscriptions(tx: Tx, rows: SubscriptionInsert[]): Promise<string[]> {
  return insertRows(tx, 'subscriptions', rows, 'external_id');
}

/** Savepoints let one bad row be rolled back without losing the rest of its batch. */
export async function savepoint(tx: Tx, name: 'import_batch' | 'import_row'): Promise<void> {
  await sql`SAVEPOINT ${sql.raw(name)}`.execute(tx);
}

export async function rollbackToSavepoint(tx: Tx, name: 'import_batch' | 'import_row'): Promise<void> {
  await sql`ROLLBACK TO SAVEPOINT ${sql.raw(name)}`.execute(tx);
}

export async function releaseSavepoint(tx: Tx, name: 'import_batch' | 'import_row'): Promise<void> {
  await sql`RELEASE SAVEPOINT ${sql.raw(name)}`.execute(tx);
}

/**
 * Fresh planner statistics for tables a bulk load has just grown. Without them PostgreSQL still
 * believes the table is as small as when it was last analyzed and answers the next lookups by key
 * (the subscriptions' customers, the compare gate) with scans of the whole table: measured 100 ms
 * instead of 2 ms per batch at 100 000 customers. Maintenance, not a query: not scoped by tenant.
 * Skipped quietly where the role may not analyze (autovacuum will, later).
 */
export async function refreshStatistics(tx: Tx, tables: ('plans' | 'prices' | 'customers' | 'subscriptions')[]): Promise<void> {
  try {
    await sql`ANALYZE ${sql.join(tables.map((t) => sql.table(t)))}`.execute(tx);
  } catch (error) {
    if ((error as { code?: string }).code !== '42501') throw error;
  }
}

// ── reads by matching key ───────────────────────────────────────────────────────────────────────

/** `column = ANY($1)`: a batch of keys as one array parameter rather than hundreds of them. */
function anyOf(column: string | RawBuilder<unknown>, values: string[], type: 'text' | 'uuid' = 'text'): RawBuilder<boolean> {
  const ref = typeof column === 'string' ? sql.ref(column) : column;
  return sql<boolean>`${ref} = ANY(${values}::${sql.raw(type)}[])`;
}

export async function findPlansByCodes(tx: Tx, tenantId: string, codes: string[]): Promise<PlanRef[]> {
  if (codes.length === 0) return [];
  const plans = await tx
    .selectFrom('plans')
    .select(['id', 'code', 'interval_unit', 'interval_count'])
    .where('tenant_id', '=', tenantId)
    .where(anyOf('code', codes))
    .execute();
  if (plans.length === 0) return [];
  const prices = await tx
    .selectFrom('prices')
    .select(['id', 'plan_id', 'currency', 'amount'])
    .where('tenant_id', '=', tenantId)
    .where('billing_scheme', '<>', 'metered')
    .where('active', '=', true)
    .where(
      anyOf(
        'plan_id',
        plans.map((p) => p.id),
        'uuid',
      ),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const byPlan = new Map<string, PlanRef['prices']>();
  for (const p of prices) {
    const list = byPlan.get(p.plan_id) ?? [];
    list.push({ id: p.id, currency: p.currency, amount: p.amount });
    byPlan.set(p.plan_id, list);
  }
  return plans.map((p) => ({ ...p, prices: byPlan.get(p.id) ?? [] }));
}

export type CustomerRef = { id: string; email: string; name: string | null };

/** By e-mail, case-insensitively (`emails` lower-cased), like the unique index. */
export async function findCustomersByEmails(tx: Tx, tenantId: string, emails: string[]): Promise<CustomerRef[]> {
  if (emails.length === 0) return [];
  return tx
    .selectFrom('customers')
    .select(['id', 'email', 'name'])
    .where('tenant_id', '=', tenantId)
    .where(anyOf(sql`lower(email)`, emails))
    .execute();
}

export type SubscriptionRef = {
  id: string;
  external_id: string | null;
  status: DB['subscriptions']['status'];
  current_period_end: Date;
  cancel_at_period_end: boolean;
  customer_email: string;
  plan_code: string;
};

export async function findSubscriptionsByExternalIds(tx: Tx, tenantId: string, externalIds: string[]): Promise<SubscriptionRef[]> {
  if (externalIds.length === 0) return [];
  return tx
    .selectFrom('subscriptions as s')
    .innerJoin('customers as c', (j) => j.onRef('c.tenant_id', '=', 's.tenant_id').onRef('c.id', '=', 's.customer_id'))
    .innerJoin('plans as p', (j) => j.onRef('p.tenant_id', '=', 's.tenant_id').onRef('p.id', '=', 's.plan_id'))
    .select(['s.id', 's.external_id', 's.status', 's.current_period_end', 's.cancel_at_period_end', 'c.email as customer_email', 'p.code as plan_code'])
    .where('s.tenant_id', '=', tenantId)
    .where(anyOf('s.external_id', externalIds))
    .execute();
}

export async function existingSubscriptionExternalIds(tx: Tx, tenantId: string, externalIds: string[]): Promise<string[]> {
  if (externalIds.length === 0) return [];
  const rows = await tx.selectFrom('subscriptions').select('external_id').where('tenant_id', '=', tenantId).where(anyOf('external_id', externalIds)).execute();
  return rows.map((r) => r.external_id!);
}

// ── every key, in pages (the compare gate's "extra in Kosh") ────────────────────────────────────

export async function planCodesAfter(tx: Tx, tenantId: string, after: string | null, limit: number): Promise<string[]> {
  let q = tx.selectFrom('plans').select('code').where('tenant_id', '=', tenantId);
  if (after !== null) q = q.where('code', '>', after);
  return (await q.orderBy('code').limit(limit).execute()).map((r) => r.code);
}

/** Lower-cased e-mails in the order of the unique index (tenant_id, lower(email)). */
export async function customerEmailsAfter(tx: Tx, tenantId: string, after: string | null, limit: number): Promise<string[]> {
  const lower = sql<string>`lower(email)`;
  let q = tx.selectFrom('customers').select(lower.as('email')).where('tenant_id', '=', tenantId);
  if (after !== null) q = q.where(lower, '>', after);
  return (await q.orderBy(lower).limit(limit).execute()).map((r) => r.email);
}

export async function subscriptionExternalIdsAfter(tx: Tx, tenantId: string, after: string | null, limit: number): Promise<string[]> {
  let q = tx.selectFrom('subscriptions').select('external_id').where('tenant_id', '=', tenantId).where('external_id', 'is not', null);
  if (after !== null) q = q.where('external_id', '>', after);
  return (await q.orderBy('external_id').limit(limit).execute()).map((r) => r.external_id!);
}

/** Subscriptions made in Kosh (no external_id): never in a source export. */
export async function subscriptionIdsWithoutExternalIdAfter(tx: Tx, tenantId: string, after: string | null, limit: number): Promise<string[]> {
  let q = tx.selectFrom('subscriptions').select('id').where('tenant_id', '=', tenantId).where('external_id', 'is', null);
  if (after !== null) q = q.where('id', '>', after);
  return (await q.orderBy('id').limit(limit).execute()).map((r) => r.id);
}
