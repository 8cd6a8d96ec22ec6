import type { Json, Timestamp } from '../db/schema.js';

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  fingerprint: string;
  status_code: number;
  response: Json<unknown>;
  created_at: Timestamp;
  expires_at: Timestamp;
}

declare module '../db/schema.js' {
  interface Tables {
    idempotency_keys: IdempotencyKeysTable;
  }
}
