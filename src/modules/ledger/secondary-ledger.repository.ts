import { sql } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import type { CreateTransferResult, FeedEntry, FeedLine, SecondaryAccount, SecondaryLedgerWriter, SecondaryTransfer } from './secondary-ledger.js';
import './ledger.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

const CHUNK = 2_000;

function chunks<T>(items: T[], size = CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/**
 * The secondary ledger kept in PostgreSQL tables (tb_accounts, tb_transfers), with TigerBeetle's
 * semantics: a transfer id seen again is not applied twice; it answers `exists` when every field
 * matches and `exists_with_different_fields` otherwise. Balances move only with created transfers.
 * Use it inside one transaction so transfers and balances commit together.
 */
export class PostgresSecondaryLedger implements SecondaryLedgerWriter {
  constructor(
    private readonly tx: Tx,
    private readonly now: Date,
  ) {}

  async createAccounts(tenantId: string, accounts: SecondaryAccount[]): Promise<void> {
    for (const part of chunks(accounts)) {
      await this.tx
        .insertInto('tb_accounts')
        .values(
          part.map((a) => ({
            tenant_id: tenantId,
            id: a.id,
            ledger: a.ledger,
            code: a.code,
            entity_id: a.entity_id,
            currency: a.currency,
            user_data_32: a.user_data_32,
            timestamp: this.now,
          })),
        )
        .onConflict((oc) => oc.columns(['tenant_id', 'id']).doNothing())
        .execute();
    }
  }

  async createTransfers(tenantId: string, transfers: SecondaryTransfer[]): Promise<CreateTransferResult[]> {
    const created = new Set<string>();
    for (const part of chunks(transfers)) {
      const rows = await this.tx
        .insertInto('tb_transfers')
        .values(part.map((t) => ({ tenant_id: tenantId, ...t, timestamp: this.now })))
        .onConflict((oc) => oc.columns(['tenant_id', 'id']).doNothing())
        .returning('id')
        .execute();
      for (const r of rows) created.add(r.id);
    }
    const seen = transfers.filter((t) => !created.has(t.id));
    const existing = new Map<string, SecondaryTransfer>();
    for (const part of chunks(seen.map((t) => t.id))) {
      const rows = await this.tx.selectFrom('tb_transfers').selectAll().where('tenant_id', '=', tenantId).where('id', 'in', part).execute();
      for (const r of rows) existing.set(r.id, r);
    }
    // Balances: Σ of the created transfers per account, applied in account order (no deadlocks).
    const delta = new Map<string, { debits: number; credits: number }>();
    const bump = (id: string, debits: number, credits: number) => {
      const d = delta.get(id) ?? { debits: 0, credits: 0 };
      d.debits += debits;
      d.credits += credits;
      delta.set(id, d);
    };
    for (const t of transfers) {
      if (!created.has(t.id)) continue;
      bump(t.debit_account_id, t.amount, 0);
      bump(t.credit_account_id, 0, t.amount);
    }
    const ids = [...delta.keys()].sort();
    for (const part of chunks(ids, 1_000)) {
      const values = sql.join(part.map((id) => sql`(${id}::uuid, ${delta.get(id)!.debits}::bigint, ${delta.get(id)!.credits}::bigint)`));
      await sql`UPDATE tb_accounts a SET debits_posted = a.debits_posted + v.d, credits_posted = a.credits_posted + v.c
                FROM (VALUES ${values}) AS v(id, d, c)
                WHERE a.tenant_id = ${tenantId} AND a.id = v.id`.execute(this.tx);
    }
    return transfers.map((t) => {
      if (created.has(t.id)) return 'ok';
      const e = existing.get(t.id);
      const same =
        e &&
        e.debit_account_id === t.debit_account_id &&
        e.credit_account_id === t.credit_account_id &&
        Number(e.amount) === t.amount &&
        Number(e.ledger) === t.ledger &&
        e.code === t.code &&
        e.flags === t.flags &&
        e.user_data_128 === t.user_data_128 &&
        Number(e.user_data_64) === t.user_data_64 &&
        Number(e.user_data_32) === t.user_data_32;
      return same ? 'exists' : 'exists_with_different_fields';
    });
  }
}

/** Takes up to `limit` of the tenant's pending entries off the outbox (rows stay locked until commit). */
export async function takeOutbox(tx: Tx, tenantId: string, limit: number): Promise<string[]> {
  const rows = await sql<{ entry_id: string }>`
    DELETE FROM tb_outbox WHERE tenant_id = ${tenantId} AND entry_id IN (
      SELECT entry_id FROM tb_outbox WHERE tenant_id = ${tenantId} LIMIT ${limit} FOR UPDATE SKIP LOCKED)
    RETURNING entry_id`.execute(tx);
  return rows.rows.map((r) => r.entry_id);
}

/** Tenants with entries waiting for the secondary ledger. */
export async function tenantsWithOutbox(tx: Tx, mode: Mode | null, limit: number): Promise<string[]> {
  const rows = await sql<{ tenant_id: string }>`SELECT DISTINCT tenant_id FROM tb_outbox WHERE ${inMode(mode)} LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => r.tenant_id);
}

export async function feedEntries(tx: Tx, tenantId: string, entryIds: string[]): Promise<{ entries: FeedEntry[]; lines: FeedLine[] }> {
  if (entryIds.length === 0) return { entries: [], lines: [] };
  // A line with no transaction-currency amount (an exchange difference, valued only in the
  // functional currency) has no transfer: the secondary ledger is kept per transaction currency.
  // Index probes per entry (unnest + LATERAL … OFFSET 0 as a planner fence): a plain IN list let
  // the planner scan every line of the tenant for each page.
  const entries = await sql<FeedEntry>`
    SELECT e.id, e.ledger_id, e.entity_id, e.kind, e.currency, e.posted_at
    FROM unnest(${entryIds}::uuid[]) AS p(id)
    JOIN LATERAL (SELECT * FROM journal_entries x WHERE x.tenant_id = ${tenantId} AND x.id = p.id OFFSET 0) e ON true`.execute(tx);
  const lines = await sql<FeedLine>`
    SELECT l.id, l.entry_id, l.account_code, l.debit, l.credit
    FROM unnest(${entryIds}::uuid[]) AS p(id)
    JOIN LATERAL (SELECT * FROM journal_lines x WHERE x.tenant_id = ${tenantId} AND x.entry_id = p.id AND (x.debit <> 0 OR x.credit <> 0) OFFSET 0) l ON true`.execute(
    tx,
  );
  return { entries: entries.rows, lines: lines.rows };
}
