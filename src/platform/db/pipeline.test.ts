import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestDatabase } from '../../../test/support/database.js';
import type { Database } from './database.js';
import type { DB, LockFlag, WriteTx } from './schema.js';
import { deferWrite, executePrepared } from './pipeline.js';
import { readTogether } from './read-together.js';

// A scratch table outside the typed schema.
type Scratch = { pipeline_scratch: { id: number; note: string } };

let database: Database;
let db: Kysely<Scratch>;

beforeAll(async () => {
  database = await openTestDatabase();
  db = database.db as unknown as Kysely<Scratch>;
  await sql`CREATE TABLE pipeline_scratch (id int PRIMARY KEY, note text NOT NULL)`.execute(db);
});
afterAll(() => database.close());

const insert = (id: number, note = 'n') => db.insertInto('pipeline_scratch').values({ id, note });
const ids = async () => (await db.selectFrom('pipeline_scratch').select('id').orderBy('id').execute()).map((r) => r.id);
const duplicate = (error: unknown) => new Error(`mapped: ${(error as { code?: string }).code}`);

describe('deferred writes', () => {
  it('are seen by the next read of the transaction and commit with it', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    const seen = await db.transaction().execute(async (tx) => {
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 1, note: 'a' }));
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 2, note: 'b' }));
      await deferWrite(tx, tx.updateTable('pipeline_scratch').set({ note: 'c' }).where('id', '=', 2));
      return tx.selectFrom('pipeline_scratch').select(['id', 'note']).orderBy('id').execute();
    });
    expect(seen).toEqual([
      { id: 1, note: 'a' },
      { id: 2, note: 'c' },
    ]);
    expect(await ids()).toEqual([1, 2]);
  });

  it('do not wait for their answer: a failing write is reported by the next awaited statement, mapped, and nothing commits', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(7).execute();
    let returned = false;
    const attempt = db.transaction().execute(async (tx) => {
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 8, note: 'kept?' }));
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 7, note: 'duplicate' }), duplicate);
      returned = true; // the failing write has not been answered yet
      await tx.selectFrom('pipeline_scratch').selectAll().execute();
    });
    await expect(attempt).rejects.toThrow('mapped: 23505');
    expect(returned).toBe(true);
    expect(await ids()).toEqual([7]);
  });

  it("fail the COMMIT when the last of them fails, with that write's error, and leave nothing behind", async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(1).execute();
    const attempt = db.transaction().execute(async (tx) => {
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 2, note: 'x' }));
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 1, note: 'again' }), duplicate);
    });
    await expect(attempt).rejects.toThrow('mapped: 23505');
    expect(await ids()).toEqual([1]);
    // The connection is clean afterwards.
    await db.transaction().execute(async (tx) => deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 3, note: 'ok' })));
    expect(await ids()).toEqual([1, 3]);
  });

  it('report the first failure, not the "transaction is aborted" of the statements behind it', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(1).execute();
    const attempt = db.transaction().execute(async (tx) => {
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 1, note: 'dup' }));
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 2, note: 'after' }));
      await tx.selectFrom('pipeline_scratch').selectAll().execute();
    });
    await expect(attempt).rejects.toMatchObject({ code: '23505' });
  });

  it("give way to the action's own error when the action fails after them", async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(1).execute();
    const attempt = db.transaction().execute(async (tx) => {
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 1, note: 'dup' }), duplicate);
      throw new Error('the action gave up');
    });
    await expect(attempt).rejects.toThrow('the action gave up');
    expect(await ids()).toEqual([1]);
  });

  it('take only a transaction (the pool does not type-check); handed the pool anyway, run at once with the error thrown at the call', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    // @ts-expect-error the pool is not a transaction
    await deferWrite(db, insert(1));
    expect(await ids()).toEqual([1]);
    // @ts-expect-error the pool is not a transaction
    await expect(deferWrite(db, insert(1), duplicate)).rejects.toThrow('mapped: 23505');
  });

  it('belong to their transaction: concurrent transactions see only their own failures, mapped by their own mappers', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(100).execute();
    // Three transactions at once. A and B each defer a good write and then a duplicate of row 100,
    // each with its own mapper; C defers only good writes. On the server they overlap on three
    // connections, on the embedded database they take turns on its one connection.
    const run = (name: string, good: number[], failing: boolean) =>
      db.transaction().execute(async (tx) => {
        for (const id of good) await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id, note: name }));
        if (failing)
          await deferWrite(
            tx,
            tx.insertInto('pipeline_scratch').values({ id: 100, note: name }),
            (e) => new Error(`${name}: ${(e as { code?: string }).code}`),
          );
        // The transaction's own next read: it sees its own deferred rows and nobody else's.
        return (await tx.selectFrom('pipeline_scratch').select('id').where('note', '=', name).orderBy('id').execute()).map((r) => r.id);
      });
    const [a, b, c] = await Promise.allSettled([run('a', [1, 2], true), run('b', [3], true), run('c', [4, 5], false)]);
    expect(a).toMatchObject({ status: 'rejected', reason: { message: 'a: 23505' } });
    expect(b).toMatchObject({ status: 'rejected', reason: { message: 'b: 23505' } });
    expect(c).toEqual({ status: 'fulfilled', value: [4, 5] });
    // A's and B's writes rolled back with them; C's landed.
    expect(await ids()).toEqual([4, 5, 100]);
  });

  it("leave nothing behind for the connection's next transaction", async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(1).execute();
    // Many rounds on the pool: every failed transaction's mapped error is its own, and the
    // transaction after it on the same connection starts clean (its COMMIT is not failed by an
    // answer owed to the one before).
    for (let round = 0; round < 5; round++) {
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, (_, i) =>
          db.transaction().execute(async (tx) => {
            const id = 10 + round * 10 + i;
            await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id, note: 'r' }));
            if (i % 2 === 0) await deferWrite(tx, insert(1), () => new Error(`failed ${id}`));
          }),
        ),
      );
      results.forEach((result, i) => {
        const id = 10 + round * 10 + i;
        if (i % 2 === 0) expect(result).toMatchObject({ status: 'rejected', reason: { message: `failed ${id}` } });
        else expect(result.status).toBe('fulfilled');
      });
    }
    // Rows 11, 13, 15 of each round (the odd ones) landed; 1 was there before.
    const expected = [1, ...[0, 1, 2, 3, 4].flatMap((round) => [1, 3, 5].map((i) => 10 + round * 10 + i))];
    expect(await ids()).toEqual(expected);
  });

  it('keep many transactions on the pool apart', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        db.transaction().execute(async (tx) => {
          await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: i, note: 'first' }));
          const mine = await tx.selectFrom('pipeline_scratch').select('id').where('id', '=', i).execute();
          expect(mine).toEqual([{ id: i }]);
          await deferWrite(tx, tx.updateTable('pipeline_scratch').set({ note: 'second' }).where('id', '=', i));
        }),
      ),
    );
    const rows = await db.selectFrom('pipeline_scratch').select(['id', 'note']).orderBy('id').execute();
    expect(rows).toEqual(Array.from({ length: 20 }, (_, i) => ({ id: i, note: 'second' })));
  });
});

describe('transaction types', () => {
  it('let a row lock be asked for only in a transaction', () => {
    const inTransaction: LockFlag<WriteTx> = true;
    // @ts-expect-error the pool cannot hold a row lock past its statement
    const onPool: LockFlag<Kysely<DB>> = true;
    const eitherMayRead: LockFlag<Kysely<DB> | WriteTx> = false;
    expect([inTransaction, onPool, eitherMayRead]).toEqual([true, true, false]);
  });
});

describe('readTogether', () => {
  it('answers each query its rows, in order, as separate queries would', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await db
      .insertInto('pipeline_scratch')
      .values([
        { id: 1, note: 'a' },
        { id: 2, note: 'b' },
        { id: 3, note: 'c' },
      ])
      .execute();
    const page = db.selectFrom('pipeline_scratch').select(['id', 'note']).orderBy('id', 'desc').limit(2);
    const count = db.selectFrom('pipeline_scratch').select((eb) => eb.fn.countAll<number>().as('n'));
    const [rows, [total]] = await readTogether(db, page, count);
    expect(rows).toEqual(await page.execute());
    expect(rows).toEqual([
      { id: 3, note: 'c' },
      { id: 2, note: 'b' },
    ]);
    expect(Number(total?.n)).toBe(3);
  });

  it('sends the queries on one connection of the pool', async () => {
    const backend = () => db.selectFrom(sql`(SELECT pg_backend_pid() AS pid)`.as('b')).select(sql<number>`pid`.as('pid'));
    const [[first], [second], [third]] = await readTogether(db, backend(), backend(), backend());
    expect(first?.pid).toBeDefined();
    expect(new Set([first?.pid, second?.pid, third?.pid]).size).toBe(1);
  });

  it('throws the failure of one query, and leaves the pool usable', async () => {
    const bad = db.selectFrom('pipeline_scratch').select(sql<number>`1 / 0`.as('x'));
    await expect(readTogether(db, db.selectFrom('pipeline_scratch').select('id'), bad)).rejects.toMatchObject({ code: '22012' });
    // Every connection of the pool still answers.
    await Promise.all(Array.from({ length: 12 }, () => readTogether(db, db.selectFrom('pipeline_scratch').select('id'))));
  });

  it('runs inside a transaction on its connection, seeing its uncommitted rows', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    const seen = await db.transaction().execute(async (tx) => {
      await deferWrite(tx, tx.insertInto('pipeline_scratch').values({ id: 7, note: 'x' }));
      const [rows, [count]] = await readTogether(
        tx,
        tx.selectFrom('pipeline_scratch').select('id'),
        tx.selectFrom('pipeline_scratch').select((eb) => eb.fn.countAll<number>().as('n')),
      );
      return { rows, n: Number(count?.n) };
    });
    expect(seen).toEqual({ rows: [{ id: 7 }], n: 1 });
  });
});

describe('executePrepared', () => {
  const question = (id: number) => sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM pipeline_scratch WHERE id = ${id}) AS found`;

  it('answers as the statement run unprepared does, on the pool and in a transaction', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(3).execute();
    expect((await executePrepared(db, question(3))).rows).toEqual([{ found: true }]);
    expect((await executePrepared(db, question(4))).rows).toEqual((await question(4).execute(db)).rows);
    const inTx = await db.transaction().execute(async (tx) => {
      await tx.insertInto('pipeline_scratch').values({ id: 4, note: 'x' }).execute();
      return (await executePrepared(tx, question(4))).rows;
    });
    expect(inTx).toEqual([{ found: true }]);
  });

  it('prepares the text once on a connection and runs it again under its name, not planned anew each time', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    // One connection, outside a transaction (a transaction's statements stay unnamed).
    const counts = await db.connection().execute(async (conn) => {
      // A text of its own: the connection may have run the other test's already.
      for (let id = 0; id < 8; id += 1) await executePrepared(conn, sql`SELECT count(*) AS n FROM pipeline_scratch WHERE id = ${id}`);
      const { rows } = await sql<{ n: number; runs: number; generic: number }>`
        SELECT count(*)::int AS n, coalesce(sum(generic_plans + custom_plans), 0)::int AS runs, coalesce(sum(generic_plans), 0)::int AS generic
        FROM pg_prepared_statements WHERE statement LIKE 'SELECT count(*) AS n FROM pipeline_scratch WHERE id =%'`.execute(conn);
      return rows[0];
    });
    // One statement on the connection, run eight times; after five custom plans PostgreSQL keeps
    // the generic one for a statement this simple.
    expect(counts).toEqual({ n: 1, runs: 8, generic: 3 });
  });

  it('runs unnamed once the server lost the statement, as behind a transaction-mode pooler', async () => {
    await sql`TRUNCATE pipeline_scratch`.execute(db);
    await insert(5).execute();
    const answers = await db.connection().execute(async (conn) => {
      const ask = () => executePrepared(conn, sql<{ found: boolean }>`SELECT EXISTS (SELECT 1 FROM pipeline_scratch WHERE id = ${5}) AS lost`);
      const first = (await ask()).rows;
      // Another server connection, as far as the prepared statement is concerned.
      await sql`DEALLOCATE ALL`.execute(conn);
      const second = (await ask()).rows;
      const third = (await ask()).rows;
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement LIKE '%AS lost'`.execute(conn);
      return { first, second, third, prepared: rows[0]?.n };
    });
    expect(answers).toEqual({ first: [{ lost: true }], second: [{ lost: true }], third: [{ lost: true }], prepared: 0 });
  });
});
