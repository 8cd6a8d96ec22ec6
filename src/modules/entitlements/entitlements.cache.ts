import type { ReadCtx } from '../../platform/context.js';
import type { ChangeFeed } from '../../platform/db/change-feed.js';
import type { CustomerEntitlements } from './entitlements.schemas.js';

const MAX_ENTRIES = 200_000;
/** An answer blocked by an alert is kept this long at most: the alert's block ends with its period, which no change marks. */
const ALERT_BLOCK_MS = 1_000;

type Entry = { epoch: number; generation: number; value: CustomerEntitlements; at: number };

/**
 * The customers' entitlements in memory, one cache per app instance (never process-global), keyed
 * by tenant and customer (docs/decisions/0341, 0420). Every change that may alter a tenant's
 * answers appends to `entitlement_changes`, whose trigger notifies every process on commit; the
 * change feed then moves the tenant's generation on here, and entries of an older generation are
 * recomputed. The generation is taken before an answer is computed, so a change committed while it
 * is read voids it. While the feed is not fresh (platform/db/change-feed.ts) every read computes
 * from the database, so an answer is never more than a second behind a change committed anywhere.
 * A hot read costs no query.
 */
export class EntitlementCache {
  private readonly entries = new Map<string, Entry>();
  private readonly generations = new Map<string, number>();

  constructor(private readonly changes?: ChangeFeed) {
    changes?.on('entitlements', (tenantId) => this.forget(tenantId));
    changes?.onReset(() => {
      this.entries.clear();
      this.generations.clear();
    });
  }

  async get(ctx: ReadCtx, customerId: string, compute: () => Promise<CustomerEntitlements>): Promise<CustomerEntitlements> {
    const changes = this.changes;
    if (!changes || !(changes.isFresh() || (await changes.fresh()))) return compute();
    const epoch = changes.epoch;
    const generation = this.generations.get(ctx.tenantId) ?? 0;
    const key = `${ctx.tenantId}:${customerId}`;
    const hit = this.entries.get(key);
    if (hit && hit.epoch === epoch && hit.generation === generation && (hit.value.blocked_reason !== 'alert' || performance.now() - hit.at < ALERT_BLOCK_MS)) {
      return hit.value;
    }
    const value = await compute();
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { epoch, generation, value, at: performance.now() });
    return value;
  }

  /** The tenant's answers may have changed: the next read of each computes it again. */
  forget(tenantId: string): void {
    this.generations.set(tenantId, (this.generations.get(tenantId) ?? 0) + 1);
  }
}
