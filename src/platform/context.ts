import type { Actor } from './auth/actor.js';
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
  /** Who asked for the action (a `/v1` write's API key or operator); absent for the worker's own work. */
  actor?: Actor;
};
