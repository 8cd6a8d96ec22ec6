import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { DB } from '../../platform/db/schema.js';
import type { JobHandler } from '../../platform/jobs/jobs.js';
import { findEntity } from '../entities/index.js';
import { revalueEndedMonth } from './revaluation.service.js';
import { entitiesWithForeignInvoices } from './revaluation.repository.js';
import { transfersOf } from './secondary-ledger.js';
import { PostgresSecondaryLedger, feedEntries, takeOutbox, tenantsWithOutbox } from './secondary-ledger.repository.js';

const PAGE = 1_000;

/**
 * Writes the tenant's committed journal entries waiting in the outbox to the secondary ledger,
 * a page per transaction (the outbox rows leave with the transfers they became). Idempotent: a
 * transfer written before answers `exists`; one whose fields differ is logged and left for the
 * reconciliation to report (tb_amount_mismatch). Returns the number of entries written.
 */
export async function syncSecondaryLedger(db: Kysely<DB>, tenantId: string, now: Date, logger?: Logger): Promise<number> {
  let total = 0;
  for (;;) {
    const n = await db.transaction().execute(async (tx) => {
      const ids = await takeOutbox(tx, tenantId, PAGE);
      if (ids.length === 0) return 0;
      const { entries, lines } = await feedEntries(tx, tenantId, ids);
      const { accounts, transfers } = transfersOf(tenantId, entries, lines);
      const writer = new PostgresSecondaryLedger(tx, now);
      await writer.createAccounts(tenantId, accounts);
      const results = await writer.createTransfers(tenantId, transfers);
      const clashes = transfers.filter((_, i) => results[i] === 'exists_with_different_fields').map((t) => t.id);
      if (clashes.length) logger?.warn({ tenantId, transfers: clashes.slice(0, 20) }, 'secondary ledger: transfer exists with different fields');
      return ids.length;
    });
    total += n;
    if (n < PAGE) return total;
  }
}

/** The feed job: every tenant with pending entries, each in its own transactions. */
export const syncSecondaryLedgers: JobHandler = async (_job, env) => {
  for (;;) {
    const tenants = await tenantsWithOutbox(env.db, env.config.mode, 100);
    for (const tenantId of tenants) await syncSecondaryLedger(env.db, tenantId, env.clock.now(), env.logger);
    if (tenants.length < 100) return;
  }
};

/**
 * Month-end revaluation (decision 0450): around a month's turn (UTC days 28–7, which covers every
 * zone's month end and a late worker), every entity that invoiced in a foreign currency gets its
 * ended month revalued once, each entity in its own transaction.
 */
export const revalueForeignReceivables: JobHandler = async (_job, env) => {
  const now = env.clock.now();
  const day = now.getUTCDate();
  if (day > 7 && day < 28) return;
  for (const { tenant_id, entity_id } of await entitiesWithForeignInvoices(env.db, env.config.mode)) {
    await env.db.transaction().execute(async (tx) => {
      const ctx = { tx, tenantId: tenant_id, now };
      const entity = await findEntity(tx, tenant_id, entity_id);
      if (entity) await revalueEndedMonth(ctx, entity);
    });
  }
};
