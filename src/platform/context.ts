import type { Tx } from './db/schema.js';

/**
 * What a service function works in: one open transaction, the tenant it acts for, and the
 * instant of the action (taken once from the injected clock, so every row the action writes
 * carries the same time).
 */
export type Ctx = {
  tx: Tx;
  tenantId: string;
  now: Date;
};
