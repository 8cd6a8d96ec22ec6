import type { Ctx } from '../context.js';
import { newId } from '../ids.js';
import { toIso } from '../time.js';
import './events.tables.js';

/** The wire shape of an event (DESIGN §7): a snapshot of the object as the API returned it then. */
export type EventPayload = {
  id: string;
  type: string;
  created_at: string;
  tenant_id: string;
  data: { object: Record<string, unknown> };
};

/**
 * Runs inside the emitting transaction for every event. The webhooks module registers one that
 * queues deliveries, so an event and its deliveries commit (or vanish) together.
 */
export type EventListener = (ctx: Ctx, event: EventPayload) => Promise<void>;

const listeners: EventListener[] = [];

export function onEvent(listener: EventListener): void {
  if (!listeners.includes(listener)) listeners.push(listener);
}

/** Every type emitted in this process, so a test can hold docs/events.md to the truth. */
export const emittedTypes = new Set<string>();

/**
 * Records a business event in the outbox, in the caller's transaction. `type` is a dotted noun and
 * past-tense verb (`invoice.finalized`); `object` is the API representation of the subject.
 */
export async function emitEvent(
  ctx: Ctx,
  type: string,
  object: Record<string, unknown> & { id?: unknown },
): Promise<EventPayload> {
  const id = newId();
  const objectType = type.slice(0, type.lastIndexOf('.'));
  const payload: EventPayload = {
    id,
    type,
    created_at: toIso(ctx.now),
    tenant_id: ctx.tenantId,
    data: { object },
  };
  await ctx.tx
    .insertInto('events')
    .values({
      tenant_id: ctx.tenantId,
      id,
      type,
      object_type: objectType,
      object_id: typeof object.id === 'string' ? object.id : null,
      payload: JSON.stringify(payload),
      created_at: ctx.now,
    })
    .execute();
  emittedTypes.add(type);
  for (const listener of listeners) await listener(ctx, payload);
  return payload;
}
