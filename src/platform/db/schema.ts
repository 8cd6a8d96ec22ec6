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

/** Timestamps come back from the driver as Date; inserts accept Date. */
export type Timestamp = Date;

/**
 * A jsonb column: read as T, written as a JSON string (`JSON.stringify(value)`). Writing strings
 * keeps node-postgres from turning arrays into PostgreSQL array literals.
 */
export type Json<T> = ColumnType<T, string, string>;
export type NullableJson<T> = ColumnType<T | null, string | null, string | null>;
