import type { Timestamp } from '../db/schema.js';

export interface TenantsTable {
  id: string;
  name: string;
  email: string;
  data_region: string;
  base_currency: string;
  country_code: string;
  organization_id: string | null;
  mode: 'test' | 'live';
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string;
  mode: 'test' | 'live';
  prefix: string;
  key_hash: string;
  created_at: Timestamp;
  last_used_at: Timestamp | null;
  revoked_at: Timestamp | null;
}

declare module '../db/schema.js' {
  interface Tables {
    tenants: TenantsTable;
    api_keys: ApiKeysTable;
  }
}
