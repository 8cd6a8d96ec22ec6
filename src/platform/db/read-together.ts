import type pg from 'pg';
import type { Compilable, Kysely } from 'kysely';
import { PipeliningClient } from './pipeline.js';

/**
 * Reads that do not depend on each other, in one round trip.
 *
 * A list endpoint reads its page and its total count. Sent as two Kysely queries they take two
 * pooled connections and two round trips (two writes, two backend wake-ups — on small machines the
 * round trip costs more than these statements). `readTogether` sends them on one connection of
 * the pool, back to back in one write (the pool's clients run node-postgres in pipeline mode,
 * see pipeline.ts), and answers their rows in order. Inside a transaction, whose connection Kysely
 * hands out one query at a time, they run one after the other as before. Rows come as the driver
 * parses them, which is what Kysely answers while it has no result-transforming plugin.
 */

const pools = new WeakMap<object, pg.Pool>();

/** Called by openDatabase: the pool behind a Kysely instance. */
export function registerPool(db: object, pool: pg.Pool): void {
  pools.set(db, pool);
}

type Rows<Q> = { [K in keyof Q]: Q[K] extends Compilable<infer O> ? O[] : never };
type Executor = Pick<Kysely<unknown>, 'isTransaction' | 'executeQuery'>;

export async function readTogether<Q extends readonly Compilable<unknown>[]>(tx: Executor, ...queries: Q): Promise<Rows<Q>> {
  const compiled = queries.map((q) => q.compile());
  const pool = tx.isTransaction ? undefined : pools.get(tx);
  if (!pool) {
    const rows: unknown[][] = [];
    for (const query of compiled) rows.push((await tx.executeQuery(query)).rows);
    return rows as Rows<Q>;
  }
  const client = await pool.connect();
  const answers = client instanceof PipeliningClient ? client.queryTogether(compiled) : compiled.map((query) => client.query(query.sql, [...query.parameters]));
  // Every answer settles before the client goes back to the pool; the first failure is thrown.
  const settled = await Promise.allSettled(answers);
  client.release();
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value.rows) as Rows<Q>;
}
