import { sql, type Insertable, type Selectable } from 'kysely';
import { paginate, type ListResult } from '../../platform/db/paginate.js';
import type { Tx, WriteTx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { OrganizationFxRatesTable, OrganizationsTable } from './organizations.tables.js';

export type OrganizationRow = Selectable<OrganizationsTable>;
export type MemberRow = {
  id: string;
  name: string;
  email: string;
  data_region: string;
  base_currency: string;
  organization_id: string | null;
  created_at: Date;
  updated_at: Date;
};

/** What a member tenant shows of itself (never its secrets). */
const MEMBER_COLUMNS = ['id', 'name', 'email', 'data_region', 'base_currency', 'organization_id', 'created_at', 'updated_at'];

/**
 * Organizations are global, but every read here is scoped by the calling tenant's membership:
 * a tenant sees an organization only while `tenants.organization_id` names it.
 */
export async function insertOrganization(tx: Tx, row: Insertable<OrganizationsTable>): Promise<OrganizationRow> {
  return tx.insertInto('organizations').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findOrganizationOfMember(tx: Tx, tenantId: string, organizationId: string): Promise<OrganizationRow | undefined> {
  return tx
    .selectFrom('organizations as o')
    .innerJoin('tenants as t', 't.organization_id', 'o.id')
    .selectAll('o')
    .where('t.id', '=', tenantId)
    .where('o.id', '=', organizationId)
    .executeTakeFirst();
}

export async function findOrganizationByJoinCode(tx: Tx, organizationId: string, joinCodeHash: string): Promise<OrganizationRow | undefined> {
  return tx.selectFrom('organizations').selectAll().where('id', '=', organizationId).where('join_code_hash', '=', joinCodeHash).executeTakeFirst();
}

export async function updateJoinCode(tx: Tx, organizationId: string, joinCodeHash: string, now: Date): Promise<void> {
  await tx.updateTable('organizations').set({ join_code_hash: joinCodeHash, updated_at: now }).where('id', '=', organizationId).execute();
}

export async function organizationIdOfTenant(tx: Tx, tenantId: string): Promise<string | null> {
  const row = await tx.selectFrom('tenants').select('organization_id').where('id', '=', tenantId).executeTakeFirst();
  return row?.organization_id ?? null;
}

/** Locks the tenant row while its membership changes (one organization at a time). */
export async function lockTenant(tx: WriteTx, tenantId: string): Promise<{ organization_id: string | null } | undefined> {
  return tx.selectFrom('tenants').select('organization_id').where('id', '=', tenantId).forUpdate().executeTakeFirst();
}

export async function setMembership(tx: Tx, tenantId: string, organizationId: string | null, now: Date): Promise<MemberRow> {
  return tx
    .updateTable('tenants')
    .set({ organization_id: organizationId, updated_at: now })
    .where('id', '=', tenantId)
    .returning(['id', 'name', 'email', 'data_region', 'base_currency', 'organization_id', 'created_at', 'updated_at'])
    .executeTakeFirstOrThrow();
}

/** The tenants of an organization, oldest first (paginate scoped by `organization_id`). */
export async function listMembers(tx: Tx, organizationId: string, page: Page): Promise<ListResult<MemberRow>> {
  const query = tx.selectFrom('tenants').where('organization_id', '=', organizationId);
  return paginate<MemberRow>(tx, query, {
    tenantId: organizationId,
    table: 'tenants',
    page,
    ascending: true,
    scopeColumn: 'organization_id',
    columns: MEMBER_COLUMNS,
  });
}

export async function allMembers(tx: Tx, organizationId: string): Promise<{ id: string; name: string }[]> {
  return tx.selectFrom('tenants').select(['id', 'name']).where('organization_id', '=', organizationId).orderBy('created_at').orderBy('id').execute();
}

export type FxRateRow = { currency: string; effective_date: string; rate: string; created_at: Date };

export async function upsertFxRate(tx: Tx, row: Insertable<OrganizationFxRatesTable>): Promise<FxRateRow> {
  const { rows } = await sql<FxRateRow>`
    INSERT INTO organization_fx_rates (organization_id, currency, effective_date, rate, created_at)
    VALUES (${row.organization_id}, ${row.currency}, ${row.effective_date}::date, ${row.rate}::numeric, ${row.created_at})
    ON CONFLICT (organization_id, currency, effective_date) DO UPDATE SET rate = EXCLUDED.rate, created_at = EXCLUDED.created_at
    RETURNING currency, effective_date::text AS effective_date, rate::text AS rate, created_at`.execute(tx);
  return rows[0]!;
}

export async function listFxRates(tx: Tx, organizationId: string): Promise<FxRateRow[]> {
  const { rows } = await sql<FxRateRow>`
    SELECT currency, effective_date::text AS effective_date, rate::text AS rate, created_at FROM organization_fx_rates
    WHERE organization_id = ${organizationId} ORDER BY currency, effective_date DESC`.execute(tx);
  return rows;
}

/** The rate of each currency in force on `day` (the latest effective on or before it). */
export async function ratesInForce(tx: Tx, organizationId: string, day: string): Promise<FxRateRow[]> {
  const { rows } = await sql<FxRateRow>`
    SELECT DISTINCT ON (currency) currency, effective_date::text AS effective_date, rate::text AS rate, created_at
    FROM organization_fx_rates WHERE organization_id = ${organizationId} AND effective_date <= ${day}::date
    ORDER BY currency, effective_date DESC`.execute(tx);
  return rows;
}
