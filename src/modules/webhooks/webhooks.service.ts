import type { Config } from '../../platform/config.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { errors } from '../../platform/errors.js';
import type { EventListener, EventPayload } from '../../platform/events/events.js';
import type { Page } from '../../platform/http/envelope.js';
import { outboundPolicy, outboundUrlProblem } from '../../platform/http/outbound-guard.js';
import { newId } from '../../platform/ids.js';
import { enqueueJobs } from '../../platform/jobs/jobs.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import { findEventRow } from '../events/index.js';
import { deliveryJob } from './webhooks.delivery.js';
import {
  countLiveEndpoints,
  findEndpoint,
  findSubscribedEndpoints,
  flagUnfinishedPredecessors,
  insertDeliveries,
  insertEndpoint,
  listDeliveryRows,
  listEndpointRows,
  updateEndpoint,
  type DeliveryRow,
  type EndpointRow,
} from './webhooks.repository.js';
import type { CreateWebhookBody, Delivery, ListDeliveriesQuery, UpdateWebhookBody, WebhookEndpoint, WebhookEndpointWithSecret } from './webhooks.schemas.js';
import { newSigningSecret, sealSigningSecret } from './webhooks.signing.js';
import { deliveryStatus } from './webhooks.states.js';

/** A tenant's endpoints are bounded, and with them the fan-out of every event. */
export const MAX_ENDPOINTS_PER_TENANT = 20;
/** After a rotation, the old secret keeps signing (alongside the new one) this long. */
export const PREVIOUS_SECRET_TTL_MS = 24 * 60 * 60 * 1000;

export function toEndpoint(row: EndpointRow, now: Date): WebhookEndpoint {
  const overlap = row.previous_secret_expires_at && row.previous_secret_expires_at > now ? row.previous_secret_expires_at : null;
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    url: row.url,
    events: row.events,
    description: row.description,
    enabled: row.enabled,
    previous_secret_expires_at: toIsoOrNull(overlap),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/** The answer that shows the signing secret: only when it is made (the row holds it sealed). */
function withSecret(row: EndpointRow, now: Date, secret: string): WebhookEndpointWithSecret {
  return { ...toEndpoint(row, now), secret };
}

export function toDelivery(row: DeliveryRow): Delivery {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    event_id: row.event_id,
    webhook_endpoint_id: row.webhook_endpoint_id,
    endpoint_url: row.endpoint_url,
    status: deliveryStatus(row),
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_retry_at: toIsoOrNull(row.next_retry_at),
    delivered_at: toIsoOrNull(row.delivered_at),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

/**
 * The outbound guard refuses URLs that reach a private address (SSRF), and in live mode URLs that
 * are not https. This resolves DNS, so routes call it before the action's transaction opens.
 */
export async function assertWebhookUrlAllowed(url: string | undefined, config: Pick<Config, 'mode' | 'outboundAllowPrivate'>): Promise<void> {
  if (url === undefined) return;
  const problem = await outboundUrlProblem(new URL(url), outboundPolicy(config));
  if (problem) throw errors.invalidField('url', problem);
}

export async function createWebhookEndpoint(ctx: Ctx, box: SecretBox, input: CreateWebhookBody): Promise<WebhookEndpointWithSecret> {
  if ((await countLiveEndpoints(ctx.tx, ctx.tenantId)) >= MAX_ENDPOINTS_PER_TENANT) {
    throw errors.conflict(`a tenant has at most ${MAX_ENDPOINTS_PER_TENANT} webhook endpoints`, 'webhook_endpoint_limit');
  }
  const id = newId();
  const secret = newSigningSecret();
  const row = await insertEndpoint(ctx.tx, {
    tenant_id: ctx.tenantId,
    id,
    url: input.url,
    description: input.description ?? null,
    events: JSON.stringify(input.events),
    enabled: input.enabled,
    secret: sealSigningSecret(box, ctx.tenantId, id, secret),
    previous_secret: null,
    previous_secret_expires_at: null,
    created_at: ctx.now,
    updated_at: ctx.now,
    deleted_at: null,
  });
  return withSecret(row, ctx.now, secret);
}

async function requireEndpoint(ctx: ReadCtx, id: string): Promise<EndpointRow> {
  const row = await findEndpoint(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('webhook endpoint');
  return row;
}

export async function getWebhookEndpoint(ctx: ReadCtx, id: string): Promise<WebhookEndpoint> {
  return toEndpoint(await requireEndpoint(ctx, id), ctx.now);
}

export async function listWebhookEndpoints(ctx: ReadCtx, page: Page): Promise<{ endpoints: WebhookEndpoint[]; total: number }> {
  const { rows, total } = await listEndpointRows(ctx.tx, ctx.tenantId, page);
  return { endpoints: rows.map((r) => toEndpoint(r, ctx.now)), total };
}

/** Changes apply to attempts made from now on, including retries of deliveries already made. */
export async function updateWebhookEndpoint(ctx: Ctx, id: string, input: UpdateWebhookBody): Promise<WebhookEndpoint> {
  const row = await updateEndpoint(ctx.tx, ctx.tenantId, id, {
    ...(input.url !== undefined ? { url: input.url } : {}),
    ...(input.events !== undefined ? { events: JSON.stringify(input.events) } : {}),
    ...(input.description !== undefined ? { description: input.description } : {}),
    ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
    updated_at: ctx.now,
  });
  if (!row) throw errors.notFound('webhook endpoint');
  return toEndpoint(row, ctx.now);
}

/**
 * Deleting keeps the row (its deliveries still reference it and stay readable per event); the
 * endpoint receives nothing more and answers 404 from then on.
 */
export async function deleteWebhookEndpoint(ctx: Ctx, id: string): Promise<{ id: string; deleted: true }> {
  const row = await updateEndpoint(ctx.tx, ctx.tenantId, id, { deleted_at: ctx.now, enabled: false, updated_at: ctx.now });
  if (!row) throw errors.notFound('webhook endpoint');
  return { id: row.id, deleted: true };
}

/**
 * A new secret signs from now on; the current one keeps signing too for 24 h, so receivers can
 * switch over without missing a delivery. Rotating again within the overlap drops the oldest.
 */
export async function rotateWebhookSecret(ctx: Ctx, box: SecretBox, id: string): Promise<WebhookEndpointWithSecret> {
  const current = await requireEndpoint(ctx, id);
  const secret = newSigningSecret();
  const row = await updateEndpoint(ctx.tx, ctx.tenantId, id, {
    secret: sealSigningSecret(box, ctx.tenantId, id, secret),
    // Kept as stored (sealed, or plain from before sealing): opened when signing.
    previous_secret: current.secret,
    previous_secret_expires_at: new Date(ctx.now.getTime() + PREVIOUS_SECRET_TTL_MS),
    updated_at: ctx.now,
  });
  if (!row) throw errors.notFound('webhook endpoint');
  return withSecret(row, ctx.now, secret);
}

function deliveriesPage(query: ListDeliveriesQuery): Page {
  const offset = query.offset ?? ((query.page ?? 1) - 1) * query.limit;
  return { limit: query.limit, offset, page: Math.floor(offset / query.limit) + 1 };
}

export async function listEndpointDeliveries(ctx: ReadCtx, endpointId: string, query: ListDeliveriesQuery) {
  await requireEndpoint(ctx, endpointId);
  const page = deliveriesPage(query);
  const { rows, total } = await listDeliveryRows(ctx.tx, ctx.tenantId, { endpointId, status: query.status }, page);
  return { deliveries: rows.map(toDelivery), total, page };
}

export async function listEventDeliveries(ctx: ReadCtx, eventId: string, query: ListDeliveriesQuery) {
  if (!(await findEventRow(ctx.tx, ctx.tenantId, eventId))) throw errors.notFound('event');
  const page = deliveriesPage(query);
  const { rows, total } = await listDeliveryRows(ctx.tx, ctx.tenantId, { eventId, status: query.status }, page);
  return { deliveries: rows.map(toDelivery), total, page };
}

export type DeliverableEvent = { id: string; type: string; objectId: string | null };

function subscribes(filter: string[], type: string): boolean {
  return filter.includes('*') || filter.includes(type);
}

/**
 * For each event, one new delivery per enabled endpoint subscribed to its type, with its job, in
 * the caller's transaction — a whole batch of events in four statements. Ordering rule: while an
 * endpoint still has an unfinished delivery of the same object (earlier, or earlier in this
 * batch), the new one waits (next_retry_at NULL, no job) and is scheduled when that one finishes.
 */
export async function createDeliveries(ctx: ReadCtx, events: DeliverableEvent[]): Promise<DeliveryRow[]> {
  if (events.length === 0) return [];
  const endpoints = await findSubscribedEndpoints(ctx.tx, ctx.tenantId, [...new Set(events.map((e) => e.type))]);
  const pairs = events.flatMap((event) => endpoints.filter((e) => subscribes(e.events, event.type)).map((endpoint) => ({ event, endpoint })));
  if (pairs.length === 0) return [];
  const objectIds = [...new Set(events.map((e) => e.objectId).filter((id): id is string => id !== null))];
  const held = await flagUnfinishedPredecessors(ctx.tx, ctx.tenantId, [...new Set(pairs.map((p) => p.endpoint.id))], objectIds, ctx.now);
  const latest = new Map<string, DeliveryRow>(); // per endpoint/object, the last delivery made in this batch
  const rows = pairs.map(({ event, endpoint }): DeliveryRow => {
    const key = event.objectId === null ? null : `${endpoint.id}/${event.objectId}`;
    const before = key === null ? undefined : latest.get(key);
    if (before) before.successor_waiting = true;
    const row: DeliveryRow = {
      tenant_id: ctx.tenantId,
      id: newId(),
      event_id: event.id,
      webhook_endpoint_id: endpoint.id,
      endpoint_url: endpoint.url,
      object_id: event.objectId,
      attempts: 0,
      last_status_code: null,
      last_error: null,
      next_retry_at: key !== null && (held.has(key) || before) ? null : ctx.now,
      delivered_at: null,
      successor_waiting: false,
      created_at: ctx.now,
      updated_at: ctx.now,
    };
    if (key !== null) latest.set(key, row);
    return row;
  });
  await insertDeliveries(ctx.tx, rows);
  await enqueueJobs(
    ctx.tx,
    ctx.now,
    rows.filter((r) => r.next_retry_at !== null).map((r) => deliveryJob(ctx.tenantId, r.id, ctx.now, r.webhook_endpoint_id)),
  );
  return rows;
}

function deliverable(event: EventPayload): DeliverableEvent {
  const objectId = event.data.object.id;
  return { id: event.id, type: event.type, objectId: typeof objectId === 'string' ? objectId : null };
}

/** Registered with onEvent at start-up: the event and its deliveries commit together. */
export const queueWebhookDeliveries: EventListener = async (ctx, event) => {
  await createDeliveries(ctx, [deliverable(event)]);
};
/** emitEvents' batch form (the billing run): the whole batch in the same four statements. */
queueWebhookDeliveries.batch = async (ctx, events) => {
  await createDeliveries(ctx, events.map(deliverable));
};

/** A fresh delivery (from attempt 0) to every enabled endpoint subscribed to the event's type now. */
export async function redeliverEvent(ctx: Ctx, eventId: string): Promise<{ event_id: string; deliveries: Delivery[] }> {
  const event = await findEventRow(ctx.tx, ctx.tenantId, eventId);
  if (!event) throw errors.notFound('event');
  const rows = await createDeliveries(ctx, [{ id: event.id, type: event.type, objectId: event.object_id }]);
  return { event_id: event.id, deliveries: rows.map(toDelivery) };
}
