import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { NotificationSource } from './database.js';

/**
 * The channel every process listens on. Triggers send `<topic>:<subject>` on it in the changing
 * transaction (migration 0420): PostgreSQL delivers it only if, and once, that transaction commits.
 */
export const CHANGES_CHANNEL = 'kosh_changes';
/** How often a server feed proves its session current (a notification to itself). */
export const BEAT_MS = 200;
/**
 * A cache may answer only while the feed's last proof was sent less than this long ago: then every
 * change committed more than FRESH_MS ago has reached it (the contract is one second).
 */
export const FRESH_MS = 800;
const RECONNECT_MS = 1_000;

/**
 * Tells this process's in-memory caches (API keys, entitlements) what other processes changed,
 * through PostgreSQL's LISTEN/NOTIFY (docs/decisions/0420).
 *
 * On a server the feed holds one session of its own and, every BEAT_MS, notifies itself on a
 * channel only it listens on. Notifications reach a listener in commit order, so when its own beat
 * comes back, every change committed before the beat was sent has been handed to the handlers:
 * `isFresh()` is true while that moment is less than FRESH_MS old. A dropped session, a slow
 * server or a pooler that does not keep LISTEN (PgBouncer's transaction mode) stops the beats, and
 * the caches then read the database on every request until the feed is back — correct, slower.
 * Every (re)connection bumps `epoch`: whatever was cached before may have missed a notification.
 *
 * The embedded database is one process; it delivers a notification while the COMMIT that sent it
 * is answered, so its feed is always fresh once listening.
 */
export class ChangeFeed {
  private readonly handlers = new Map<string, ((subject: string) => void)[]>();
  private readonly resets: (() => void)[] = [];
  private readonly beatChannel = `kosh_beat_${randomBytes(8).toString('hex')}`;
  private readonly sent = new Map<number, number>();
  private freshAsOf = -Infinity;
  private lastSent = -Infinity;
  private waiters: (() => void)[] = [];
  private seq = 0;
  private client: pg.Client | undefined;
  private beatTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private stopEmbedded: (() => Promise<void>) | undefined;
  private closed = false;
  private embeddedListening = false;
  private warned = false;
  /** Bumped whenever notifications may have been missed: entries cached under an older epoch are void. */
  epoch = 0;

  constructor(
    private readonly source: NotificationSource,
    private readonly logger?: Pick<Logger, 'warn' | 'info'>,
  ) {}

  /** Calls `handler(subject)` for every committed `<topic>:<subject>` notification. */
  on(topic: string, handler: (subject: string) => void): void {
    this.handlers.set(topic, [...(this.handlers.get(topic) ?? []), handler]);
  }

  /** Calls `handler` whenever the feed (re)connects: notifications may have been missed meanwhile. */
  onReset(handler: () => void): void {
    this.resets.push(handler);
  }

  /** May a cache answer from memory now? */
  isFresh(): boolean {
    if (this.source.kind === 'embedded') return this.embeddedListening;
    return performance.now() - this.freshAsOf < FRESH_MS;
  }

  /**
   * Fresh now, or once a beat comes back (at most `waitMs`): under load the beats' round trips can
   * lag, and one shared round trip is cheaper than every waiting request reading the database.
   * False when the feed cannot prove itself current in time (the caller reads the database).
   */
  async fresh(waitMs = FRESH_MS): Promise<boolean> {
    if (this.isFresh()) return true;
    if (this.source.kind === 'embedded' || !this.client) return false;
    const deadline = performance.now() + waitMs;
    while (performance.now() < deadline && this.client) {
      // A late timer: beat now rather than wait for it.
      if (performance.now() - this.lastSent > BEAT_MS) this.beatNow();
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, Math.max(1, deadline - performance.now())).unref();
      });
      clearTimeout(timer);
      if (this.isFresh()) return true;
    }
    return false;
  }

  /** Starts listening; a server feed that cannot connect keeps retrying in the background. */
  async start(): Promise<void> {
    if (this.source.kind === 'embedded') {
      this.stopEmbedded = await this.source.listen(CHANGES_CHANNEL, (payload) => this.dispatch(payload));
      this.reset();
      this.embeddedListening = true;
      return;
    }
    await this.connect();
  }

  private dispatch(payload: string): void {
    const colon = payload.indexOf(':');
    if (colon < 0) return;
    for (const handler of this.handlers.get(payload.slice(0, colon)) ?? []) handler(payload.slice(colon + 1));
  }

  private reset(): void {
    this.epoch += 1;
    for (const handler of this.resets) handler();
  }

  private async connect(): Promise<void> {
    if (this.closed || this.source.kind !== 'server') return;
    const client = this.source.client();
    this.client = client;
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    client.on('notification', (message) => {
      if (message.channel === this.beatChannel) this.beatReturned(Number(message.payload));
      else if (message.channel === CHANGES_CHANNEL && message.payload) this.dispatch(message.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANGES_CHANNEL}`);
      await client.query(`LISTEN ${this.beatChannel}`);
    } catch {
      this.lost(client);
      return;
    }
    // From here every committed change is delivered; what was cached before may have missed some.
    this.reset();
    this.beat();
  }

  private beat(): void {
    if (this.closed || !this.client) return;
    this.beatNow();
    this.beatTimer = setTimeout(() => this.beat(), BEAT_MS).unref();
    if (!this.warned && this.seq > 25 && this.freshAsOf === -Infinity) {
      this.warned = true;
      this.logger?.warn(
        'the change feed receives no notifications (a transaction-mode pooler does not keep LISTEN): API keys and entitlements are read from the database on every request',
      );
    }
  }

  /** Notifies this session itself; when it comes back, everything committed before now has been delivered. */
  private beatNow(): void {
    const client = this.client;
    if (!client) return;
    const seq = ++this.seq;
    this.lastSent = performance.now();
    this.sent.set(seq, this.lastSent);
    // Beats that never come back (no LISTEN behind a pooler) are not kept for ever.
    if (this.sent.size > 50) this.sent.delete(this.sent.keys().next().value!);
    client.query('SELECT pg_notify($1, $2)', [this.beatChannel, String(seq)]).catch(() => this.lost(client));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  private beatReturned(seq: number): void {
    const at = this.sent.get(seq);
    if (at === undefined) return;
    for (const s of this.sent.keys()) if (s <= seq) this.sent.delete(s);
    if (at > this.freshAsOf) this.freshAsOf = at;
    this.wake();
  }

  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    this.freshAsOf = -Infinity;
    this.sent.clear();
    this.wake();
    if (this.beatTimer) clearTimeout(this.beatTimer);
    client.removeAllListeners('notification');
    client.end().catch(() => {});
    if (!this.closed) this.retryTimer = setTimeout(() => void this.connect(), RECONNECT_MS).unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.beatTimer) clearTimeout(this.beatTimer);
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.freshAsOf = -Infinity;
    this.embeddedListening = false;
    this.wake();
    const client = this.client;
    this.client = undefined;
    if (client) await client.end().catch(() => {});
    if (this.stopEmbedded) await this.stopEmbedded().catch(() => {});
  }
}
