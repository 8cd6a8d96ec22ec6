import { sql } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';

/** One invoice of the period with its lines summed per tax rate (one row per invoice and rate). */
export type InvoiceRateRow = {
  id: string;
  number: string;
  issued_at: Date;
  status: string;
  tax_type: string;
  place_of_supply: string | null;
  currency: string;
  total: number;
  ctin: string | null;
  rate_bp: number;
  txval: number;
  iamt: number;
  camt: number;
  samt: number;
};

export type Keyset = { issued_at: Date; id: string } | null;

/**
 * The next page of the period's issued invoices (void ones included: they count in doc_issue),
 * keyset-paged by (issued_at, id) on invoices_entity_issued, lines summed per rate in SQL.
 */
export async function invoiceRatePage(
  tx: Tx,
  tenantId: string,
  entityId: string,
  from: Date,
  to: Date,
  after: Keyset,
  limit: number,
): Promise<InvoiceRateRow[]> {
  const keyset = after ? sql`AND (i.issued_at, i.id) > (${after.issued_at}, ${after.id})` : sql``;
  const { rows } = await sql<InvoiceRateRow>`
    WITH page AS (
      SELECT i.id, i.number, i.issued_at, i.status, i.tax_type, i.place_of_supply, i.currency, i.total,
             i.customer_details->>'gstin' AS ctin
      FROM invoices i
      WHERE i.tenant_id = ${tenantId} AND i.entity_id = ${entityId}
        AND i.issued_at >= ${from} AND i.issued_at < ${to} AND i.number IS NOT NULL ${keyset}
      ORDER BY i.issued_at, i.id
      LIMIT ${limit}
    )
    SELECT p.id, p.number, p.issued_at, p.status, p.tax_type, p.place_of_supply, p.currency, p.total, p.ctin,
           l.rate_bp, l.txval, l.iamt, l.camt, l.samt
    FROM page p
    -- Per invoice, through the (tenant_id, invoice_id, position) key: a page never scans the
    -- month's lines.
    CROSS JOIN LATERAL (
      SELECT rate_bp, sum(amount)::bigint AS txval, sum(igst_amount)::bigint AS iamt,
             sum(cgst_amount)::bigint AS camt, sum(sgst_amount)::bigint AS samt
      FROM invoice_lines
      WHERE tenant_id = ${tenantId} AND invoice_id = p.id
      GROUP BY rate_bp
    ) l
    ORDER BY p.issued_at, p.id, l.rate_bp`.execute(tx);
  return rows;
}

export type HsnRow = { hsn_code: string; rate_bp: number; qty: number; txval: number; iamt: number; camt: number; samt: number };

/** The HSN summary of the period's (not void) invoices, summed in SQL. */
export async function invoiceHsnSummary(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<HsnRow[]> {
  const { rows } = await sql<HsnRow>`
    SELECT l.hsn_code, l.rate_bp, sum(l.quantity)::bigint AS qty, sum(l.amount)::bigint AS txval,
           sum(l.igst_amount)::bigint AS iamt, sum(l.cgst_amount)::bigint AS camt, sum(l.sgst_amount)::bigint AS samt
    FROM invoices i
    JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
    WHERE i.tenant_id = ${tenantId} AND i.entity_id = ${entityId}
      AND i.issued_at >= ${from} AND i.issued_at < ${to} AND i.number IS NOT NULL AND i.status <> 'void' AND i.tax_type <> ''
    GROUP BY l.hsn_code, l.rate_bp
    ORDER BY l.hsn_code, l.rate_bp`.execute(tx);
  return rows;
}

export type CreditNoteRow = {
  id: string;
  number: string;
  issued_at: Date;
  status: string;
  tax_type: string;
  hsn_code: string;
  subtotal: number;
  igst_amount: number;
  cgst_amount: number;
  sgst_amount: number;
  amount: number;
  currency: string;
  invoice_number: string | null;
  invoice_issued_at: Date | null;
  invoice_total: number | null;
  place_of_supply: string | null;
  ctin: string | null;
};

/** The period's credit notes (void ones included, for doc_issue), with the invoice each adjusts. */
export async function creditNotesOfPeriod(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<CreditNoteRow[]> {
  const { rows } = await sql<CreditNoteRow>`
    SELECT c.id, c.number, c.issued_at, c.status, c.tax_type, c.hsn_code, c.subtotal, c.igst_amount, c.cgst_amount,
           c.sgst_amount, c.amount, c.currency, i.number AS invoice_number, i.issued_at AS invoice_issued_at,
           i.total AS invoice_total, i.place_of_supply, i.customer_details->>'gstin' AS ctin
    FROM credit_notes c
    LEFT JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id
    WHERE c.tenant_id = ${tenantId} AND c.entity_id = ${entityId}
      AND c.issued_at >= ${from} AND c.issued_at < ${to} AND c.number IS NOT NULL
    ORDER BY c.issued_at, c.id`.execute(tx);
  return rows;
}
