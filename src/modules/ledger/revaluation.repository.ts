import { sql, type Selectable } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import { inMode, type Mode } from '../../platform/auth/tenant-mode.js';
import type { FxRevaluationsTable } from './ledger.tables.js';
import './ledger.tables.js';

export type FxRevaluationRow = Selectable<FxRevaluationsTable>;

/** One invoice's open receivable in a foreign currency before an instant: amount and carried functional value. */
export type OpenReceivable = { invoice_id: string; customer_id: string | null; currency: string; amount: number; functional: number };

/**
 * The entity's receivables (1100) per invoice in currencies other than `functionalCurrency`, over
 * the entries dated before `before`, that are still open (amount ≠ 0) and fully valued.
 */
export async function openForeignReceivables(tx: Tx, tenantId: string, entityId: string, functionalCurrency: string, before: Date): Promise<OpenReceivable[]> {
  const rows = await sql<{ invoice_id: string; customer_id: string | null; currency: string; amount: string; functional: string }>`
    SELECT l.invoice_id, (array_agg(l.customer_id) FILTER (WHERE l.customer_id IS NOT NULL))[1] AS customer_id, e.currency,
           (sum(l.debit) - sum(l.credit))::text AS amount,
           (sum(l.functional_debit) - sum(l.functional_credit))::text AS functional
    FROM journal_lines l JOIN journal_entries e ON e.tenant_id = l.tenant_id AND e.id = l.entry_id
    WHERE l.tenant_id = ${tenantId} AND e.entity_id = ${entityId} AND l.account_code = 1100 AND l.invoice_id IS NOT NULL
      AND e.currency <> ${functionalCurrency} AND e.posted_at < ${before}
    GROUP BY l.invoice_id, e.currency
    HAVING sum(l.debit) <> sum(l.credit) AND count(*) FILTER (WHERE l.functional_debit IS NULL) = 0
    ORDER BY e.currency, l.invoice_id`.execute(tx);
  return rows.rows.map((r) => ({ ...r, amount: Number(r.amount), functional: Number(r.functional) }));
}

export async function revaluationsOf(tx: Tx, tenantId: string, entityId: string, period: string): Promise<FxRevaluationRow[]> {
  return tx
    .selectFrom('fx_revaluations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('entity_id', '=', entityId)
    .where('period', '=', period)
    .execute();
}

/** Records a month's revaluation of one currency; false when it was recorded already (a concurrent job or close). */
export async function insertRevaluation(tx: Tx, row: FxRevaluationRow): Promise<boolean> {
  const inserted = await tx
    .insertInto('fx_revaluations')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'entity_id', 'period', 'currency']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Entities (of the mode's tenants) that ever invoiced in a currency other than their functional one. */
export async function entitiesWithForeignInvoices(tx: Tx, mode: Mode | null): Promise<{ tenant_id: string; entity_id: string }[]> {
  return tx
    .selectFrom('journal_entries')
    .select(['tenant_id', 'entity_id'])
    .distinct()
    .where('kind', '=', 'invoice.finalized')
    .where(sql<boolean>`currency <> functional_currency`)
    .where(inMode(mode))
    .execute();
}
