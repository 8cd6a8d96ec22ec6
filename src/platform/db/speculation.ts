import type { AppScope } from '../app-scope.js';
import type { Tx, WriteTx } from './schema.js';

/**
 * Speculative reads. An action's transaction may skip a read whose answer rarely changes (a
 * tenant's webhook endpoints: nearly always "none") by assuming the last answer and sending, as a
 * deferred write, a check that raises if the assumption no longer holds. The check travels with
 * the transaction's next statement, so the assumption costs no round trip; when it fails, the
 * transaction rolls back and `runAction` runs the action once more without speculating. Only
 * `runAction`'s transactions speculate (jobs and flows run without). What an app last saw (the
 * hint a speculation assumes) is kept on that app (`AppScope`), which the transaction carries.
 */
export class SpeculationFailed extends Error {
  constructor(what: string) {
    super(`speculation failed: ${what}`);
    this.name = 'SpeculationFailed';
  }
}

/**
 * The SQLSTATE `kosh_speculation_check(violated, what)` (migration 0670) raises when an assumption no
 * longer holds: a deferred `SELECT kosh_speculation_check(EXISTS (…), '…')` fails the transaction
 * on the server, before its COMMIT can commit anything.
 */
export const SPECULATION_FAILED_SQLSTATE = 'KS001';

/** Per transaction (it dies with it): the app whose hints an action's transaction may assume. */
const speculative = new WeakMap<object, AppScope>();

/** Marks an action's transaction as one that may speculate on what `scope`'s app last saw. */
export function allowSpeculation(tx: WriteTx, scope: AppScope): void {
  speculative.set(tx, scope);
}

export function maySpeculate(tx: Tx): tx is WriteTx {
  return tx.isTransaction && speculative.has(tx);
}

/** The app whose hints `tx` may assume and keep, when it is an action's transaction that may speculate. */
export function speculationScope(tx: Tx): AppScope | undefined {
  return tx.isTransaction ? speculative.get(tx) : undefined;
}

export function isSpeculationFailed(error: unknown): error is SpeculationFailed {
  return error instanceof SpeculationFailed;
}
