import { sql, type Insertable } from 'kysely';
import type { DB, Tx } from '../../platform/db/schema.js';

/**
 * The importer's SQL. It writes the plans, prices, customers and subscriptions tables directly,
 * many rows per statement — the one place outside those modules that does, because a row at a
 * time through their services (three to six round trips each) cannot reach 5 000 records/s.
 * The rows themselves are built by importer.service.ts with those modules' rules, and a test
 * holds each built row equal to what the module's own create function stores
 * (docs/decisions, "import"). Every statement is scoped by tenant.
 */

export type PlanInsert = Insertable<DB['plans']>;
export type PriceInsert = Insertable<DB['prices']>;
export type CustomerInsert = Insertable<DB['customers']>;
export type SubscriptionInsert = Insertable<DB['subscriptions']>;

/** What a subscription needs of its plan, and what the compare gate checks. */
export type PlanRef = {
  id: string;
  code: string;
  interval_unit: DB['plans']['interval_unit'];
  interval_count: number;
  prices: { currency: string; amount: number }[];
};

// ── writes: ON CONFLICT DO NOTHING … RETURNING tells created from already there ───────────────

/** Inserts the plans that are not there yet (by code) and the prices of those; answers their codes. */
export async function insertNewPlans(tx: Tx, plans: PlanInsert[], prices: PriceInsert[]): Promise<string[]> {
  if (plans.length === 0) return [];
  const created = await tx.insertInto('plans').values(plans).onConflict((oc) => oc.doNothing()).returning(['id', 'code']).execute();
  const ids = new Set(created.map((p) => p.id));
  const newPrices = prices.filter((p) => ids.has(p.plan_id));
  if (newPrices.length) await tx.insertInto('prices').values(newPrices).execute();
  return created.map((p) => p.code);
}

/** Inserts the customers whose e-mail (case-insensitively) is new; answers their e-mails. */
export async function insertNewCustomers(tx: Tx, rows: CustomerInsert[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const created = await tx.insertInto('customers').values(rows).onConflict((oc) => oc.doNothing()).returning('email').execute();
  return created.map((c) => c.email);
}

/** Inserts the subscriptions whose external_id is new; answers their external ids. */
export async function insertNewSubscriptions(tx: Tx, rows: SubscriptionInsert[]): Promise<string[]> {
  if (rows.length === 0) return [];
  const created = await tx.insertInto('subscriptions').values(rows).onConflict((oc) => oc.doNothing()).returning('external_id').execute();
  return created.map((s) => s.external_id!);
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

// ── reads by matching key ───────────────────────────────────────────────────────────────────────

export async function findPlansByCodes(tx: Tx, tenantId: string, codes: string[]): Promise<PlanRef[]> {
  if (codes.length === 0) return [];
  const plans = await tx
    .selectFrom('plans')
    .select(['id', 'code', 'interval_unit', 'interval_count'])
    .where('tenant_id', '=', tenantId)
    .where('code', 'in', codes)
    .execute();
  if (plans.length === 0) return [];
  const prices = await tx
    .selectFrom('prices')
    .select(['plan_id', 'currency', 'amount'])
    .where('tenant_id', '=', tenantId)
    .where(
      'plan_id',
      'in',
      plans.map((p) => p.id),
    )
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const byPlan = new Map<string, PlanRef['prices']>();
  for (const p of prices) {
    const list = byPlan.get(p.plan_id) ?? [];
    list.push({ currency: p.currency, amount: p.amount });
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
    .where((eb) => eb(eb.fn<string>('lower', ['email']), 'in', emails))
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
    .where('s.external_id', 'in', externalIds)
    .execute();
}

export async function existingSubscriptionExternalIds(tx: Tx, tenantId: string, externalIds: string[]): Promise<string[]> {
  if (externalIds.length === 0) return [];
  const rows = await tx
    .selectFrom('subscriptions')
    .select('external_id')
    .where('tenant_id', '=', tenantId)
    .where('external_id', 'in', externalIds)
    .execute();
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
