import type { Generated } from 'kysely';
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
  /** What the key may do: the role table of operators applies to it too (migration 0220). */
  role: Generated<Role>;
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

export type Role = 'owner' | 'admin' | 'finance' | 'support' | 'viewer';

/** An operator of a tenant (DESIGN §17); its invitations, resets and recovery codes live in modules/operators. */
export interface UsersTable {
  tenant_id: string;
  id: string;
  email: string;
  name: string;
  role: Role;
  password_hash: string;
  totp_secret: string | null;
  totp_pending_secret: string | null;
  totp_enabled_at: Timestamp | null;
  /** bigint: read back as a string. */
  totp_last_step: number | string | null;
  last_sign_in_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface UserSessionsTable {
  tenant_id: string;
  id: string;
  user_id: string;
  token_hash: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  ip: string | null;
  user_agent: string | null;
}

declare module '../db/schema.js' {
  interface Tables {
    users: UsersTable;
    user_sessions: UserSessionsTable;
  }
}
