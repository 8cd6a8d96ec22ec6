import { sql, type Insertable, type Selectable } from 'kysely';
import { paginate } from '../../platform/db/paginate.js';
import type { Tx } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/envelope.js';
import type { ReconciliationDiscrepanciesTable, ReconciliationRunsTable } from './finance.tables.js';
import './finance.tables.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';

export type RunRow = Selectable<ReconciliationRunsTable>;
export type DiscrepancyRow = Selectable<ReconciliationDiscrepanciesTable>;

/** The scope of a run over every entity (the partial unique index allows one running run per scope). */
export const ALL_ENTITIES_SCOPE = '00000000-0000-0000-0000-000000000000';

export async function findRun(tx: Tx, tenantId: string, id: string): Promise<RunRow | undefined> {
  return tx.selectFrom('reconciliation_runs').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

export async function findRunningRun(tx: Tx, tenantId: string, scope: string): Promise<RunRow | undefined> {
  return tx
    .selectFrom('reconciliation_runs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('scope', '=', scope)
    .where('status', '=', 'running')
    .executeTakeFirst();
}

export async function latestRun(tx: Tx, tenantId: string): Promise<RunRow | undefined> {
  return tx
    .selectFrom('reconciliation_runs')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

export async function listRuns(tx: Tx, tenantId: string, page: Page): Promise<{ runs: RunRow[]; total: number }> {
  const query = tx.selectFrom('reconciliation_runs').where('tenant_id', '=', tenantId);
  const { rows, total } = await paginate<RunRow>(tx, query, { tenantId, table: 'reconciliation_runs', page, orderBy: 'started_at' });
  return { runs: rows, total };
}

/** Inserts a running run; false when one is already running for the scope (a concurrent request won). */
export async function insertRun(tx: Tx, row: Insertable<ReconciliationRunsTable>): Promise<boolean> {
  const result = await sql`INSERT INTO reconciliation_runs (tenant_id, id, entity_id, scope, status, run_by, started_at, created_at)
    VALUES (${row.tenant_id}, ${row.id}, ${row.entity_id ?? null}, ${row.scope}, 'running', ${row.run_by ?? null}, ${row.started_at}, ${row.created_at})
    ON CONFLICT (tenant_id, scope) WHERE status = 'running' DO NOTHING`.execute(tx);
  return Number(result.numAffectedRows ?? 0) === 1;
}

export async function finishRun(tx: Tx, tenantId: string, id: string, values: Partial<RunRow>): Promise<RunRow> {
  return tx
    .updateTable('reconciliation_runs')
    .set(values)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertDiscrepancies(tx: Tx, rows: Insertable<ReconciliationDiscrepanciesTable>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += 500)
    await tx
      .insertInto('reconciliation_discrepancies')
      .values(rows.slice(i, i + 500))
      .execute();
}

export async function discrepanciesOf(tx: Tx, tenantId: string, runId: string): Promise<DiscrepancyRow[]> {
  return tx.selectFrom('reconciliation_discrepancies').selectAll().where('tenant_id', '=', tenantId).where('run_id', '=', runId).orderBy('position').execute();
}

/**
 * Tenants after the cursor whose journal changed since their latest run started (or that have
 * entries and were never reconciled): the daily run walks them in pages and leaves idle ones be.
 */
export async function tenantsToReconcile(tx: Tx, mode: Mode | null, after: string | null, limit: number): Promise<string[]> {
  const rows = await sql<{ id: string }>`
    SELECT t.id FROM tenants t
    WHERE ${after === null ? sql`true` : sql`t.id > ${after}`} AND ${inMode(mode, 't.id')}
      AND EXISTS (SELECT 1 FROM journal_entries e WHERE e.tenant_id = t.id
        AND e.posted_at >= COALESCE((SELECT max(r.started_at) FROM reconciliation_runs r WHERE r.tenant_id = t.id), '-infinity'::timestamptz))
    ORDER BY t.id LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => r.id);
}

// ---- The checks. Each reads one keyset page (ids after `after`), so a run never holds a tenant's
// ---- whole history in memory.

export type InvoiceCheckRow = {
  id: string;
  entity_id: string;
  currency: string;
  status: string;
  total: number;
  amount_due: number;
  entry_id: string | null;
  entry_debits: number | null;
  receivable: number;
};

const entityFilter = (column: string, entityId: string | null) => (entityId ? sql`AND ${sql.ref(column)} = ${entityId}` : sql``);

export async function invoicePage(tx: Tx, tenantId: string, entityId: string | null, after: string, limit: number): Promise<InvoiceCheckRow[]> {
  const rows = await sql<InvoiceCheckRow>`
    SELECT i.id, i.entity_id, i.currency, i.status, i.total, i.amount_due,
           fin.id AS entry_id, fin.debits AS entry_debits, COALESCE(rec.balance, 0) AS receivable
    FROM invoices i
    LEFT JOIN LATERAL (
      SELECT e.id, (SELECT COALESCE(SUM(l.debit), 0) FROM journal_lines l WHERE l.tenant_id = e.tenant_id AND l.entry_id = e.id) AS debits
      FROM journal_entries e WHERE e.tenant_id = i.tenant_id AND e.kind = 'invoice.finalized' AND e.reference_id = i.id) fin ON true
    LEFT JOIN LATERAL (
      SELECT SUM(l.debit - l.credit) AS balance FROM journal_lines l
      WHERE l.tenant_id = i.tenant_id AND l.invoice_id = i.id AND l.account_code = 1100) rec ON true
    WHERE i.tenant_id = ${tenantId} AND i.number IS NOT NULL AND i.id > ${after} ${entityFilter('i.entity_id', entityId)}
    ORDER BY i.id LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => ({
    ...r,
    total: Number(r.total),
    amount_due: Number(r.amount_due),
    entry_debits: r.entry_debits === null ? null : Number(r.entry_debits),
    receivable: Number(r.receivable),
  }));
}

export type PaymentCheckRow = {
  id: string;
  invoice_id: string | null;
  entity_id: string | null;
  currency: string;
  amount: number;
  tds_amount: number;
  entry_id: string | null;
  entry_debits: number | null;
};

export async function paymentPage(tx: Tx, tenantId: string, entityId: string | null, after: string, limit: number): Promise<PaymentCheckRow[]> {
  const rows = await sql<PaymentCheckRow>`
    SELECT p.id, p.invoice_id, COALESCE(i.entity_id, fin.entity_id) AS entity_id, p.currency, p.amount, p.tds_amount,
           fin.id AS entry_id, fin.debits AS entry_debits
    FROM payments p
    LEFT JOIN invoices i ON i.tenant_id = p.tenant_id AND i.id = p.invoice_id
    LEFT JOIN LATERAL (
      SELECT e.id, e.entity_id, (SELECT COALESCE(SUM(l.debit), 0) FROM journal_lines l WHERE l.tenant_id = e.tenant_id AND l.entry_id = e.id) AS debits
      FROM journal_entries e WHERE e.tenant_id = p.tenant_id AND e.kind = 'payment.recorded' AND e.reference_id = p.id) fin ON true
    WHERE p.tenant_id = ${tenantId} AND p.status = 'succeeded' AND p.id > ${after}
      ${entityId ? sql`AND (COALESCE(i.entity_id, fin.entity_id) = ${entityId} OR COALESCE(i.entity_id, fin.entity_id) IS NULL)` : sql``}
    ORDER BY p.id LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => ({
    ...r,
    amount: Number(r.amount),
    tds_amount: Number(r.tds_amount),
    entry_debits: r.entry_debits === null ? null : Number(r.entry_debits),
  }));
}

export type CreditNoteCheckRow = {
  id: string;
  invoice_id: string | null;
  currency: string;
  status: string;
  amount: number;
  balance: number;
  entry_id: string | null;
  entry_debits: number | null;
  write_off_id: string | null;
  credit_balance: number;
};

export async function creditNotePage(tx: Tx, tenantId: string, entityId: string | null, after: string, limit: number): Promise<CreditNoteCheckRow[]> {
  const rows = await sql<CreditNoteCheckRow>`
    SELECT c.id, c.invoice_id, c.currency, c.status, c.amount, c.balance,
           fin.id AS entry_id, fin.debits AS entry_debits,
           (SELECT e.id FROM journal_entries e WHERE e.tenant_id = c.tenant_id AND e.kind = 'credit_note.expired' AND e.reference_id = c.id) AS write_off_id,
           COALESCE(cr.balance, 0) AS credit_balance
    FROM credit_notes c
    LEFT JOIN LATERAL (
      SELECT e.id, (SELECT COALESCE(SUM(l.debit), 0) FROM journal_lines l WHERE l.tenant_id = e.tenant_id AND l.entry_id = e.id) AS debits
      FROM journal_entries e WHERE e.tenant_id = c.tenant_id AND e.kind = 'credit_note.issued' AND e.reference_id = c.id) fin ON true
    LEFT JOIN LATERAL (
      SELECT SUM(l.credit - l.debit) AS balance FROM journal_lines l
      WHERE l.tenant_id = c.tenant_id AND l.credit_note_id = c.id AND l.account_code = 2300) cr ON true
    WHERE c.tenant_id = ${tenantId} AND c.number IS NOT NULL AND c.status IN ('issued', 'used', 'void', 'expired') AND c.id > ${after}
      ${entityFilter('c.entity_id', entityId)}
    ORDER BY c.id LIMIT ${limit}`.execute(tx);
  return rows.rows.map((r) => ({
    ...r,
    amount: Number(r.amount),
    balance: Number(r.balance),
    entry_debits: r.entry_debits === null ? null : Number(r.entry_debits),
    credit_balance: Number(r.credit_balance),
  }));
}

export type EntryCheckRow = {
  id: string;
  kind: string;
  reference_type: string;
  reference_id: string;
  ledger_id: number;
  currency: string;
  reference_exists: boolean;
  pending: boolean;
};

export async function entryPage(tx: Tx, tenantId: string, entityId: string | null, after: string, limit: number): Promise<EntryCheckRow[]> {
  const rows = await sql<EntryCheckRow>`
    SELECT e.id, e.kind, e.reference_type, e.reference_id, e.ledger_id, e.currency,
      -- Scalar subqueries with LIMIT 1 are probed per row; EXISTS became a hashed subplan that read
      -- the whole table on every page.
      CASE e.reference_type
        WHEN 'invoice' THEN (SELECT true FROM invoices x WHERE x.tenant_id = e.tenant_id AND x.id = e.reference_id LIMIT 1) IS NOT NULL
        WHEN 'payment' THEN (SELECT true FROM payments x WHERE x.tenant_id = e.tenant_id AND x.id = e.reference_id LIMIT 1) IS NOT NULL
        WHEN 'credit_note' THEN (SELECT true FROM credit_notes x WHERE x.tenant_id = e.tenant_id AND x.id = e.reference_id LIMIT 1) IS NOT NULL
        ELSE true END AS reference_exists,
      (SELECT true FROM tb_outbox o WHERE o.tenant_id = e.tenant_id AND o.entry_id = e.id LIMIT 1) IS NOT NULL AS pending
    FROM journal_entries e
    WHERE e.tenant_id = ${tenantId} AND e.id > ${after} ${entityFilter('e.entity_id', entityId)}
    ORDER BY e.id LIMIT ${limit}`.execute(tx);
  return rows.rows;
}

export type LineCheckRow = {
  id: string;
  entry_id: string;
  account_code: number;
  debit: number;
  credit: number;
  transfer_id: string | null;
  amount: number | null;
  debit_account_id: string | null;
  credit_account_id: string | null;
  ledger: number | null;
  user_data_128: string | null;
};

/**
 * The lines of some entries, each with the secondary-ledger transfer of the same id (if any). A line
 * with no transaction-currency amount (an exchange difference valued only in the functional
 * currency) has no transfer by design and is left out, as the feed leaves it out.
 */
export async function linesWithTransfers(tx: Tx, tenantId: string, entryIds: string[]): Promise<LineCheckRow[]> {
  if (entryIds.length === 0) return [];
  // Index probes per entry and per line (unnest, LATERAL with OFFSET 0 / LIMIT 1 as planner fences). As plain joins the planner
  // scanned all lines and hashed every transfer on each page: quadratic over a large tenant.
  const rows = await sql<LineCheckRow>`
    SELECT l.id, l.entry_id, l.account_code, l.debit, l.credit,
           t.id AS transfer_id, t.amount, t.debit_account_id, t.credit_account_id, t.ledger, t.user_data_128
    FROM unnest(${entryIds}::uuid[]) AS p(entry_id)
    JOIN LATERAL (SELECT * FROM journal_lines y WHERE y.tenant_id = ${tenantId} AND y.entry_id = p.entry_id AND (y.debit <> 0 OR y.credit <> 0) OFFSET 0) l ON true
    LEFT JOIN LATERAL (
      SELECT x.id, x.amount, x.debit_account_id, x.credit_account_id, x.ledger, x.user_data_128 FROM tb_transfers x
      WHERE x.tenant_id = l.tenant_id AND x.id = l.id LIMIT 1) t ON true`.execute(tx);
  return rows.rows.map((r) => ({ ...r, amount: r.amount === null ? null : Number(r.amount), ledger: r.ledger === null ? null : Number(r.ledger) }));
}

/** Σ debits and credits per entity ledger × currency × account, leaving out entries still in the outbox. */
export async function journalTotals(
  tx: Tx,
  tenantId: string,
  entityId: string | null,
): Promise<{ ledger_id: number; currency: string; account_code: number; debit: number; credit: number }[]> {
  const rows = await sql<{ ledger_id: number; currency: string; account_code: number; debit: number; credit: number }>`
    SELECT e.ledger_id, e.currency, l.account_code, SUM(l.debit) AS debit, SUM(l.credit) AS credit
    FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} ${entityFilter('e.entity_id', entityId)}
      AND NOT EXISTS (SELECT 1 FROM tb_outbox o WHERE o.tenant_id = e.tenant_id AND o.entry_id = e.id)
    GROUP BY e.ledger_id, e.currency, l.account_code`.execute(tx);
  return rows.rows.map((r) => ({ ...r, debit: Number(r.debit), credit: Number(r.credit) }));
}

export async function secondaryAccounts(tx: Tx, tenantId: string, entityId: string | null) {
  let q = tx.selectFrom('tb_accounts').select(['id', 'ledger', 'code', 'currency', 'debits_posted', 'credits_posted']).where('tenant_id', '=', tenantId);
  if (entityId) q = q.where('entity_id', '=', entityId);
  const rows = await q.execute();
  return rows.map((r) => ({ ...r, ledger: Number(r.ledger), debits_posted: Number(r.debits_posted), credits_posted: Number(r.credits_posted) }));
}
