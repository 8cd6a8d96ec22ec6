import type { Selectable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import type { EntityPeriodsTable } from './periods.tables.js';

export type PeriodRow = Selectable<EntityPeriodsTable>;

export async function findPeriodRow(tx: Tx, tenantId: string, entityId: string, period: string): Promise<PeriodRow | undefined> {
  return tx
    .selectFrom('entity_periods')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .where('period', '=', period)
    .executeTakeFirst();
}

/** The month's row, made `open` first when it has none (so every change is a guarded transition). */
export async function ensurePeriodRow(tx: Tx, tenantId: string, entityId: string, period: string, now: Date): Promise<PeriodRow> {
  await tx
    .insertInto('entity_periods')
    .values({ tenant_id: tenantId, id: newId(), entity_id: entityId, period, status: 'open', created_at: now, updated_at: now })
    .onConflict((oc) => oc.columns(['tenant_id', 'entity_id', 'period']).doNothing())
    .execute();
  return (await findPeriodRow(tx, tenantId, entityId, period))!;
}

export async function periodRowsOfEntity(tx: Tx, tenantId: string, entityId: string): Promise<PeriodRow[]> {
  return tx.selectFrom('entity_periods').selectAll().where('tenant_id', '=', tenantId).where('entity_id', '=', entityId).orderBy('period', 'desc').execute();
}

/**
 * What a posting needs to know of each entity, in one query: its functional currency, its zone, and
 * its closed months from `fromPeriod` on (`YYYY-MM` sorts as text) — one row per closed month, or
 * one row with `period` null when none is closed.
 */
export async function postingFactsOf(
  tx: Tx,
  tenantId: string,
  entityIds: string[],
  fromPeriod: string,
): Promise<{ id: string; functional_currency: string; time_zone: string; period: string | null }[]> {
  if (entityIds.length === 0) return [];
  return tx
    .selectFrom('legal_entities as e')
    .leftJoin('entity_periods as p', (join) =>
      join.onRef('p.tenant_id', '=', 'e.tenant_id').onRef('p.entity_id', '=', 'e.id').on('p.status', '=', 'closed').on('p.period', '>=', fromPeriod),
    )
    .select(['e.id', 'e.functional_currency', 'e.time_zone', 'p.period'])
    .where('e.tenant_id', '=', tenantId)
    .where('e.id', 'in', entityIds)
    .execute();
}

/** The closed months of these entities from `fromPeriod` on (`YYYY-MM` sorts as text). */
export async function closedPeriodsFrom(tx: Tx, tenantId: string, entityIds: string[], fromPeriod: string): Promise<{ entity_id: string; period: string }[]> {
  if (entityIds.length === 0) return [];
  return tx
    .selectFrom('entity_periods')
    .select(['entity_id', 'period'])
    .where('tenant_id', '=', tenantId)
    .where('entity_id', 'in', entityIds)
    .where('status', '=', 'closed')
    .where('period', '>=', fromPeriod)
    .execute();
}
