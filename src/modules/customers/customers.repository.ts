import { sql, type Insertable, type Selectable, type Updateable } from 'kysely';
import { plainArrayLiteral } from '../../platform/db/array-literal.js';
import { paginate } from '../../platform/db/paginate.js';
import type { LockFlag, Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { CustomersTable } from './customers.tables.js';
import './customers.tables.js';

export type CustomerRow = Selectable<CustomersTable>;

export async function insertCustomer(tx: Tx, row: Insertable<CustomersTable>): Promise<void> {
  await tx.insertInto('customers').values(row).execute();
}

export async function findCustomerRow<T extends Tx>(
  tx: T,
  tenantId: string,
  id: string,
  options: { forUpdate?: LockFlag<T> } = {},
): Promise<CustomerRow | undefined> {
  let query = tx.selectFrom('customers').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function findCustomerRows(tx: Tx, tenantId: string, ids: string[]): Promise<CustomerRow[]> {
  if (ids.length === 0) return [];
  return tx.selectFrom('customers').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', ids).execute();
}

/**
 * A batch's customer references in one query (usage ingestion): of `ids` (lowercase uuids, sent
 * as one array literal without escaping), the
 * ones no customer of the tenant has — usually none, so a batch of 1 000 ids reads back nothing —
 * and the customers whose external_id is among `externalIds` (two may share one).
 */
export async function customerRefs(
  tx: Tx,
  tenantId: string,
  ids: string[],
  externalIds: string[],
): Promise<{ missing: Set<string>; external: { id: string; external_id: string }[] }> {
  if (ids.length === 0 && externalIds.length === 0) return { missing: new Set(), external: [] };
  const { rows } = await sql<{ id: string; external_id: string | null }>`
    SELECT x.id::text AS id, NULL AS external_id FROM unnest(${plainArrayLiteral(ids)}::uuid[]) AS x(id)
     WHERE NOT EXISTS (SELECT 1 FROM customers c WHERE c.tenant_id = ${tenantId}::uuid AND c.id = x.id)
    UNION ALL
    SELECT c.id::text, c.external_id FROM customers c WHERE c.tenant_id = ${tenantId}::uuid AND c.external_id = ANY(${externalIds}::text[])`.execute(tx);
  const missing = new Set<string>();
  const external: { id: string; external_id: string }[] = [];
  for (const r of rows) {
    if (r.external_id === null) missing.add(r.id);
    else external.push({ id: r.id, external_id: r.external_id });
  }
  return { missing, external };
}

/** lower(email) matches the unique index customers_tenant_email, so this is an index lookup. */
export async function findCustomerRowByEmail(tx: Tx, tenantId: string, email: string): Promise<CustomerRow | undefined> {
  return tx
    .selectFrom('customers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where(sql`lower(email)`, '=', email.toLowerCase())
    .executeTakeFirst();
}

export async function updateCustomerRow(tx: Tx, tenantId: string, id: string, patch: Updateable<CustomersTable>): Promise<CustomerRow | undefined> {
  return tx.updateTable('customers').set(patch).where('tenant_id', '=', tenantId).where('id', '=', id).returningAll().executeTakeFirst();
}

export type CustomerFilter = { q?: string; email?: string };

export async function listCustomerRows(tx: Tx, tenantId: string, filter: CustomerFilter, page: Page): Promise<{ rows: CustomerRow[]; total: number }> {
  let query = tx.selectFrom('customers').where('tenant_id', '=', tenantId);
  if (filter.q) {
    const pattern = `%${filter.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) => eb.or([eb('name', 'ilike', pattern), eb('email', 'ilike', pattern)]));
  }
  if (filter.email !== undefined) query = query.where(sql`lower(email)`, '=', filter.email.toLowerCase());
  return paginate<CustomerRow>(tx, query, { tenantId, table: 'customers', page });
}

/** Whether the tenant has this test clock (customer creation names one). */
export async function testClockExists(tx: Tx, tenantId: string, id: string): Promise<boolean> {
  const row = await tx.selectFrom('test_clocks').select('id').where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
  return row !== undefined;
}

export async function customersPerTestClock(tx: Tx, tenantId: string, clockIds: string[]): Promise<{ test_clock_id: string; n: number }[]> {
  if (clockIds.length === 0) return [];
  const rows = await tx
    .selectFrom('customers')
    .select((eb) => ['test_clock_id', eb.fn.countAll<number>().as('n')])
    .where('tenant_id', '=', tenantId)
    .where('test_clock_id', 'in', clockIds)
    .groupBy('test_clock_id')
    .execute();
  return rows.map((r) => ({ test_clock_id: r.test_clock_id!, n: Number(r.n) }));
}

/**
 * The chain above a customer, nearest first (its parent, the parent's parent, …), at most `limit`
 * long: one recursive statement. A cycle in the stored data (none can be written) stops at the limit.
 */
export async function ancestorIds(tx: Tx, tenantId: string, id: string, limit: number): Promise<string[]> {
  const { rows } = await sql<{ id: string }>`
    WITH RECURSIVE up (id, parent_customer_id, depth) AS (
      SELECT id, parent_customer_id, 1 FROM customers WHERE tenant_id = ${tenantId} AND id = ${id}
      UNION ALL
      SELECT c.id, c.parent_customer_id, up.depth + 1
        FROM customers c JOIN up ON c.tenant_id = ${tenantId} AND c.id = up.parent_customer_id
       WHERE up.depth <= ${limit}
    )
    SELECT id FROM up WHERE depth > 1 ORDER BY depth`.execute(tx);
  return rows.map((r) => r.id);
}

/** How many levels hang below a customer (0: no children), counted up to `limit`. */
export async function levelsBelow(tx: Tx, tenantId: string, id: string, limit: number): Promise<number> {
  const { rows } = await sql<{ levels: number }>`
    WITH RECURSIVE down (id, depth) AS (
      SELECT id, 0 FROM customers WHERE tenant_id = ${tenantId} AND id = ${id}
      UNION ALL
      SELECT c.id, down.depth + 1
        FROM customers c JOIN down ON c.tenant_id = ${tenantId} AND c.parent_customer_id = down.id
       WHERE down.depth < ${limit}
    )
    SELECT max(depth)::int AS levels FROM down`.execute(tx);
  return Number(rows[0]?.levels ?? 0);
}

/** The customers billed to these parents (bill_to = 'parent'), by the customers_children index. */
export async function childrenBilledTo(tx: Tx, tenantId: string, parentIds: string[]): Promise<string[]> {
  if (parentIds.length === 0) return [];
  const rows = await tx
    .selectFrom('customers')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('parent_customer_id', '=', sql<string>`ANY(${parentIds}::uuid[])`)
    .where('bill_to', '=', 'parent')
    .execute();
  return rows.map((r) => r.id);
}
