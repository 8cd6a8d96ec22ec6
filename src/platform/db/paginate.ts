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
 * it is a count of the filtered list, cached per database handle, tenant and filter for KOSH_LIST_COUNT_CACHE_MS
 * (default 5 s), dropped as soon as an app on that handle writes for the tenant (`countsChanged`), and
 * never less than the rows the page proves exist. Writes by another process show in the count within
 * the cache time. See docs/decisions/0035-fast-lists.md.
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

/**
 * What the lists of one database remember of their counts. It belongs to the database handle
 * (`db`, and `readDb` shares the one of its `db`: openDatabase links them), not to the process: two
 * apps with their own databases share nothing, and two apps on one handle share the counts as they
 * share the rows — a write by either drops what both remember.
 */
class ListCounts {
  cacheMs = 5_000;
  /** Bumped when every tenant's counts go (a membership change reaches lists keyed by organization). */
  everyTenant = 0;
  readonly generations = new Map<string, number>();
  readonly counts = new Map<string, { n: number; at: number; generation: number }>();

  generationOf(tenantId: string): number {
    return this.everyTenant * 1_000_003 + (this.generations.get(tenantId) ?? 0);
  }
}

const listCounts = new WeakMap<object, ListCounts>();

function countsOf(handle: object): ListCounts {
  let counts = listCounts.get(handle);
  if (!counts) listCounts.set(handle, (counts = new ListCounts()));
  return counts;
}

/** Called by openDatabase: a read replica's handle forgets its counts when its database's writes say so. */
export function shareListCounts(readHandle: object, writeHandle: object): void {
  listCounts.set(readHandle, countsOf(writeHandle));
}

/** KOSH_LIST_COUNT_CACHE_MS for the lists read through this database handle (0: count on every request that needs it). */
export function setListCountCacheMs(handle: object, ms: number): void {
  countsOf(handle).cacheMs = ms;
}

/**
 * Drops the cached list counts of a tenant (of every tenant without one) on this database handle:
 * runAction calls it after each action, the worker after each job.
 */
export function countsChanged(handle: object, tenantId?: string | null): void {
  const state = countsOf(handle);
  if (!tenantId) {
    state.everyTenant += 1;
    return;
  }
  if (state.generations.size > 100_000) state.generations.clear();
  state.generations.set(tenantId, (state.generations.get(tenantId) ?? 0) + 1);
}

function cached(tx: Tx, key: string, tenantId: string): number | undefined {
  if (tx.isTransaction) return undefined;
  const state = countsOf(tx);
  if (state.cacheMs <= 0) return undefined;
  const hit = state.counts.get(key);
  if (!hit) return undefined;
  if (hit.generation !== state.generationOf(tenantId) || performance.now() - hit.at > state.cacheMs) return undefined;
  return hit.n;
}

function remember(tx: Tx, key: string, tenantId: string, n: number): void {
  if (tx.isTransaction) return;
  const state = countsOf(tx);
  if (state.cacheMs <= 0) return;
  if (state.counts.size > 10_000) state.counts.clear();
  state.counts.set(key, { n, at: performance.now(), generation: state.generationOf(tenantId) });
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
