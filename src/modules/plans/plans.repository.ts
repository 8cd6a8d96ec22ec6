import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import type { Page } from '../../platform/http/envelope.js';
import type { PlansTable, PricesTable } from './plans.tables.js';
import './plans.tables.js';

export type PlanRow = Selectable<PlansTable>;
export type PriceRow = Selectable<PricesTable>;

/**
 * Deferred (platform/db/pipeline): the rows travel with the transaction's next statement. A taken
 * code surfaces there as `mapError(unique violation)`.
 */
export async function insertPlan(
  tx: WriteTx,
  plan: Insertable<PlansTable>,
  prices: Insertable<PricesTable>[],
  mapError: (error: unknown) => unknown,
): Promise<void> {
  await deferWrite(tx, tx.insertInto('plans').values(plan), mapError);
  if (prices.length) await deferWrite(tx, tx.insertInto('prices').values(prices), mapError);
}

export async function updatePlanRow(tx: Tx, tenantId: string, id: string, patch: Updateable<PlansTable>): Promise<PlanRow | undefined> {
  return tx.updateTable('plans').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

/** Locks the plan row: price changes of one plan queue behind each other. */
export async function lockPlan(tx: Tx, tenantId: string, id: string): Promise<PlanRow | undefined> {
  return tx.selectFrom('plans').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).forNoKeyUpdate().executeTakeFirst();
}

export async function insertPrice(tx: Tx, row: Insertable<PricesTable>): Promise<PriceRow> {
  return tx.insertInto('prices').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function archivePriceRow(tx: Tx, tenantId: string, planId: string, id: string, now: Date): Promise<PriceRow | undefined> {
  return tx
    .updateTable('prices')
    .set({ active: false, archived_at: now })
    .where('tenant_id', '=', tenantId)
    .where('plan_id', '=', planId)
    .where('id', '=', id)
    .where('active', '=', true)
    .returningAll()
    .executeTakeFirst();
}

export async function findPlan(tx: Tx, tenantId: string, id: string): Promise<PlanRow | undefined> {
  return tx.selectFrom('plans').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findPlanByCode(tx: Tx, tenantId: string, code: string): Promise<PlanRow | undefined> {
  return tx.selectFrom('plans').selectAll().where('tenant_id', '=', tenantId).where('code', '=', code).executeTakeFirst();
}

/**
 * The prices of plans. `scope` `fixed` (the default, what subscriptions, invoices and gifts
 * charge): the per_unit or tiered price of each currency; `metered`: the usage prices billed in
 * arrears; `all`. Archived prices too unless `activeOnly` (what new subscriptions and invoices may use).
 */
export async function pricesOfPlans(
  tx: Tx,
  tenantId: string,
  planIds: string[],
  options: { scope?: 'fixed' | 'metered' | 'all'; activeOnly?: boolean } = {},
): Promise<PriceRow[]> {
  if (planIds.length === 0) return [];
  const scope = options.scope ?? 'fixed';
  let query = tx.selectFrom('prices').selectAll().where('tenant_id', '=', tenantId).where('plan_id', 'in', planIds);
  if (scope === 'fixed') query = query.where('billing_scheme', '<>', 'metered');
  if (scope === 'metered') query = query.where('billing_scheme', '=', 'metered');
  if (options.activeOnly) query = query.where('active', '=', true);
  return query.orderBy('created_at').orderBy('id').execute();
}

export async function findPrice(tx: Tx, tenantId: string, id: string): Promise<PriceRow | undefined> {
  return tx.selectFrom('prices').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export type PlanFilter = { q?: string; currency?: string; interval_unit?: string };

/** A price as the list reads it: in the plan's row, as JSON, timestamps already RFC 3339 strings. */
export type PriceJson = Omit<PriceRow, 'created_at' | 'archived_at'> & { created_at: string; archived_at: string | null };
export type PlanWithPricesRow = PlanRow & { price_rows: PriceJson[] };

/** A page of plans with their prices in one statement (one round trip, one snapshot). */
export async function listPlanRows(tx: Tx, tenantId: string, filter: PlanFilter, page: Page): Promise<{ rows: PlanWithPricesRow[]; total: number }> {
  let query = tx.selectFrom('plans').where('plans.tenant_id', '=', tenantId);
  if (filter.q) {
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([eb('plans.name', 'ilike', pattern), eb('plans.code', 'ilike', pattern)]));
  }
  if (filter.interval_unit) query = query.where('plans.interval_unit', '=', filter.interval_unit as PlanRow['interval_unit']);
  if (filter.currency) {
    const currency = filter.currency;
    query = query.where((eb) =>
      eb.exists(
        eb
          .selectFrom('prices')
          .select('prices.id')
          .whereRef('prices.tenant_id', '=', 'plans.tenant_id')
          .whereRef('prices.plan_id', '=', 'plans.id')
          .where('prices.currency', '=', currency),
      ),
    );
  }
  return paginate<PlanWithPricesRow>(tx, query, {
    tenantId,
    table: 'plans',
    page,
    select: (q) =>
      q.select(
        sql<PriceJson[]>`COALESCE((
          SELECT json_agg(json_build_object(
            'tenant_id', pr.tenant_id, 'id', pr.id, 'plan_id', pr.plan_id, 'currency', pr.currency, 'amount', pr.amount,
            'type', pr.type, 'billing_scheme', pr.billing_scheme, 'tiers_mode', pr.tiers_mode, 'tiers', pr.tiers,
            'package_size', pr.package_size, 'metric_code', pr.metric_code, 'dimension_prices', pr.dimension_prices, 'hsn_code', pr.hsn_code, 'active', pr.active,
            'archived_at', to_char(pr.archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
            'created_at', to_char(pr.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
          ) ORDER BY pr.created_at, pr.id)
          FROM prices pr WHERE pr.tenant_id = plans.tenant_id AND pr.plan_id = plans.id), '[]'::json)`.as('price_rows'),
      ),
  });
}
