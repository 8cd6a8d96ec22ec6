import type { Ctx } from '../context.js';
import { newId } from '../ids.js';
import { toIso } from '../time.js';
import { deferWrite } from '../db/pipeline.js';
import { currentTestClock } from '../test-clock-scope.js';
import './events.tables.js';

/**
 * The event types, as a union: the events module's catalog fills it in by declaration merging
 * (`interface EventCatalog { types: … }` in src/modules/events/events.catalog.ts), so emitting a
 * type missing from the catalog is a type error while this file knows no module.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface EventCatalog {}
export type EventType = EventCatalog extends { types: infer T extends string } ? T : string;

/** The wire shape of an event (DESIGN §7): a snapshot of the object as the API returned it then. */
export type EventPayload = {
  id: string;
  type: string;
  created_at: string;
  tenant_id: string;
  data: { object: Record<string, unknown> };
  /** Emitted while a test clock advanced (decision 0440): that clock. */
  test_clock_id?: string;
};

/** The clock of an event emitted during a test clock's advance, as the payload's field. */
function onTestClock(): { test_clock_id?: string } {
  const clock = currentTestClock();
  return clock === null ? {} : { test_clock_id: clock };
}

/**
 * Runs inside the emitting transaction for every event. The webhooks module registers one that
 * queues deliveries, so an event and its deliveries commit (or vanish) together.
 */
export type EventListener = ((ctx: Ctx, event: EventPayload) => Promise<void>) & {
  /** Optional: handles many events of one emitEvents call at once (else it is called per event). */
  batch?: (ctx: Ctx, events: EventPayload[]) => Promise<void>;
};

/** A listener's name and the event types it is called for (the events module's EVENT_SUBSCRIBERS table). */
export type EventSubscription = { subscriber: string; types: readonly string[] };

const listeners: { listener: EventListener; subscriber: string; types: ReadonlySet<string> }[] = [];

/** Registers a listener for the types of its subscription: it is never called for another type. */
export function onEvent(listener: EventListener, subscription: EventSubscription): void {
  if (listeners.some((l) => l.listener === listener)) return;
  listeners.push({ listener, subscriber: subscription.subscriber, types: new Set(subscription.types) });
}

/** Who is registered for what, as the app started them (for the subscribers test). */
export function eventSubscriptions(): { subscriber: string; types: string[] }[] {
  return listeners.map((l) => ({ subscriber: l.subscriber, types: [...l.types] }));
}

/**
 * Records a business event in the outbox, in the caller's transaction. `type` is a dotted noun and
 * past-tense verb (`invoice.finalized`); `object` is the API representation of the subject.
 */
export async function emitEvent(ctx: Ctx, type: EventType, object: Record<string, unknown> & { id?: unknown }): Promise<EventPayload> {
  const id = newId();
  const objectType = type.slice(0, type.lastIndexOf('.'));
  const payload: EventPayload = {
    id,
    type,
    created_at: toIso(ctx.now),
    tenant_id: ctx.tenantId,
    data: { object },
    ...onTestClock(),
  };
  // Nothing in the action reads the event back: the row travels with the next statement.
  await deferWrite(
    ctx.tx,
    ctx.tx.insertInto('events').values({
      tenant_id: ctx.tenantId,
      id,
      type,
      object_type: objectType,
      object_id: typeof object.id === 'string' ? object.id : null,
      payload: JSON.stringify(payload),
      created_at: ctx.now,
    }),
  );
  for (const { listener, types } of listeners) if (types.has(type)) await listener(ctx, payload);
  return payload;
}

/**
 * emitEvent for many events at once (the billing run emits a batch's events together): one INSERT,
 * then each listener once with the batch when it has a `batch` handler, else once per event. Same
 * transaction, same payloads, same order as separate emitEvent calls.
 */
export async function emitEvents(ctx: Ctx, items: { type: EventType; object: Record<string, unknown> & { id?: unknown } }[]): Promise<EventPayload[]> {
  if (items.length === 0) return [];
  const payloads: EventPayload[] = items.map(({ type, object }) => ({
    id: newId(),
    type,
    created_at: toIso(ctx.now),
    tenant_id: ctx.tenantId,
    data: { object },
    ...onTestClock(),
  }));
  await deferWrite(
    ctx.tx,
    ctx.tx.insertInto('events').values(
      payloads.map((p) => ({
        tenant_id: ctx.tenantId,
        id: p.id,
        type: p.type,
        object_type: p.type.slice(0, p.type.lastIndexOf('.')),
        object_id: typeof p.data.object.id === 'string' ? p.data.object.id : null,
        payload: JSON.stringify(p),
        created_at: ctx.now,
      })),
    ),
  );
  for (const { listener, types } of listeners) {
    const theirs = payloads.filter((p) => types.has(p.type));
    if (theirs.length === 0) continue;
    if (listener.batch) await listener.batch(ctx, theirs);
    else for (const p of theirs) await listener(ctx, p);
  }
  return payloads;
}
