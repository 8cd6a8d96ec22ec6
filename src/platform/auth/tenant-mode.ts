import { sql, type RawBuilder } from 'kysely';

export type Mode = 'test' | 'live';

/**
 * A cross-tenant sweep's filter to one mode's tenants: `<column> IN (SELECT id FROM tenants WHERE
 * mode = …)`. A test and a live deployment may share a database; each one's recurring sweeps
 * (billing run, expiries, dunning, settlement, recognition, snapshots, the secondary-ledger feed)
 * touch only its own mode's tenants. `null` (tools and benches that run a sweep by hand) is every
 * tenant.
 */
export function inMode(mode: Mode | null, column = 'tenant_id'): RawBuilder<boolean> {
  if (mode === null) return sql<boolean>`TRUE`;
  return sql<boolean>`${sql.ref(column)} IN (SELECT tenants.id FROM tenants WHERE tenants.mode = ${mode})`;
}
