import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type pg from 'pg';
import { openTestDatabase } from '../support/database.js';
import type { Database } from '../../src/platform/db/database.js';

/**
 * DESIGN §2: Kosh must be distributable by tenant_id on Citus. This reads the live catalog of a
 * migrated database — so it judges every migration, present and future — and fails on any
 * tenant-owned table that breaks the rules.
 */

/**
 * The tables that are not tenant-owned: global lookup and system tables that may become Citus
 * reference (or coordinator-local) tables. Adding a name here is a design decision; write it down.
 */
const GLOBAL_TABLES = [
  'tenants',
  'api_keys',
  'jobs',
  'schema_migrations',
  'organizations',
  'organization_fx_rates',
  // Shared rate-limit counters (decision 0270): keyed by budget and client, not by tenant; coordinator-local.
  'rate_limit_counters',
];

type Rule =
  | 'tenant_id_missing'
  | 'tenant_id_nullable'
  | 'no_primary_key'
  | 'primary_key_without_tenant_id'
  | 'unique_without_tenant_id'
  | 'foreign_key_without_tenant_id'
  | 'global_table_references_tenant_table';

type Violation = { table: string; rule: Rule; detail: string };

type Query = (text: string, values?: unknown[]) => Promise<{ rows: any[] }>; // eslint-disable-line @typescript-eslint/no-explicit-any

/**
 * Every violation of the Citus rules among the tables of `schema`:
 * - a tenant-owned table has `tenant_id NOT NULL` and a primary key that includes it;
 * - every unique constraint and unique index (partial and expression indexes too) includes it;
 * - a foreign key between tenant-owned tables pairs tenant_id with tenant_id (so both rows live on
 *   the same shard); one into a global table is fine (distributed → reference), but a global
 *   table may not reference a tenant-owned one (reference → distributed is not possible).
 */
async function findViolations(query: Query, schema: string, globalTables: string[]): Promise<Violation[]> {
  const tables = (
    await query(
      `SELECT c.oid::int AS oid, c.relname AS name, a.attnum AS tenant_attnum, a.attnotnull AS tenant_not_null
         FROM pg_class c
         JOIN pg_namespace n ON n.oid = c.relnamespace
         LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND a.attnum > 0 AND NOT a.attisdropped
        WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
        ORDER BY c.relname`,
      [schema],
    )
  ).rows as { oid: number; name: string; tenant_attnum: number | null; tenant_not_null: boolean | null }[];
  const byOid = new Map(tables.map((t) => [t.oid, t]));
  const isGlobal = (name: string) => globalTables.includes(name);
  const violations: Violation[] = [];

  const indexes = (
    await query(
      `SELECT i.indrelid::int AS table_oid, ic.relname AS name, i.indisprimary AS is_primary,
              string_to_array(i.indkey::text, ' ')::int[] AS columns, pg_get_indexdef(i.indexrelid) AS definition
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
        WHERE i.indisunique AND i.indrelid = ANY($1::oid[])`,
      [tables.map((t) => t.oid)],
    )
  ).rows as { table_oid: number; name: string; is_primary: boolean; columns: number[]; definition: string }[];

  const foreignKeys = (
    await query(
      `SELECT conname AS name, conrelid::int AS from_oid, confrelid::int AS to_oid, conkey::int[] AS from_cols,
              confkey::int[] AS to_cols, pg_get_constraintdef(oid) AS definition
         FROM pg_constraint
        WHERE contype = 'f' AND conrelid = ANY($1::oid[])`,
      [tables.map((t) => t.oid)],
    )
  ).rows as { name: string; from_oid: number; to_oid: number; from_cols: number[]; to_cols: number[]; definition: string }[];

  for (const table of tables) {
    if (isGlobal(table.name)) continue;
    if (table.tenant_attnum === null) {
      violations.push({ table: table.name, rule: 'tenant_id_missing', detail: 'has no tenant_id column' });
      continue;
    }
    if (!table.tenant_not_null) violations.push({ table: table.name, rule: 'tenant_id_nullable', detail: 'tenant_id is nullable' });
    const own = indexes.filter((i) => i.table_oid === table.oid);
    if (!own.some((i) => i.is_primary)) violations.push({ table: table.name, rule: 'no_primary_key', detail: 'has no primary key' });
    for (const index of own) {
      if (index.columns.includes(table.tenant_attnum)) continue;
      violations.push({
        table: table.name,
        rule: index.is_primary ? 'primary_key_without_tenant_id' : 'unique_without_tenant_id',
        detail: `${index.name}: ${index.definition}`,
      });
    }
  }

  for (const fk of foreignKeys) {
    const from = byOid.get(fk.from_oid);
    const to = byOid.get(fk.to_oid);
    if (!from) continue;
    const toGlobal = !to || isGlobal(to.name); // a table outside the schema is treated as global
    if (isGlobal(from.name)) {
      if (!toGlobal) {
        violations.push({ table: from.name, rule: 'global_table_references_tenant_table', detail: `${fk.name}: ${fk.definition}` });
      }
      continue;
    }
    if (toGlobal) continue;
    const paired = fk.from_cols.some((col, i) => col === from.tenant_attnum && fk.to_cols[i] === to.tenant_attnum);
    if (!paired) violations.push({ table: from.name, rule: 'foreign_key_without_tenant_id', detail: `${fk.name}: ${fk.definition}` });
  }
  return violations;
}

let database: Database;

beforeAll(async () => {
  database = await openTestDatabase();
});
afterAll(() => database?.close());

const poolQuery = (): Query => (text, values) => database.pool.query(text, values);

describe('citus rules', () => {
  describe('the migrated schema', () => {
    it('has every declared global table (the allow-list stays true)', async () => {
      const { rows } = await database.pool.query<{ relname: string }>(
        `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')`,
      );
      const names = rows.map((r) => r.relname);
      expect(names).toEqual(expect.arrayContaining(GLOBAL_TABLES));
      // Something tenant-owned is checked, so the test below cannot pass by finding nothing.
      expect(names).toEqual(expect.arrayContaining(['plans', 'prices', 'legal_entities']));
    });

    it('breaks no rule: tenant_id NOT NULL, and in every primary key, unique constraint, unique index and foreign key', async () => {
      const violations = await findViolations(poolQuery(), 'public', GLOBAL_TABLES);
      expect(violations.map((v) => `${v.table}: ${v.rule} (${v.detail})`)).toEqual([]);
    });
  });

  describe('the checker itself', () => {
    let client: pg.PoolClient;
    let violations: Violation[];

    // Bad tables in a scratch schema, inside a transaction that is rolled back: nothing remains.
    beforeAll(async () => {
      client = await database.pool.connect();
      await client.query('BEGIN');
      await client.query(`
        CREATE SCHEMA citus_selftest;
        SET LOCAL search_path TO citus_selftest;
        CREATE TABLE tenants (id uuid PRIMARY KEY);
        CREATE TABLE good (
          tenant_id uuid NOT NULL REFERENCES tenants (id), id uuid NOT NULL, code text NOT NULL,
          PRIMARY KEY (tenant_id, id), UNIQUE (tenant_id, code));
        CREATE UNIQUE INDEX good_lower_code ON good (tenant_id, lower(code)) WHERE code <> '';
        CREATE TABLE good_child (
          tenant_id uuid NOT NULL, id uuid NOT NULL, good_id uuid NOT NULL,
          PRIMARY KEY (tenant_id, id), FOREIGN KEY (tenant_id, good_id) REFERENCES good (tenant_id, id));
        CREATE TABLE no_tenant (id uuid PRIMARY KEY);
        CREATE TABLE nullable_tenant (tenant_id uuid, id uuid NOT NULL, UNIQUE (tenant_id, id));
        CREATE TABLE pk_without_tenant (tenant_id uuid NOT NULL, id uuid PRIMARY KEY);
        CREATE TABLE unique_without_tenant (tenant_id uuid NOT NULL, id uuid NOT NULL, code text UNIQUE, PRIMARY KEY (tenant_id, id));
        CREATE TABLE unique_index_without_tenant (tenant_id uuid NOT NULL, id uuid NOT NULL, code text, PRIMARY KEY (tenant_id, id));
        CREATE UNIQUE INDEX uiwt_code ON unique_index_without_tenant (lower(code));
        CREATE TABLE fk_without_tenant (
          tenant_id uuid NOT NULL, id uuid NOT NULL, other_id uuid, PRIMARY KEY (tenant_id, id),
          FOREIGN KEY (other_id) REFERENCES pk_without_tenant (id));
        CREATE TABLE fk_tenant_unpaired (
          tenant_id uuid NOT NULL, id uuid NOT NULL, owner_id uuid NOT NULL, good_id uuid NOT NULL, PRIMARY KEY (tenant_id, id),
          FOREIGN KEY (owner_id, good_id) REFERENCES good (tenant_id, id));
        CREATE TABLE fk_tenant_crossed (
          tenant_id uuid NOT NULL, id uuid NOT NULL, good_id uuid NOT NULL, PRIMARY KEY (tenant_id, id),
          FOREIGN KEY (good_id, tenant_id) REFERENCES good (tenant_id, id));
        CREATE TABLE api_keys (
          id uuid PRIMARY KEY, tenant_id uuid, good_id uuid,
          FOREIGN KEY (tenant_id, good_id) REFERENCES good (tenant_id, id));
      `);
      violations = await findViolations((text, values) => client.query(text, values), 'citus_selftest', GLOBAL_TABLES);
    });
    afterAll(async () => {
      await client?.query('ROLLBACK');
      client?.release();
    });

    it.each<[string, Rule]>([
      ['no_tenant', 'tenant_id_missing'],
      ['nullable_tenant', 'tenant_id_nullable'],
      ['nullable_tenant', 'no_primary_key'],
      ['pk_without_tenant', 'primary_key_without_tenant_id'],
      ['unique_without_tenant', 'unique_without_tenant_id'],
      ['unique_index_without_tenant', 'unique_without_tenant_id'],
      ['fk_without_tenant', 'foreign_key_without_tenant_id'],
      ['fk_tenant_unpaired', 'foreign_key_without_tenant_id'],
      ['fk_tenant_crossed', 'foreign_key_without_tenant_id'],
      ['api_keys', 'global_table_references_tenant_table'],
    ])('catches %s: %s', (table, rule) => {
      expect(violations).toContainEqual(expect.objectContaining({ table, rule }));
    });

    it('passes the tables that keep the rules, partial and expression unique indexes included', () => {
      expect(violations.filter((v) => ['tenants', 'good', 'good_child'].includes(v.table))).toEqual([]);
    });

    it('reports nothing else', () => {
      expect(violations).toHaveLength(10);
    });
  });
});
