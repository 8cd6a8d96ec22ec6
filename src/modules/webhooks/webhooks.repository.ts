import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { DeliveryStatus } from './webhooks.states.js';
import { MAX_ATTEMPTS } from './webhooks.states.js';
import type { WebhookDeliveriesTable, WebhookEndpointsTable } from './webhooks.tables.js';
import './webhooks.tables.js';
import '../../platform/events/events.tables.js';
import { readTogether } from '../../platform/db/read-together.js';
import { deferWrite } from '../../platform/db/pipeline.js';
import { scopeKey } from '../../platform/app-scope.js';
import { maySpeculate, speculationScope, SPECULATION_FAILED_SQLSTATE, SpeculationFailed } from '../../platform/db/speculation.js';

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type DeliveryRow = Selectable<WebhookDeliveriesTable>;

// ─── endpoints ──────────────────────────────────────────────────────────────────────────────────

export async function insertEndpoint(tx: Tx, row: Insertable<WebhookEndpointsTable>): Promise<EndpointRow> {
  enabledEndpoints.delete(tx);
  return tx.insertInto('webhook_endpoints').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function countLiveEndpoints(tx: Tx, tenantId: string): Promise<number> {
  const row = await tx
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** A deleted endpoint is gone for the API: it answers like a missing one. */
export async function findEndpoint(tx: Tx, tenantId: string, id: string): Promise<EndpointRow | undefined> {
  return tx
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listEndpointRows(tx: Tx, tenantId: string, page: Page): Promise<{ rows: EndpointRow[]; total: number }> {
  const query = tx.selectFrom('webhook_endpoints').where('tenant_id', '=', tenantId).where('deleted_at', 'is', null);
  return paginate<EndpointRow>(tx, query, { tenantId, table: 'webhook_endpoints', page });
}

export async function updateEndpoint(tx: Tx, tenantId: string, id: string, changes: Updateable<WebhookEndpointsTable>): Promise<EndpointRow | undefined> {
  enabledEndpoints.delete(tx);
  return tx
    .updateTable('webhook_endpoints')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

type SubscribedEndpoint = Pick<EndpointRow, 'id' | 'url' | 'events'>;

/**
 * The tenant's enabled endpoints, read once per transaction: an action that emits several events
 * (finalizing: created, finalized, paid; a payment: recorded, paid …) asks once, not per event.
 * Only inside a transaction (the map is keyed by it, so it dies with it), and forgotten whenever
 * this transaction writes an endpoint.
 */
const enabledEndpoints = new WeakMap<object, { tenantId: string; rows: Promise<SubscribedEndpoint[]> }>();

/**
 * Tenants whose last read by an action of this app found no enabled endpoint: the hint an
 * action's transaction speculates on (platform/db/speculation.ts), kept per app (decision 0590).
 */
const withoutEndpointsKey = scopeKey('webhooks.without_endpoints', () => new Set<string>());

/** Enabled endpoints of the tenant subscribed to any of `types` (or to everything), with their filters. */
export async function findSubscribedEndpoints(tx: Tx, tenantId: string, types: string[]): Promise<SubscribedEndpoint[]> {
  if (!tx.isTransaction) return readEnabledEndpoints(tx, tenantId, types);
  let cached = enabledEndpoints.get(tx);
  // Only an action's transaction that may speculate knows its app, and so the app's hints.
  const withoutEndpoints = speculationScope(tx)?.get(withoutEndpointsKey);
  if ((!cached || cached.tenantId !== tenantId) && withoutEndpoints?.has(tenantId) && maySpeculate(tx)) {
    // Still none, most likely: assume it, and let a check that fails if an endpoint appeared travel
    // with the next statement (platform/db/speculation.ts). Nothing waits for the read.
    cached = { tenantId, rows: Promise.resolve([]) };
    enabledEndpoints.set(tx, cached);
    await deferWrite(
      tx,
      sql`SELECT kosh_speculation_check(EXISTS (SELECT 1 FROM webhook_endpoints WHERE tenant_id = ${tenantId} AND enabled AND deleted_at IS NULL), 'webhook endpoints')`,
      (error) => {
        if ((error as { code?: string } | null)?.code !== SPECULATION_FAILED_SQLSTATE) return error;
        withoutEndpoints.delete(tenantId);
        return new SpeculationFailed('the tenant has webhook endpoints now');
      },
    );
  }
  if (!cached || cached.tenantId !== tenantId) {
    cached = {
      tenantId,
      rows: readEnabledEndpoints(tx, tenantId).then((rows) => {
        if (rows.length === 0) withoutEndpoints?.add(tenantId);
        else withoutEndpoints?.delete(tenantId);
        return rows;
      }),
    };
    enabledEndpoints.set(tx, cached);
  }
  const rows = await cached.rows.catch((error: unknown) => {
    enabledEndpoints.delete(tx);
    throw error;
  });
  return rows.filter((e) => e.events.includes('*') || types.some((t) => e.events.includes(t)));
}

function readEnabledEndpoints(tx: Tx, tenantId: string, types?: string[]): Promise<SubscribedEndpoint[]> {
  let query = tx
    .selectFrom('webhook_endpoints')
    .select(['id', 'url', 'events'])
    .where('tenant_id', '=', tenantId)
    .where('enabled', '=', true)
    .where('deleted_at', 'is', null);
  if (types) query = query.where(sql<boolean>`(events ? '*' OR events ?| ${sql.val(types)}::text[])`);
  return query.orderBy('created_at').orderBy('id').execute();
}

// ─── deliveries ─────────────────────────────────────────────────────────────────────────────────

export async function insertDeliveries(tx: Tx, rows: Insertable<WebhookDeliveriesTable>[]): Promise<void> {
  if (rows.length) await tx.insertInto('webhook_deliveries').values(rows).execute();
}

/**
 * The ordering rule's entry: flags every unfinished delivery of these objects to these endpoints
 * as having a successor waiting, and answers the `endpoint/object` pairs that had one. The UPDATE
 * takes the rows' locks, so it serializes with `recordDeliveryAttempts` on the same rows: either
 * that attempt finished the delivery first (then it no longer matches here and the new delivery
 * goes ahead), or it sees `successor_waiting` and releases the new delivery when it finishes.
 */
export async function flagUnfinishedPredecessors(tx: Tx, tenantId: string, endpointIds: string[], objectIds: string[], now: Date): Promise<Set<string>> {
  if (endpointIds.length === 0 || objectIds.length === 0) return new Set();
  const rows = await tx
    .updateTable('webhook_deliveries')
    .set({ successor_waiting: true, updated_at: now })
    .where('tenant_id', '=', tenantId)
    .where('webhook_endpoint_id', 'in', endpointIds)
    .where('object_id', 'in', objectIds)
    .where('delivered_at', 'is', null)
    .where('attempts', '<', MAX_ATTEMPTS)
    .returning(['webhook_endpoint_id', 'object_id'])
    .execute();
  return new Set(rows.map((r) => `${r.webhook_endpoint_id}/${r.object_id}`));
}

/**
 * Schedules the first-made delivery of `objectId` to the endpoint that waits behind an earlier one,
 * unless an unfinished, scheduled one still exists. Idempotent: a second call finds nothing.
 *
 * "First-made" is id order (UUIDv7: the order the deliveries were made in), not `created_at`: that
 * is the emitting transaction's clock, and two transactions whose clocks disagree (a billing run
 * retried after a failover while the next minute's run renews the same subscription) make
 * deliveries out of `created_at` order. The released delivery also takes over the flag that
 * another one waits behind it, so whichever finishes next releases the rest: none is stranded.
 */
export async function releaseNextWaiting(tx: Tx, tenantId: string, endpointId: string, objectId: string, now: Date): Promise<string | undefined> {
  const row = await tx
    .updateTable('webhook_deliveries')
    .set({
      next_retry_at: now,
      updated_at: now,
      successor_waiting: sql<boolean>`webhook_deliveries.successor_waiting OR EXISTS (
        SELECT 1 FROM webhook_deliveries AS o
         WHERE o.tenant_id = ${tenantId} AND o.webhook_endpoint_id = ${endpointId} AND o.object_id = ${objectId}
           AND o.delivered_at IS NULL AND o.attempts < ${MAX_ATTEMPTS} AND o.next_retry_at IS NULL AND o.id <> webhook_deliveries.id)`,
    })
    .where('tenant_id', '=', tenantId)
    .where('next_retry_at', 'is', null)
    .where('id', '=', (eb) =>
      eb
        .selectFrom('webhook_deliveries as w')
        .select('w.id')
        .where('w.tenant_id', '=', tenantId)
        .where('w.webhook_endpoint_id', '=', endpointId)
        .where('w.object_id', '=', objectId)
        .where('w.delivered_at', 'is', null)
        .where('w.attempts', '<', MAX_ATTEMPTS)
        .where('w.next_retry_at', 'is', null)
        .orderBy('w.id')
        .limit(1),
    )
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('webhook_deliveries as s')
            .select('s.id')
            .where('s.tenant_id', '=', tenantId)
            .where('s.webhook_endpoint_id', '=', endpointId)
            .where('s.object_id', '=', objectId)
            .where('s.delivered_at', 'is', null)
            .where('s.attempts', '<', MAX_ATTEMPTS)
            .where('s.next_retry_at', 'is not', null),
        ),
      ),
    )
    .returning('id')
    .executeTakeFirst();
  return row?.id;
}

export type DeliveryKey = { tenantId: string; id: string };

export type DeliveryTarget = Pick<
  DeliveryRow,
  'tenant_id' | 'id' | 'webhook_endpoint_id' | 'object_id' | 'attempts' | 'next_retry_at' | 'delivered_at' | 'successor_waiting'
> &
  Pick<EndpointRow, 'url' | 'enabled' | 'deleted_at' | 'secret' | 'previous_secret' | 'previous_secret_expires_at'> & {
    event_id: string;
    event_type: string;
    event_object_type: string;
    event_object_id: string | null;
    event_payload: unknown;
    event_created_at: Date;
  };

/**
 * `tenant_id = ANY(…) AND id = ANY(…)`: answered from the primary key whatever the planner's
 * statistics say (a join or a row-value IN was planned as a scan of all the tenant's rows while a
 * fresh backlog had not been analyzed yet). Callers then match the exact (tenant, id) pairs.
 */
function keyed(keys: DeliveryKey[]) {
  return {
    tenants: sql<boolean>`tenant_id = ANY(${sql.val([...new Set(keys.map((k) => k.tenantId))])}::uuid[])`,
    ids: sql<boolean>`id = ANY(${sql.val([...new Set(keys.map((k) => k.id))])}::uuid[])`,
  };
}
const pairOf = (row: { tenant_id: string; id: string }) => `${row.tenant_id}/${row.id}`;

/**
 * Everything an attempt needs — the delivery, its endpoint and its event — for many deliveries at
 * once (the worker runs many attempts together): three primary-key look-ups per batch, each key
 * with its own tenant.
 */
export async function findDeliveryTargets(tx: Tx, keys: DeliveryKey[]): Promise<DeliveryTarget[]> {
  if (keys.length === 0) return [];
  const wanted = new Set(keys.map((k) => `${k.tenantId}/${k.id}`));
  const k = keyed(keys);
  const deliveries = (await tx.selectFrom('webhook_deliveries').selectAll().where(k.tenants).where(k.ids).execute()).filter((d) => wanted.has(pairOf(d)));
  if (deliveries.length === 0) return [];
  const e = keyed(deliveries.map((d) => ({ tenantId: d.tenant_id, id: d.webhook_endpoint_id })));
  const ev = keyed(deliveries.map((d) => ({ tenantId: d.tenant_id, id: d.event_id })));
  const [endpoints, events] = await readTogether(
    tx,
    tx.selectFrom('webhook_endpoints').selectAll().where(e.tenants).where(e.ids),
    tx.selectFrom('events').selectAll().where(ev.tenants).where(ev.ids),
  );
  const endpointOf = new Map(endpoints.map((row) => [pairOf(row), row]));
  const eventOf = new Map(events.map((row) => [pairOf(row), row]));
  return deliveries.flatMap((d) => {
    const endpoint = endpointOf.get(`${d.tenant_id}/${d.webhook_endpoint_id}`);
    const event = eventOf.get(`${d.tenant_id}/${d.event_id}`);
    if (!endpoint || !event) return [];
    return [
      {
        tenant_id: d.tenant_id,
        id: d.id,
        webhook_endpoint_id: d.webhook_endpoint_id,
        object_id: d.object_id,
        attempts: d.attempts,
        next_retry_at: d.next_retry_at,
        delivered_at: d.delivered_at,
        successor_waiting: d.successor_waiting,
        url: endpoint.url,
        enabled: endpoint.enabled,
        deleted_at: endpoint.deleted_at,
        secret: endpoint.secret,
        previous_secret: endpoint.previous_secret,
        previous_secret_expires_at: endpoint.previous_secret_expires_at,
        event_id: event.id,
        event_type: event.type,
        event_object_type: event.object_type,
        event_object_id: event.object_id,
        event_payload: event.payload,
        event_created_at: event.created_at,
      },
    ];
  });
}

export type AttemptColumns = {
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Date | null;
  next_retry_at: Date | null;
  endpoint_url: string;
  updated_at: Date;
};
export type AttemptRecord = DeliveryKey & { attemptsBefore: number; columns: AttemptColumns };
export type RecordedAttempt = Pick<DeliveryRow, 'tenant_id' | 'id' | 'attempts' | 'delivered_at' | 'next_retry_at' | 'successor_waiting'>;

/**
 * Records attempts — each its count, outcome and next retry — in a single statement, each row
 * guarded by the attempt count its attempt was made from: a re-run of a crashed job cannot count
 * an attempt twice, and of two racing runs only one records. Answers the rows that matched.
 */
export async function recordDeliveryAttempts(tx: Tx, records: AttemptRecord[]): Promise<RecordedAttempt[]> {
  if (records.length === 0) return [];
  const values = sql.join(
    records.map(
      (r) =>
        sql`(${r.tenantId}::uuid, ${r.id}::uuid, ${r.attemptsBefore}::int, ${r.columns.attempts}::int, ${r.columns.last_status_code}::int,
             ${r.columns.last_error}::text, ${r.columns.delivered_at}::timestamptz, ${r.columns.next_retry_at}::timestamptz,
             ${r.columns.endpoint_url}::text, ${r.columns.updated_at}::timestamptz)`,
    ),
  );
  const result = await sql<RecordedAttempt>`
    UPDATE webhook_deliveries AS d
    SET attempts = v.attempts, last_status_code = v.last_status_code, last_error = v.last_error, delivered_at = v.delivered_at,
        next_retry_at = v.next_retry_at, endpoint_url = v.endpoint_url, updated_at = v.updated_at
    FROM (VALUES ${values}) AS v (tenant_id, id, attempts_before, attempts, last_status_code, last_error, delivered_at, next_retry_at, endpoint_url, updated_at)
    WHERE d.tenant_id = v.tenant_id AND d.id = v.id AND d.attempts = v.attempts_before AND d.delivered_at IS NULL
    RETURNING d.tenant_id, d.id, d.attempts, d.delivered_at, d.next_retry_at, d.successor_waiting`.execute(tx);
  return result.rows;
}

export type DeliveryFilter = { endpointId?: string; eventId?: string; status?: DeliveryStatus };

/** Newest first. `status` is derived (webhooks.states.ts), so it filters on the columns it derives from. */
export async function listDeliveryRows(tx: Tx, tenantId: string, filter: DeliveryFilter, page: Page): Promise<{ rows: DeliveryRow[]; total: number }> {
  let query = tx.selectFrom('webhook_deliveries').where('tenant_id', '=', tenantId);
  if (filter.endpointId) query = query.where('webhook_endpoint_id', '=', filter.endpointId);
  if (filter.eventId) query = query.where('event_id', '=', filter.eventId);
  if (filter.status === 'succeeded') query = query.where('delivered_at', 'is not', null);
  if (filter.status === 'failed') query = query.where('delivered_at', 'is', null).where('attempts', '>=', MAX_ATTEMPTS);
  if (filter.status === 'pending') query = query.where('delivered_at', 'is', null).where('attempts', '<', MAX_ATTEMPTS);
  return paginate<DeliveryRow>(tx, query, { tenantId, table: 'webhook_deliveries', page });
}
