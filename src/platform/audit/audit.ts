import { sql, type Kysely, type Selectable } from 'kysely';
import type { DB, Tx, WriteTx } from '../db/schema.js';
import { deferWrite } from '../db/pipeline.js';
import { paginate } from '../db/paginate.js';
import type { Page } from '../http/envelope.js';
import { newId } from '../ids.js';
import type { Actor } from '../auth/actor.js';
import type { AuditChanges, AuditLogTable } from './audit.tables.js';
import './audit.tables.js';

export type { AuditChanges };

/**
 * The audit log (DESIGN §17): one append-only row per mutation by an API key, an operator or the
 * system, written in the mutation's own transaction (runAction does it for every `/v1` write), so
 * a change without its record, or a record of a change that rolled back, cannot exist. Migration
 * 0120 makes the table refuse UPDATE, DELETE and TRUNCATE.
 */
/** Who a record names: an API key, an operator, the system, or a customer acting in the portal. */
export type AuditActor = Actor | { type: 'customer'; id: string; label: string };

export type AuditRecord = {
  tenantId: string;
  actor: AuditActor;
  action: string;
  objectType: string | null;
  objectId: string | null;
  changes: AuditChanges;
  ip: string | null;
  requestId: string | null;
  at: Date;
};

/** Appends one record without waiting for it (it travels with the transaction's next statement or COMMIT). */
export async function appendAudit(tx: WriteTx, record: AuditRecord): Promise<void> {
  await deferWrite(
    tx,
    tx.insertInto('audit_log').values({
      tenant_id: record.tenantId,
      id: newId(),
      actor_type: record.actor.type,
      actor_id: record.actor.id,
      actor_label: record.actor.label.slice(0, 300),
      action: record.action.slice(0, 200),
      object_type: record.objectType,
      object_id: record.objectId,
      changes: JSON.stringify(record.changes),
      ip: record.ip?.slice(0, 100) ?? null,
      request_id: record.requestId?.slice(0, 128) ?? null,
      created_at: record.at,
    }),
  );
}

/**
 * The table that holds the records a `/v1/<resource>` route changes, where reading the row before
 * and after the action gives a meaningful `changes` diff. Resources not listed are audited with
 * their action and object id only.
 */
const TABLE_OF_RESOURCE: Record<string, string> = {
  customers: 'customers',
  invoices: 'invoices',
  subscriptions: 'subscriptions',
  'credit-notes': 'credit_notes',
  advances: 'customer_advances',
  plans: 'plans',
  payments: 'payments',
  refunds: 'refunds',
  entities: 'legal_entities',
  webhooks: 'webhook_endpoints',
  gifts: 'gifts',
  referrals: 'referrals',
  quotes: 'quotes',
  'dunning-campaigns': 'dunning_campaigns',
  'gateway-connections': 'gateway_connections',
  users: 'users',
  'developer/keys': 'api_keys',
};

/** Object types that the path's first segment does not name well. */
const OBJECT_TYPE_OF_RESOURCE: Record<string, string> = {
  entities: 'entity',
  'developer/keys': 'api_key',
  webhooks: 'webhook_endpoint',
  'users/invitations': 'invitation',
  'accounting/connections': 'accounting_connection',
  settings: 'settings',
  finance: 'reconciliation_run',
};

/** Columns never copied into the log (hashes and sealed secrets), nor compared (bookkeeping). */
const HIDDEN_COLUMN = /(^|_)(hash|secret|token|credentials)(_|$)|password|^totp_|_sealed$|^sealed_/;
/** A value sealed by platform/secrets (`v1.<iv>.<tag>.<ciphertext>`), whatever its column is called. */
const SEALED_VALUE = /^v1\.[\w-]{16}\.[\w-]{22}\.[\w-]*$/;

/** Audit `changes` never hold secrets (DESIGN §21): hidden by the column's name or by the value's shape. */
function isHidden(column: string, value: unknown): boolean {
  return HIDDEN_COLUMN.test(column) || (typeof value === 'string' && SEALED_VALUE.test(value));
}
const IGNORED_COLUMNS = new Set(['tenant_id', 'id', 'updated_at', 'created_at', 'last_used_at', 'version', 'lock_version']);

const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete' };

export type AuditTarget = {
  action: string;
  objectType: string | null;
  /** From the path (`:id`); else the response's `data.id`. */
  objectId: string | null;
  /** The table to diff, with the row's id, when known before the action. */
  table: string | null;
};

function singular(word: string): string {
  if (word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.endsWith('sses')) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

/**
 * What a `/v1` write is, from its route pattern: `POST /v1/invoices/:id/void` → `invoice.void`
 * on `invoice` `<id>`; `PATCH /v1/customers/:id` → `customer.update`; `POST /v1/plans` →
 * `plan.create` (id from the response). Two-word resources (`developer/keys`,
 * `users/invitations`) are matched first.
 */
export function auditTargetOf(method: string, pattern: string, params: Record<string, unknown>): AuditTarget {
  const segments = pattern
    .replace(/^\/v1\//, '')
    .split('/')
    .filter(Boolean);
  const two = segments.slice(0, 2).join('/');
  const resourceLength = segments.length >= 2 && !segments[1]!.startsWith(':') && (two in OBJECT_TYPE_OF_RESOURCE || two in TABLE_OF_RESOURCE) ? 2 : 1;
  const resource = segments.slice(0, resourceLength).join('/');
  const objectType = OBJECT_TYPE_OF_RESOURCE[resource] ?? singular(resource.replace(/-/g, '_'));
  const rest = segments.slice(resourceLength);
  const idParam = rest[0]?.startsWith(':') ? rest[0].slice(1) : undefined;
  const id = idParam !== undefined && typeof params[idParam] === 'string' ? (params[idParam] as string) : null;
  const words = rest.filter((s) => !s.startsWith(':')).map((s) => s.replace(/-/g, '_'));
  const lastIsParam = rest.length === 0 || rest[rest.length - 1]!.startsWith(':');
  const action = [objectType, ...words, ...(lastIsParam ? [VERBS[method] ?? method.toLowerCase()] : [])].join('.');
  const table = id !== null ? (TABLE_OF_RESOURCE[resource] ?? null) : null;
  return { action, objectType, objectId: id, table };
}

function comparable(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'bigint') return value.toString();
  return value;
}

/** The row as the log may show it: hidden columns dropped, dates as RFC 3339. */
export async function readAuditedRow(tx: Tx, table: string, tenantId: string, id: string): Promise<Record<string, unknown> | undefined> {
  const result = await sql<Record<string, unknown>>`SELECT * FROM ${sql.table(table)} WHERE tenant_id = ${tenantId} AND id = ${id}`.execute(tx);
  const row = result.rows[0];
  if (!row) return undefined;
  const shown: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) if (!isHidden(column, value)) shown[column] = comparable(value);
  return shown;
}

/** `{ field: { from, to } }` for every column whose value differs (a missing side is null). */
export function diffRows(before: Record<string, unknown> | undefined, after: Record<string, unknown> | undefined): AuditChanges {
  const changes: AuditChanges = {};
  const columns = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})]);
  for (const column of columns) {
    if (IGNORED_COLUMNS.has(column)) continue;
    const from = before?.[column] ?? null;
    const to = after?.[column] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[column] = { from, to };
  }
  return changes;
}

export type AuditFilter = {
  actor_id?: string | undefined;
  object_type?: string | undefined;
  object_id?: string | undefined;
  action?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
};

export type AuditEntry = {
  id: string;
  actor: { type: 'api_key' | 'user' | 'system' | 'customer'; id: string | null; label: string | null };
  action: string;
  object_type: string | null;
  object_id: string | null;
  changes: AuditChanges;
  ip: string | null;
  request_id: string | null;
  created_at: string;
};

type AuditRow = Selectable<AuditLogTable>;

/** Newest first, through paginate (offset or cursor; decision 0035). */
export async function listAudit(db: Kysely<DB>, tenantId: string, filter: AuditFilter, page: Page): Promise<{ entries: AuditEntry[]; total: number }> {
  let query = db.selectFrom('audit_log').where('tenant_id', '=', tenantId);
  if (filter.actor_id) query = query.where('actor_id', '=', filter.actor_id);
  if (filter.object_type) query = query.where('object_type', '=', filter.object_type);
  if (filter.object_id) query = query.where('object_id', '=', filter.object_id);
  if (filter.action) query = query.where('action', '=', filter.action);
  if (filter.from) query = query.where('created_at', '>=', new Date(filter.from));
  if (filter.to) query = query.where('created_at', '<', new Date(filter.to));
  const { rows, total } = await paginate<AuditRow>(db, query, { tenantId, table: 'audit_log', page });
  return {
    total,
    entries: rows.map((r) => ({
      id: r.id,
      actor: { type: r.actor_type, id: r.actor_id, label: r.actor_label },
      action: r.action,
      object_type: r.object_type,
      object_id: r.object_id,
      changes: r.changes,
      ip: r.ip,
      request_id: r.request_id,
      created_at: r.created_at.toISOString(),
    })),
  };
}
