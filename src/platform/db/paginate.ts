import { performance } from 'node:perf_hooks';
import { sql, type SelectQueryBuilder } from 'kysely';
import type { Page } from '../http/envelope.js';
import { readTogether } from './read-together.js';
import type { Tx } from './schema.js';

/**
 * The one paginated read every list repository uses.
 *
 * Order: newest first, `(created_at DESC, id DESC)` (or another column the caller names, with `id`
 * breaking ties) — the `(tenant_id, created_at, id)` indexes serve it.
 * Paging: `page`/`limit` (offset), or a cursor: `starting_after=<id>` (the rows after that object
 * in list order) or `ending_before=<id>` (the rows before it). A cursor that names no object of the
 * list gives an empty page.
 * `has_more`: exact, from reading `limit + 1` rows (in the direction of travel).
 * `total_count` (SPEC requires it) must not cost a scan per request. It is exact whenever the page
 * itself shows the end of the list (offset paging, a non-empty last page, or the first page); else
 * it is a count of the filtered list, cached per tenant and filter for KOSH_LIST_COUNT_CACHE_MS
 * (default 5 s), dropped as soon as this process writes for the tenant (`countsChanged`), and never
 * less than the rows the page proves exist. Writes by another process show in the count within the
 * cache time. See docs/decisions/0035-fast-lists.md.
 */

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySelect = SelectQueryBuilder<any, any, any>;

export type ListOptions = {
  tenantId: string;
  /** The table (or alias) the rows come from; its `id` and order column are used for the cursor. */
  table: string;
  page: Page;
  /** Order column (`id` breaks ties). Default `created_at`. */
  orderBy?: string;
  /** Oldest / smallest first (default: newest first). */
  ascending?: boolean;
  /** More columns beside the row's own (e.g. its children as JSON), read in the same statement. */
  select?: (query: AnySelect) => AnySelect;
  /** Only these columns of the row (default: all of them). */
  columns?: string[];
  /**
   * The column that scopes the list to its owner, for the cursor's anchor row (default
   * `tenant_id`; the tenants of an organization: `organization_id`, with the organization's id as
   * `tenantId`).
   */
  scopeColumn?: string;
};

export type ListResult<Row> = { rows: Row[]; total: number; hasMore: boolean };

let countCacheMs = 5_000;
const generations = new Map<string, number>();
const counts = new WeakMap<object, Map<string, { n: number; at: number; generation: number }>>();

/** KOSH_LIST_COUNT_CACHE_MS (0: count on every request that needs it). */
export function setListCountCacheMs(ms: number): void {
  countCacheMs = ms;
}

let everyTenant = 0;

/**
 * Drops the cached list counts of a tenant (of every tenant without one): runAction calls it after
 * each action, the worker after each job.
 */
export function countsChanged(tenantId?: string | null): void {
  if (!tenantId) {
    everyTenant += 1;
    return;
  }
  if (generations.size > 100_000) generations.clear();
  generations.set(tenantId, (generations.get(tenantId) ?? 0) + 1);
}

function generationOf(tenantId: string): number {
  return everyTenant * 1_000_003 + (generations.get(tenantId) ?? 0);
}

function cached(tx: Tx, key: string, tenantId: string): number | undefined {
  if (countCacheMs <= 0 || tx.isTransaction) return undefined;
  const hit = counts.get(tx)?.get(key);
  if (!hit) return undefined;
  if (hit.generation !== generationOf(tenantId) || performance.now() - hit.at > countCacheMs) return undefined;
  return hit.n;
}

function remember(tx: Tx, key: string, tenantId: string, n: number): void {
  if (countCacheMs <= 0 || tx.isTransaction) return;
  let map = counts.get(tx);
  if (!map) counts.set(tx, (map = new Map()));
  if (map.size > 10_000) map.clear();
  map.set(key, { n, at: performance.now(), generation: generationOf(tenantId) });
}

/** The rows query `paginate` sends (exported for the EXPLAIN test of every list's index). */
export function pageQuery(query: AnySelect, options: ListOptions): AnySelect {
  const { page, table, tenantId } = options;
  const order = options.orderBy ?? 'created_at';
  const col = (name: string) => sql.ref(`${table}.${name}`);
  const cursor = page.startingAfter ?? page.endingBefore;
  const backwards = page.startingAfter === undefined && page.endingBefore !== undefined;
  // Reading backwards (ending_before) walks the list order reversed, then turns the page round.
  const descending = (options.ascending ?? false) === backwards;

  let rowsQuery = options.columns ? query.select(options.columns.map((c) => `${table}.${c}`)) : query.selectAll(table);
  if (options.select) rowsQuery = options.select(rowsQuery);
  if (cursor !== undefined) {
    const scope = sql.ref(options.scopeColumn ?? 'tenant_id');
    const anchor = sql`(SELECT ${sql.ref(order)}, id FROM ${sql.table(table)} WHERE ${scope} = ${tenantId} AND id = ${cursor})`;
    rowsQuery = rowsQuery.where(sql<boolean>`(${col(order)}, ${col('id')}) ${sql.raw(descending ? '<' : '>')} ${anchor}`);
  }
  const direction = descending ? 'desc' : 'asc';
  rowsQuery = rowsQuery
    .orderBy(col(order), direction)
    .orderBy(col('id'), direction)
    .limit(page.limit + 1);
  if (cursor === undefined && page.offset > 0) rowsQuery = rowsQuery.offset(page.offset);
  return rowsQuery;
}

export async function paginate<Row>(tx: Tx, query: AnySelect, options: ListOptions): Promise<ListResult<Row>> {
  const { page, tenantId } = options;
  const cursor = page.startingAfter ?? page.endingBefore;
  const backwards = page.startingAfter === undefined && page.endingBefore !== undefined;
  const rowsQuery = pageQuery(query, options);

  const countQuery = query.select(sql<string>`count(*)`.as('n'));
  const compiledCount = countQuery.compile();
  const key = `${compiledCount.sql}\u0000${JSON.stringify(compiledCount.parameters)}`;
  let total = cached(tx, key, tenantId);
  let rows: Row[];
  if (total === undefined) {
    const [found, [count]] = await readTogether(tx, rowsQuery, countQuery);
    rows = found as Row[];
    total = Number((count as { n?: string } | undefined)?.n ?? 0);
    remember(tx, key, tenantId, total);
  } else {
    rows = (await rowsQuery.execute()) as Row[];
  }

  const hasMore = rows.length > page.limit;
  if (hasMore) rows = rows.slice(0, page.limit);
  if (backwards) rows.reverse();
  if (cursor === undefined) {
    // What the page proves: the rows before it, its own, and one more when there are more.
    const seen = page.offset + rows.length;
    if (!hasMore && (rows.length > 0 || page.offset === 0)) total = seen;
    else if (rows.length > 0) total = Math.max(total, seen + (hasMore ? 1 : 0));
  }
  page.hasMore = hasMore;
  return { rows, total, hasMore };
}
