import type { Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { EventsTable } from '../../platform/events/events.tables.js';
import type { Page } from '../../platform/http/envelope.js';
import '../../platform/events/events.tables.js';

export type EventRow = Selectable<EventsTable>;

export async function findEventRow(tx: Tx, tenantId: string, id: string): Promise<EventRow | undefined> {
  return tx.selectFrom('events').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export type EventFilter = { type?: string; objectId?: string; createdGte?: Date; createdLte?: Date };

export async function listEventRows(tx: Tx, tenantId: string, filter: EventFilter, page: Page): Promise<{ rows: EventRow[]; total: number }> {
  let query = tx.selectFrom('events').where('tenant_id', '=', tenantId);
  if (filter.type) query = query.where('type', '=', filter.type);
  if (filter.objectId) query = query.where('object_id', '=', filter.objectId);
  if (filter.createdGte) query = query.where('created_at', '>=', filter.createdGte);
  if (filter.createdLte) query = query.where('created_at', '<=', filter.createdLte);
  return paginate<EventRow>(tx, query, { tenantId, table: 'events', page });
}
