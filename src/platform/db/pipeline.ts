import { createHash } from 'node:crypto';
import pg from 'pg';
import { CompiledQuery, type Compilable, type QueryExecutorProvider, type QueryResult, type RawBuilder } from 'kysely';

/**
 * Deferred writes: fewer round trips per business transaction.
 *
 * Every statement a transaction awaits is a round trip to the database, and on small machines the
 * round trip (two process wake-ups and two system calls) costs more than the statement. Most of a
 * business action's writes — the event row, the idempotency record, a plan's prices, an invoice's
 * ledger lines — are never read back by the action: nothing needs to wait for them. `deferWrite`
 * sends such a write without waiting for its answer. The connection runs in pipeline mode (one
 * `Sync` per statement, answers matched in order), so the write travels in the same network packet
 * as the next statement that does need an answer — at the latest the COMMIT — and its answer comes
 * back with that statement's.
 *
 * What stays the same: statements run in the order they were issued, each with its own snapshot,
 * so a read after a deferred write sees it. A failed deferred write aborts the transaction as any
 * failed statement does; its error is thrown by the next awaited statement of the transaction
 * (typically COMMIT, which then commits nothing), mapped by the write's own `mapError` first.
 * What changes: the write's result (row count, RETURNING rows) is not available, and its error
 * surfaces later, so it cannot be caught around the call. Use it only for such writes.
 * The deferral state belongs to the transaction: the answers still owed and their error mappers
 * live on the connection that holds it, from its BEGIN to its COMMIT or ROLLBACK, and each
 * write's mapper travels with the write itself (`DeferredWrite`, stripped before anything goes to
 * the server). Nothing is kept per process, so two transactions — of one app or of two apps in
 * one process — never see each other's deferred writes or errors.
 * Only a transaction type-checks as `deferWrite`'s first argument. (Handed the pool anyway, the
 * client simply executes the write and the error is thrown at the call.)
 */

type ErrorMapper = (error: unknown) => unknown;

/**
 * An open Kysely transaction (of any schema). The root `Kysely` instance — the pool — does not
 * fit: its `isTransaction` is a `boolean`, a transaction's is `true`.
 */
export type OpenTransaction = QueryExecutorProvider & {
  readonly isTransaction: true;
  executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>>;
};

/**
 * Appended to a deferred statement's parameters: marks it deferred and carries its error mapper
 * to the connection. The PipeliningClient takes it off again; it is never sent.
 */
class DeferredWrite {
  constructor(readonly mapError: ErrorMapper | undefined) {}
}

/**
 * Sends `query` (a write, or a statement like a lock taken for its side effect, whose result is
 * not needed) without waiting for its answer. `mapError` turns its database error into the action's error (e.g. a unique violation
 * into 409) when the error surfaces.
 */
export async function deferWrite(tx: OpenTransaction, query: Compilable | RawBuilder<unknown>, mapError?: ErrorMapper): Promise<void> {
  // A query builder compiles by itself; a raw sql`…` needs the executor.
  const compiled = (query as RawBuilder<unknown>).compile(tx);
  try {
    await tx.executeQuery(CompiledQuery.raw(compiled.sql, [...compiled.parameters, new DeferredWrite(mapError)]));
  } catch (error) {
    // Executed at once (no transaction): the error is the caller's now.
    throw mapError ? mapError(error) : error;
  }
}

/**
 * Appended to a prepared statement's parameters (`executePrepared`): the name the connection
 * prepares it under. The PipeliningClient takes it off again; it is never sent as a parameter.
 */
class PreparedStatement {
  constructor(readonly name: string) {}
}

/**
 * Runs `query` as a named prepared statement: each connection parses it once, and after a few
 * executions PostgreSQL may keep a generic plan for it instead of planning it at every execution
 * (an unnamed statement is planned each time it runs). For a statement with a fixed text that runs
 * very often and costs more to plan than to execute — a large question of EXISTS clauses asked at
 * every step of a loop. The name is derived from the text, so one text is one statement on every
 * connection. Not for a statement whose text varies with its input (an IN list's length): each
 * text would stay prepared on the connection. Never deferred; inside a transaction, and on a
 * connection behind a transaction-mode pooler, it runs unnamed (see PipeliningClient).
 */
export async function executePrepared<R>(
  db: QueryExecutorProvider & { executeQuery<O>(query: CompiledQuery<O>): Promise<QueryResult<O>> },
  query: RawBuilder<R>,
): Promise<QueryResult<R>> {
  const compiled = query.compile(db);
  const name = `kosh_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 32)}`;
  return db.executeQuery(CompiledQuery.raw(compiled.sql, [...compiled.parameters, new PreparedStatement(name)])) as Promise<QueryResult<R>>;
}

/** The prepared statement's mark, when `values` ends with one. */
function preparedMark(values: unknown): PreparedStatement | undefined {
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const last: unknown = values[values.length - 1];
  return last instanceof PreparedStatement ? last : undefined;
}

/** The deferred write's mark, when `values` ends with one. */
function deferredMark(values: unknown): DeferredWrite | undefined {
  if (!Array.isArray(values) || values.length === 0) return undefined;
  const last: unknown = values[values.length - 1];
  return last instanceof DeferredWrite ? last : undefined;
}

/** What a deferred write answers at once (fresh each time); Kysely reads rows and the row count. */
const deferredResult = () => ({ command: 'DEFERRED', rowCount: 0, rows: [], fields: [], oid: 0 });

const BEGINS = /^(begin|start transaction)\b/i;
const ENDS = /^(commit|rollback|end|abort)\s*;?$/i;

/**
 * The pool's client: node-postgres in pipeline mode, holding back the answers of deferred writes
 * inside a transaction. Statements that are not deferred behave exactly as on pg.Client, except
 * that one is preceded on the wire by the deferred writes issued before it (and fails with the
 * first of their errors, if one failed).
 */
export class PipeliningClient extends pg.Client {
  /**
   * The deferral state of the transaction this connection holds, from its BEGIN to its COMMIT or
   * ROLLBACK (none outside a transaction): the answers still owed to its deferred writes, each
   * settling to undefined or to the write's (mapped) error.
   */
  #transaction: { owed: Promise<unknown>[] } | undefined;
  #corked = false;
  /** Set once a named statement was missing or already there on the server (see #sendPrepared). */
  #unnamedOnly = false;

  constructor(config?: pg.ClientConfig) {
    super({ ...config, pipeline: true } as pg.ClientConfig);
    // A connection that dies while checked out (the server restarts, fails over or terminates the
    // backend) emits 'error' here, and the pool listens only while the client is idle: without
    // this listener the event would kill the process. The statements in flight have already
    // failed with the same error (their requests answer 503), the client is no longer queryable,
    // and the pool discards it on release instead of handing it out again.
    this.on('error', () => {});
  }

  // pg.Client.query has a dozen overloads; only the (text, values) promise form is ever deferred.
  override query(...args: unknown[]): never {
    const [text, values, callback] = args;
    if (typeof text !== 'string' || typeof values === 'function' || callback !== undefined) {
      this.#uncork();
      return (pg.Client.prototype.query as (...a: unknown[]) => never).apply(this, args);
    }
    const prepared = preparedMark(values);
    const mark = deferredMark(values);
    const params = mark || prepared ? (values as unknown[]).slice(0, -1) : (values as unknown[] | undefined);
    if (mark && this.#transaction) return this.#defer(this.#transaction, text, params, mark.mapError) as never;
    const trimmed = text.trim();
    if (BEGINS.test(trimmed)) {
      // Nothing waits for BEGIN's answer either: it goes out with the transaction's first statement.
      this.#transaction = { owed: [] };
      return this.#defer(this.#transaction, text, params, undefined) as never;
    }
    // A transaction's statements stay unnamed: a failed one would abort it (see #sendPrepared).
    const name = prepared && !this.#transaction && !this.#unnamedOnly ? prepared.name : undefined;
    const answer = name ? this.#sendPrepared(text, params, name) : this.#send(text, params);
    this.#uncork();
    const transaction = this.#transaction;
    if (ENDS.test(trimmed)) this.#transaction = undefined;
    if (!transaction || transaction.owed.length === 0) return answer as never;
    const owed = transaction.owed;
    transaction.owed = [];
    return this.#after(owed, answer, /^rollback|^abort/i.test(trimmed)) as never;
  }

  /**
   * Sends independent statements back to back in one write and answers each one's result (see
   * read-together.ts). For a client outside a transaction, with nothing deferred.
   */
  queryTogether(statements: readonly { sql: string; parameters: readonly unknown[] }[]): Promise<pg.QueryResult>[] {
    const stream = this.#connection().stream;
    stream.cork?.();
    try {
      return statements.map((statement) => this.#send(statement.sql, [...statement.parameters]));
    } finally {
      stream.uncork?.();
    }
  }

  #defer(
    transaction: { owed: Promise<unknown>[] },
    text: string,
    values: unknown[] | undefined,
    mapError: ErrorMapper | undefined,
  ): Promise<ReturnType<typeof deferredResult>> {
    if (!this.#corked) {
      // Hold the writes in the socket buffer: they leave together, with the next awaited statement.
      this.#connection().stream.cork?.();
      this.#corked = true;
    }
    const answer = this.#send(text, values);
    transaction.owed.push(
      answer.then(
        () => undefined,
        (error: unknown) => (mapError ? mapError(error) : error),
      ),
    );
    return Promise.resolve(deferredResult());
  }

  async #after(owed: Promise<unknown>[], answer: Promise<pg.QueryResult>, rollingBack: boolean): Promise<pg.QueryResult> {
    const failures = (await Promise.all(owed)).filter((e) => e !== undefined);
    if (failures.length === 0 || rollingBack) return answer;
    // The first failure aborted the transaction; what followed it only says "transaction is aborted"
    // (and COMMIT answers ROLLBACK without an error). The first failure is the truth.
    await answer.catch(() => undefined);
    throw failures[0];
  }

  /**
   * A named statement, outside a transaction. Behind a transaction-mode pooler (PgBouncer without
   * `max_prepared_statements`) consecutive statements of this connection reach different server
   * connections: the statement is then missing (26000) where this connection prepared it, or
   * already there (42P05) from another client. It runs unnamed instead, and so does every
   * statement of this connection from then on.
   */
  async #sendPrepared(text: string, values: unknown, name: string): Promise<pg.QueryResult> {
    try {
      return await this.#send(text, values, name);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (code !== '26000' && code !== '42P05') throw error;
      this.#unnamedOnly = true;
      return this.#send(text, values);
    }
  }

  #send(text: string, values: unknown, name?: string): Promise<pg.QueryResult> {
    if (name) return (pg.Client.prototype.query as (q: pg.QueryConfig) => Promise<pg.QueryResult>).call(this, { name, text, values: values as unknown[] });
    return (pg.Client.prototype.query as (t: string, v?: unknown) => Promise<pg.QueryResult>).call(this, text, values);
  }

  #connection(): { stream: { cork?: () => void; uncork?: () => void } } {
    return (this as unknown as { connection: { stream: { cork?: () => void; uncork?: () => void } } }).connection;
  }

  #uncork(): void {
    if (!this.#corked) return;
    this.#corked = false;
    this.#connection().stream.uncork?.();
  }
}
