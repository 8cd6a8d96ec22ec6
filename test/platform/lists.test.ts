import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pageQuery } from '../../src/platform/db/paginate.js';
import type { Page } from '../../src/platform/http/envelope.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/** Every `paginate(tx, query, { …, table: 'x', orderBy?, ascending? })` call in the repositories (and the audit log). */
type ListSite = { file: string; table: string; orderBy?: string; scopeColumn?: string; ascending: boolean };
function listsInSource(): ListSite[] {
  const found: ListSite[] = [];
  const scan = (file: string, text: string): void => {
    for (const m of text.matchAll(/paginate<\w+>\([^;]*?table: '(\w+)'([^;]*?)\}\)/g)) {
      const orderBy = /orderBy: '(\w+)'/.exec(m[2] ?? '')?.[1];
      const scopeColumn = /scopeColumn: '(\w+)'/.exec(m[2] ?? '')?.[1];
      found.push({
        file,
        table: m[1]!,
        ...(orderBy ? { orderBy } : {}),
        ...(scopeColumn ? { scopeColumn } : {}),
        ascending: /ascending: true/.test(m[2] ?? ''),
      });
    }
  };
  const modules = join(import.meta.dirname, '../../src/modules');
  for (const dir of readdirSync(modules)) {
    let files: string[] = [];
    try {
      files = readdirSync(join(modules, dir)).filter((f) => f.endsWith('.repository.ts'));
    } catch {
      continue;
    }
    for (const file of files) scan(`${dir}/${file}`, readFileSync(join(modules, dir, file), 'utf8'));
  }
  // Lists outside the modules: the audit log (platform).
  scan('platform/audit/audit.ts', readFileSync(join(import.meta.dirname, '../../src/platform/audit/audit.ts'), 'utf8'));
  return found;
}

/** Filters a list always has (the route gives them), so its index can serve it: by table, or by `table.orderBy`. */
const ALWAYS_FILTERED: Record<string, Record<string, string>> = {
  webhook_deliveries: { webhook_endpoint_id: '00000000-0000-4000-8000-000000000000' },
  // The collections queue and the invoice-aging buckets: open invoices by due date.
  'invoices.due_date': { status: 'open' },
  // The MRR waterfall bucket list: one currency and one kind.
  mrr_movements: { currency: 'INR', kind: 'churned' },
};

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
});

afterAll(async () => {
  await t?.close();
});

describe('lists', () => {
  describe('the index behind every list', () => {
    const lists = listsInSource();

    it('finds the list repositories', () => {
      expect(lists.length).toBeGreaterThanOrEqual(12);
    });

    it.each(lists)(
      '$table ($file): the page and the cursor page read an index in list order, no sort, no table scan',
      async ({ table, orderBy, ascending, scopeColumn }) => {
        const db = t.kosh.deps.db;
        // eslint-disable-next-line @typescript-eslint/no-explicit-any
        let base = (db as any).selectFrom(table).where(scopeColumn ?? 'tenant_id', '=', acme.tenantId);
        for (const [column, value] of Object.entries(ALWAYS_FILTERED[orderBy ? `${table}.${orderBy}` : table] ?? ALWAYS_FILTERED[table] ?? {}))
          base = base.where(column, '=', value);
        if (table === 'webhook_endpoints') base = base.where('deleted_at', 'is', null);
        const pages: Page[] = [
          { limit: 50, page: 1, offset: 0 },
          { limit: 50, page: 3, offset: 100 },
          { limit: 50, page: 1, offset: 0, startingAfter: '00000000-0000-4000-8000-000000000000' },
          { limit: 50, page: 1, offset: 0, endingBefore: '00000000-0000-4000-8000-000000000000' },
        ];
        for (const page of pages) {
          const compiled = pageQuery(base, {
            tenantId: acme.tenantId,
            table,
            page,
            ...(orderBy ? { orderBy } : {}),
            ...(scopeColumn ? { scopeColumn } : {}),
            ascending,
          }).compile();
          const plan = await db.connection().execute(async (conn) => {
            // Tiny tables: make every scan and sort look dear, so the planner shows the index it would use.
            await sql`SET enable_seqscan = off`.execute(conn);
            await sql`SET enable_sort = off`.execute(conn);
            await sql`SET enable_incremental_sort = off`.execute(conn);
            try {
              const explained = await conn.executeQuery<{ 'QUERY PLAN': string }>({ ...compiled, sql: `EXPLAIN ${compiled.sql}` });
              return explained.rows.map((r) => r['QUERY PLAN']).join('\n');
            } finally {
              await sql`RESET enable_seqscan`.execute(conn);
              await sql`RESET enable_sort`.execute(conn);
              await sql`RESET enable_incremental_sort`.execute(conn);
            }
          });
          expect(plan, `${table} ${JSON.stringify(page)}`).toMatch(/Index (Only )?Scan/);
          expect(plan, `${table} ${JSON.stringify(page)}`).not.toMatch(/Seq Scan on /);
          expect(plan, `${table} ${JSON.stringify(page)}`).not.toMatch(/^\s*(->\s*)?(Incremental )?Sort\b/m);
        }
      },
    );
  });

  describe('total_count', () => {
    it('stays exact as the tenant writes, and has_more comes from one extra row', async () => {
      for (let i = 0; i < 4; i += 1) await acme.http.POST('/v1/customers', { body: { email: `count${i}@acme.test`, name: `Count ${i}` } });
      const first = await acme.http.GET('/v1/customers', { query: { limit: 3 } });
      expect(first.body).toMatchObject({ has_more: true, total_count: 4 });
      await acme.http.POST('/v1/customers', { body: { email: 'count4@acme.test', name: 'Count 4' } });
      const again = await acme.http.GET('/v1/customers', { query: { limit: 3 } });
      expect(again.body).toMatchObject({ has_more: true, total_count: 5 });
      const last = await acme.http.GET('/v1/customers', { query: { limit: 3, page: 2 } });
      expect(last.body).toMatchObject({ has_more: false, total_count: 5 });
      expect(last.body.data).toHaveLength(2);
    });

    it('pages with starting_after and ending_before through the same list', async () => {
      const all = (await acme.http.GET('/v1/customers', { query: { limit: 100 } })).body.data.map((c: { id: string }) => c.id);
      const next = await acme.http.GET('/v1/customers', { query: { limit: 2, starting_after: all[1] } });
      expect(next.body.data.map((c: { id: string }) => c.id)).toEqual(all.slice(2, 4));
      expect(next.body.has_more).toBe(true);
      const previous = await acme.http.GET('/v1/customers', { query: { limit: 2, ending_before: all[3] } });
      expect(previous.body.data.map((c: { id: string }) => c.id)).toEqual(all.slice(1, 3));
      const both = await acme.api('GET', `/v1/customers?starting_after=${all[0]}&ending_before=${all[1]}`);
      expect(both.status).toBe(400);
    });
  });
});
