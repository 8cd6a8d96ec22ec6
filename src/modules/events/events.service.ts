import type { ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import type { EventPayload } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { toIso } from '../../platform/time.js';
import { findEventRow, listEventRows, type EventRow } from './events.repository.js';
import type { Event, ListEventsQuery } from './events.schemas.js';

/** The stored snapshot, with its envelope fields in the documented order (jsonb reorders keys). */
export function toEvent(row: EventRow): Event {
  const payload = row.payload as EventPayload;
  return {
    id: row.id,
    type: row.type,
    created_at: toIso(row.created_at),
    tenant_id: row.tenant_id,
    data: { object: payload.data.object },
    ...(payload.test_clock_id ? { test_clock_id: payload.test_clock_id } : {}),
  };
}

export async function getEvent(ctx: ReadCtx, id: string): Promise<Event> {
  const row = await findEventRow(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('event');
  return toEvent(row);
}

export async function listEvents(ctx: ReadCtx, query: ListEventsQuery, page: Page): Promise<{ events: Event[]; total: number }> {
  const createdGte = query['created[gte]'] === undefined ? undefined : new Date(query['created[gte]']);
  const createdLte = query['created[lte]'] === undefined ? undefined : new Date(query['created[lte]']);
  if (createdGte && createdLte && createdGte > createdLte) {
    throw errors.invalidField('created[gte]', 'must not be after created[lte]');
  }
  const { rows, total } = await listEventRows(ctx.tx, ctx.tenantId, { type: query.type, objectId: query.object_id, createdGte, createdLte }, page);
  return { events: rows.map(toEvent), total };
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export { findEventRow } from './events.repository.js';
