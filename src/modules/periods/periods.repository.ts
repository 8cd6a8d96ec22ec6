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
