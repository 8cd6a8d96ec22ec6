import type { UpdateQueryBuilder } from 'kysely';
import { errors, type ErrorReason } from '../errors.js';
import type { Tx } from './schema.js';

/**
 * The guarded state transition every `*.states.ts` uses:
 *   UPDATE <table> SET status = <to>, … WHERE tenant_id = $t AND id = $id AND status IN (<from>) [AND guard] RETURNING *
 * On PostgreSQL a concurrent second UPDATE waits for the first transaction, re-checks the status
 * and finds nothing, so of many racing requests exactly one moves the record. Zero rows → the
 * record is re-read: missing (or another tenant's) → 404, else the module's refusal or the default
 * 409 `cannot <event> a <noun> whose status is <status>` with reason `<noun>_<status>`.
 */

/** A module's `from × event → to` table. */
export type Transitions<Status extends string> = Record<string, { from: readonly Status[]; to: Status }>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyUpdate = UpdateQueryBuilder<any, any, any, any>;

export type TransitionSpec<Row> = {
  table: string;
  /** The record's name in messages and reasons (`gift`, `credit_note`). */
  noun: string;
  tenantId: string;
  id: string;
  event: string;
  /** `to` absent: the status stays (a flag-only move, e.g. scheduling a cancellation). */
  transition: { from: readonly string[]; to?: string };
  /** Other columns set with the status. */
  patch?: Record<string, unknown>;
  /** Extra WHERE conditions (a validity window…). */
  guard?: (query: AnyUpdate) => AnyUpdate;
  /** A refusal other than the default 409 for the record as it is now (undefined: the default). */
  refuse?: (current: Row) => Error | undefined;
};

/** The UPDATE alone: the moved row, or undefined when the guard did not hold. */
export async function tryTransition<Row>(tx: Tx, spec: Omit<TransitionSpec<Row>, 'refuse' | 'noun'>): Promise<Row | undefined> {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  let query: AnyUpdate = (tx as any)
    .updateTable(spec.table)
    .set({ ...spec.patch, ...(spec.transition.to !== undefined ? { status: spec.transition.to } : {}) })
    .where('tenant_id', '=', spec.tenantId)
    .where('id', '=', spec.id)
    .where('status', 'in', [...spec.transition.from]);
  if (spec.guard) query = spec.guard(query);
  return (await query.returningAll().executeTakeFirst()) as Row | undefined;
}

export async function transition<Row extends { status: string }>(tx: Tx, spec: TransitionSpec<Row>): Promise<Row> {
  const row = await tryTransition<Row>(tx, spec);
  if (row) return row;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const current = (await (tx as any).selectFrom(spec.table).selectAll().where('tenant_id', '=', spec.tenantId).where('id', '=', spec.id).executeTakeFirst()) as
    Row | undefined;
  if (!current) throw errors.notFound(spec.noun.replace(/_/g, ' '));
  throw (
    spec.refuse?.(current) ??
    errors.conflict(`cannot ${spec.event} a ${spec.noun.replace(/_/g, ' ')} whose status is ${current.status}`, `${spec.noun}_${current.status}` as ErrorReason)
  );
}

/** The statuses a record may be in for an update that leaves it in `to` (the union of the `from` of every event into `to`). */
export function statusesBefore<Status extends string>(transitions: Transitions<Status>, to: Status): Status[] {
  const from = new Set<Status>();
  for (const t of Object.values(transitions)) if (t.to === to) for (const s of t.from) from.add(s);
  if (from.size === 0) throw new Error(`no transition leads to status ${to}`);
  return [...from];
}
