import { sql, type Kysely } from 'kysely';
import type { DB } from '../db/schema.js';

/**
 * Rate-limit budgets held in PostgreSQL, shared by every API process (DESIGN §22 "Processes",
 * decision 0270): a @fastify/rate-limit store counting hits per budget, key and fixed window
 * (aligned to the window's length) in `rate_limit_counters`.
 *
 * - An **exact** budget (the abuse budgets: failed sign-ins, admin tokens, gift codes, portal
 *   sign-in e-mails) counts each hit with one upsert and reads the shared total back.
 * - A **batched** budget (the per-key and per-address `/v1` budgets, counted on every request)
 *   counts in memory and flushes every key's increments in one statement at most every `flushMs`,
 *   reading the shared totals back. A key is refused once the last-known shared total plus what
 *   this process counted since exceeds the budget: N processes over-admit at most what the others
 *   admit in one flush interval (and its round trip).
 */

export interface RateLimitCountersTable {
  budget: string;
  key: string;
  window_start: Date;
  hits: number;
}

declare module '../db/schema.js' {
  interface Tables {
    rate_limit_counters: RateLimitCountersTable;
  }
}

type Counted = { current: number; ttl: number };
type Callback = (error: Error | null, result?: Counted) => void;

/** What a limiter passes (through @fastify/rate-limit's options) to name its budget. */
export type BudgetOptions = { budget?: string; batched?: boolean };

/** One key's count in this process: the last total read back, plus what is not in it yet. */
type Tally = { windowStart: number; shared: number; inflight: number; pending: number; readAt: number };

/** Rows whose window ended this long ago are purged (longer than any budget's window). */
const PURGE_AFTER_MS = 60 * 60_000;
const PURGE_EVERY_MS = 5 * 60_000;

/** The store of all budgets of one app: the tallies of batched budgets and their one flush timer. */
export class SharedCounters {
  private readonly tallies = new Map<string, { budget: string; key: string; windowMs: number; tally: Tally }>();
  private readonly names = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private immediate: Promise<void> | undefined;
  private lastPurge = 0;

  constructor(
    private readonly db: Kysely<DB>,
    private readonly flushMs = 250,
  ) {}

  /** A budget's name, made unique per app in the order limiters are made (the same in every process). */
  name(what: string): string {
    const n = (this.names.get(what) ?? 0) + 1;
    this.names.set(what, n);
    return n === 1 ? what : `${what} #${n}`;
  }

  /** Counts one hit now, in the database; answers the shared total. */
  async countExact(budget: string, key: string, windowMs: number): Promise<Counted> {
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const row = await this.db
      .insertInto('rate_limit_counters')
      .values({ budget, key, window_start: new Date(windowStart), hits: 1 })
      .onConflict((oc) => oc.columns(['budget', 'key', 'window_start']).doUpdateSet({ hits: sql<number>`rate_limit_counters.hits + 1` }))
      .returning('hits')
      .executeTakeFirstOrThrow();
    this.purgeSoon(now);
    return { current: row.hits, ttl: windowStart + windowMs - now };
  }

  /** The shared total, without counting. */
  async readExact(budget: string, key: string, windowMs: number): Promise<Counted> {
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const row = await this.db
      .selectFrom('rate_limit_counters')
      .select('hits')
      .where('budget', '=', budget)
      .where('key', '=', key)
      .where('window_start', '=', new Date(windowStart))
      .executeTakeFirst();
    return { current: row?.hits ?? 0, ttl: windowStart + windowMs - now };
  }

  /**
   * Counts one hit in memory (flushed within `flushMs`); answers the last-known shared total plus
   * the hits not in it yet. A key whose total was not read back lately and that has no hits on
   * their way to the database (new to this process, or idle) waits for one flush first, so a
   * process never answers a new or idle key from an old total; a hot key never waits.
   */
  async countBatched(budget: string, key: string, windowMs: number, increment: boolean): Promise<Counted> {
    const now = Date.now();
    const windowStart = now - (now % windowMs);
    const id = `${budget}\u0000${key}`;
    let entry = this.tallies.get(id);
    if (!entry || entry.tally.windowStart !== windowStart) {
      if (!increment) return { current: 0, ttl: windowStart + windowMs - now };
      entry = { budget, key, windowMs, tally: { windowStart, shared: 0, inflight: 0, pending: 0, readAt: 0 } };
      this.tallies.set(id, entry);
    }
    const { tally } = entry;
    if (increment) {
      // A key with hits not yet written is hot: the flush under way or due carries them and reads
      // its total back, however late it runs. Only a key new to this process, or idle, waits.
      const idle = tally.pending === 0 && tally.inflight === 0;
      tally.pending += 1;
      if (idle && now - tally.readAt > 2 * this.flushMs) {
        await this.flushNow();
        // Joined a flush already writing without this key: one more.
        if (tally.pending > 0 && Date.now() - tally.readAt > 2 * this.flushMs) await this.flushNow();
      } else {
        this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
      }
    }
    return { current: tally.shared + tally.inflight + tally.pending, ttl: windowStart + windowMs - now };
  }

  /** Flushes now, or joins the flush already under way. */
  private flushNow(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.immediate ??= this.flush().finally(() => {
      this.immediate = undefined;
    });
    return this.immediate;
  }

  /** Writes every pending increment in one statement and reads the shared totals back. */
  async flush(): Promise<void> {
    this.timer = undefined;
    await this.flushing;
    const now = Date.now();
    const batch = [...this.tallies.values()].filter((e) => e.tally.pending > 0);
    for (const [id, e] of this.tallies) {
      if (e.tally.pending === 0 && e.tally.inflight === 0 && e.tally.windowStart + e.windowMs <= now) this.tallies.delete(id);
    }
    if (batch.length === 0) return;
    for (const e of batch) {
      e.tally.inflight = e.tally.pending;
      e.tally.pending = 0;
    }
    this.flushing = this.write(batch);
    await this.flushing;
    this.flushing = undefined;
    this.purgeSoon(now);
  }

  private async write(batch: { budget: string; key: string; tally: Tally }[]): Promise<void> {
    try {
      const rows = await this.db
        .insertInto('rate_limit_counters')
        .values(batch.map((e) => ({ budget: e.budget, key: e.key, window_start: new Date(e.tally.windowStart), hits: e.tally.inflight })))
        .onConflict((oc) => oc.columns(['budget', 'key', 'window_start']).doUpdateSet({ hits: sql<number>`rate_limit_counters.hits + excluded.hits` }))
        .returning(['budget', 'key', 'window_start', 'hits'])
        .execute();
      const totals = new Map(rows.map((r) => [`${r.budget}\u0000${r.key}\u0000${r.window_start.getTime()}`, r.hits]));
      for (const e of batch) {
        const total = totals.get(`${e.budget}\u0000${e.key}\u0000${e.tally.windowStart}`);
        if (total !== undefined) e.tally.shared = total;
        e.tally.inflight = 0;
        e.tally.readAt = Date.now();
      }
    } catch {
      // The database is unreachable: keep counting in this process and write the hits next time.
      for (const e of batch) {
        e.tally.pending += e.tally.inflight;
        e.tally.inflight = 0;
      }
      this.timer ??= setTimeout(() => void this.flush(), this.flushMs).unref();
    }
  }

  /** Deletes windows that ended long ago, at most every few minutes per process. */
  private purgeSoon(now: number): void {
    if (now - this.lastPurge < PURGE_EVERY_MS) return;
    this.lastPurge = now;
    void this.db
      .deleteFrom('rate_limit_counters')
      .where('window_start', '<', new Date(now - PURGE_AFTER_MS))
      .execute()
      .catch(() => {});
  }

  /** Stops the timer and writes what is pending (the app is closing). */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    await this.flush();
  }

  /** The @fastify/rate-limit store of one budget. */
  store(options: BudgetOptions): RateLimitStore {
    const budget = options.budget ?? '';
    const batched = options.batched === true;
    const answer = (promise: Promise<Counted> | Counted, cb: Callback) => {
      Promise.resolve(promise).then(
        (counted) => cb(null, counted),
        (error: Error) => cb(error),
      );
    };
    return {
      incr: (key, cb, timeWindow) => answer(batched ? this.countBatched(budget, key, timeWindow, true) : this.countExact(budget, key, timeWindow), cb),
      read: (key, cb, timeWindow) => answer(batched ? this.countBatched(budget, key, timeWindow, false) : this.readExact(budget, key, timeWindow), cb),
      child: (routeOptions) => this.store(routeOptions as BudgetOptions),
    };
  }
}

export type RateLimitStore = {
  incr(key: string, cb: Callback, timeWindow: number, max: number): void;
  read(key: string, cb: Callback, timeWindow: number, max: number): void;
  child(routeOptions: unknown): RateLimitStore;
};
