import type { Ctx } from '../../platform/context.js';
import type { Tx } from '../../platform/db/schema.js';
import { entitlementVersion } from './entitlements.repository.js';
import type { CustomerEntitlements } from './entitlements.schemas.js';

/** How long a tenant's version, once read, is trusted: a change made by any process shows within this (DESIGN §23: one second). */
export const VERSION_CHECK_MS = 250;
const MAX_ENTRIES = 200_000;

/**
 * The customers' entitlements in memory, one cache per app instance (never process-global).
 * An entry is good while its tenant's version — the newest `entitlement_changes` id, which every
 * change that may alter entitlements appends, in any process — is the one it was computed at.
 * The version is read at most every VERSION_CHECK_MS per tenant, so a hot read costs no query,
 * and a change committed anywhere is seen within that time. Works the same on PGlite.
 */
export class EntitlementCache {
  private readonly entries = new Map<string, { version: number; value: CustomerEntitlements; at: number }>();
  private readonly versions = new Map<string, { version: number; checkedAt: number }>();
  private readonly reading = new Map<string, Promise<number>>();

  constructor(private readonly db: Tx) {}

  private async version(tenantId: string): Promise<number> {
    const now = performance.now();
    const known = this.versions.get(tenantId);
    if (known && now - known.checkedAt < VERSION_CHECK_MS) return known.version;
    // One read per tenant at a time: concurrent misses share it.
    let pending = this.reading.get(tenantId);
    if (!pending) {
      pending = entitlementVersion(this.db, tenantId).finally(() => this.reading.delete(tenantId));
      this.reading.set(tenantId, pending);
    }
    const version = await pending;
    this.versions.set(tenantId, { version, checkedAt: performance.now() });
    return version;
  }

  async get(ctx: Ctx, customerId: string, compute: () => Promise<CustomerEntitlements>): Promise<CustomerEntitlements> {
    const version = await this.version(ctx.tenantId);
    const key = `${ctx.tenantId}:${customerId}`;
    const hit = this.entries.get(key);
    // An alert's block ends with its period, which no change marks: such an answer lives a second at most.
    if (hit && hit.version === version && (hit.value.blocked_reason !== 'alert' || performance.now() - hit.at < 1_000)) return hit.value;
    const value = await compute();
    if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
    this.entries.set(key, { version, value, at: performance.now() });
    return value;
  }

  /** After a change this process committed: read the version again on the next request. */
  forget(tenantId: string): void {
    this.versions.delete(tenantId);
  }
}
