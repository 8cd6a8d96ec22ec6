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
 * Outside a transaction (or on a client that is not a PipeliningClient) a deferred write is
 * simply executed and awaited.
 */

/** Appended (with the write's number) to the text of a deferred statement; the client strips it again. */
const MARK_PREFIX = '\n/* kosh:deferred ';
const MARK_SUFFIX = ' */';

type ErrorMapper = (error: unknown) => unknown;
const mappers = new Map<number, ErrorMapper>();
/** Ids of deferred writes that a PipeliningClient has taken into its pipeline. */
const pipelined = new Set<number>();
let sequence = 0;

/** A Kysely instance or transaction. */
type Executor = QueryExecutorProvider & { executeQuery<R>(query: CompiledQuery<R>): Promise<QueryResult<R>> };

/**
 * Sends `query` (a write, or a statement like a lock taken for its side effect, whose result is
 * not needed) without waiting for its answer. `mapError` turns its database error into the action's error (e.g. a unique violation
 * into 409) when the error surfaces.
 */
export async function deferWrite(tx: Executor, query: Compilable | RawBuilder<unknown>, mapError?: ErrorMapper): Promise<void> {
  // A query builder compiles by itself; a raw sql`…` needs the executor.
  const compiled = (query as RawBuilder<unknown>).compile(tx);
  sequence = (sequence + 1) % Number.MAX_SAFE_INTEGER;
  const id = sequence;
  if (mapError) mappers.set(id, mapError);
  try {
    await tx.executeQuery(CompiledQuery.raw(`${compiled.sql}${MARK_PREFIX}${id}${MARK_SUFFIX}`, [...compiled.parameters]));
  } catch (error) {
    // Executed at once (no transaction or no pipelining): the error is the caller's now.
    throw mapDeferredError(id, error);
  } finally {
    // A write sent in the pipeline keeps its mapper until its answer arrives (see below).
    if (!pipelined.has(id)) mappers.delete(id);
    pipelined.delete(id);
  }
}

/** The id of a deferred write and its statement without the mark; no id for any other text. */
function splitDeferred(text: string): { id: number | undefined; sql: string } {
  if (!text.endsWith(MARK_SUFFIX)) return { id: undefined, sql: text };
  const at = text.lastIndexOf(MARK_PREFIX);
  if (at < 0) return { id: undefined, sql: text };
  const id = Number(text.slice(at + MARK_PREFIX.length, text.length - MARK_SUFFIX.length));
  return Number.isSafeInteger(id) ? { id, sql: text.slice(0, at) } : { id: undefined, sql: text };
}

function mapDeferredError(id: number, error: unknown): unknown {
  const mapper = mappers.get(id);
  mappers.delete(id);
  return mapper ? mapper(error) : error;
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
  #inTransaction = false;
  /** Answers still owed to deferred writes: each settles to undefined or to its (mapped) error. */
  #pending: Promise<unknown>[] = [];
  #corked = false;

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
    const { id, sql } = splitDeferred(text);
    if (id !== undefined && this.#inTransaction) return this.#defer(id, sql, values as unknown[] | undefined) as never;
    const trimmed = sql.trim();
    if (BEGINS.test(trimmed)) {
      // Nothing waits for BEGIN's answer either: it goes out with the transaction's first statement.
      this.#inTransaction = true;
      return this.#defer(undefined, sql, values as unknown[] | undefined) as never;
    }
    const ending = ENDS.test(trimmed);
    const answer = this.#send(sql, values);
    this.#uncork();
    if (ending) this.#inTransaction = false;
    if (this.#pending.length === 0) return answer as never;
    const owed = this.#pending;
    this.#pending = [];
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

  #defer(id: number | undefined, text: string, values: unknown[] | undefined): Promise<ReturnType<typeof deferredResult>> {
    if (!this.#corked) {
      // Hold the writes in the socket buffer: they leave together, with the next awaited statement.
      this.#connection().stream.cork?.();
      this.#corked = true;
    }
    if (id !== undefined) pipelined.add(id);
    const answer = this.#send(text, values);
    this.#pending.push(
      answer.then(
        () => {
          if (id !== undefined) mappers.delete(id);
          return undefined;
        },
        (error: unknown) => (id === undefined ? error : mapDeferredError(id, error)),
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

  #send(text: string, values: unknown): Promise<pg.QueryResult> {
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
