import type { ColumnType, Kysely, Transaction } from 'kysely';

/**
 * The database's table types. Each module declares its own tables by augmenting this interface
 * (`declare module '../../platform/db/schema.js' { interface Tables { ... } }`) in its
 * `<domain>.tables.ts`, so the platform never imports a module.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface Tables {}

export type DB = Tables;

/** What repositories take: the root handle or an open transaction. */
export type Tx = Kysely<DB> | Transaction<DB>;

/**
 * An open transaction: what a writer that defers its write (`deferWrite`) or locks rows
 * (`forUpdate`) takes. The pool does not type-check here (`TxCtx` carries one).
 */
export type WriteTx = Transaction<DB>;

/** A row-lock flag (`forUpdate`): `true` type-checks only where `T` is an open transaction. */
export type LockFlag<T extends Tx> = [T] extends [WriteTx] ? boolean : false;

/** Whether `tx` is an open transaction (not the pool). */
export function isTransaction(tx: Tx): tx is WriteTx {
  return tx.isTransaction;
}

/** Timestamps come back from the driver as Date; inserts accept Date. */
export type Timestamp = Date;

/**
 * A jsonb column: read as T, written as a JSON string (`JSON.stringify(value)`). Writing strings
 * keeps node-postgres from turning arrays into PostgreSQL array literals.
 */
export type Json<T> = ColumnType<T, string, string>;
export type NullableJson<T> = ColumnType<T | null, string | null, string | null>;

/**
 * The modules other than a table's owner that use it directly, declared by the owner in its
 * `<domain>.tables.ts` (`export const <domain>TableAccess`). `read`: read models — reports and joins
 * that read the rows in their own queries, never changing them; `write`: bulk loaders that insert
 * rows in the owner's shape. Anything not declared goes through the owner's operations
 * (test/platform/table-ownership.test.ts reads every module's SQL and checks).
 */
export type TableAccess = { [T in keyof Tables]?: { read?: readonly string[]; write?: readonly string[] } };
