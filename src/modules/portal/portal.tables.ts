import type { Timestamp } from '../../platform/db/schema.js';

export interface PortalLoginTokensTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  token_hash: string;
  source: 'api' | 'email';
  /** For e-mailed links: a hash of the address that asked (the cap is per customer and requester). */
  requester: string | null;
  expires_at: Timestamp;
  used_at: Timestamp | null;
  created_at: Timestamp;
}

export interface PortalSessionsTable {
  tenant_id: string;
  id: string;
  customer_id: string;
  token_hash: string;
  expires_at: Timestamp;
  revoked_at: Timestamp | null;
  created_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    portal_login_tokens: PortalLoginTokensTable;
    portal_sessions: PortalSessionsTable;
  }
}
