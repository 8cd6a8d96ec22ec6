import type { Transaction } from 'kysely';
import type { Actor } from './auth/actor.js';
import type { DB, Tx } from './db/schema.js';

/**
 * What a read works in: the pool (each statement on its own) or a transaction, the tenant it
 * reads for, and the instant of the request. Functions that only read take a `ReadCtx`, so a
 * route can call them on the pool and a writing action inside its transaction.
 */
export type ReadCtx = {
  /** The pool or a transaction: a `ReadCtx` promises no atomicity. */
  tx: Tx;
  tenantId: string;
  now: Date;
  /** Who asked for the action (a `/v1` write's API key or operator); absent for the worker's own work. */
  actor?: Actor;
};

/**
 * What a service function that writes works in: one open transaction, the tenant it acts for, and
 * the instant of the action (taken once from the injected clock, so every row the action writes
 * carries the same time). Row locks (`forUpdate`), deferred writes and emitted events need one: a
 * `ReadCtx` built on the pool does not type-check where a `TxCtx` is asked for.
 */
export type TxCtx = ReadCtx & { tx: Transaction<DB> };

/** The context of a writing service function (a `TxCtx`). */
export type Ctx = TxCtx;
