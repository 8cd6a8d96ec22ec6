import type { Timestamp } from '../../platform/db/schema.js';

/** Global (not tenant-owned) tables: on Citus, reference tables. */
export interface OrganizationsTable {
  id: string;
  name: string;
  reporting_currency: string;
  join_code_hash: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface OrganizationFxRatesTable {
  organization_id: string;
  currency: string;
  effective_date: string;
  /** numeric(24,12), read as text so no float ever touches it. */
  rate: string;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    organizations: OrganizationsTable;
    organization_fx_rates: OrganizationFxRatesTable;
  }
}
