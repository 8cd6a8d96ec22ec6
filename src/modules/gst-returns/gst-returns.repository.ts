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
  /** An export's shipping bill, once recorded (decision 0610). */
  shipping_bill: { port_code: string; number: string; date: string } | null;
  rate_bp: number;
  /** Every line of the invoice at this rate is a service (SAC, chapter 99): 0 % is exempt, not nil-rated. */
  service: boolean;
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
      SELECT i.id, i.number, i.issued_at, i.status, i.tax_type, i.place_of_supply, i.currency, coalesce(i.inr_total, i.total) AS total,
             i.customer_details->>'gstin' AS ctin, i.shipping_bill
      FROM invoices i
      WHERE i.tenant_id = ${tenantId} AND i.entity_id = ${entityId}
        AND i.issued_at >= ${from} AND i.issued_at < ${to} AND i.number IS NOT NULL ${keyset}
        -- A top-up of prepaid credit is no tax invoice (decision 0700) and has its own series (0840).
        AND i.billing_reason IS DISTINCT FROM 'credit_top_up'
      ORDER BY i.issued_at, i.id
      LIMIT ${limit}
    )
    SELECT p.id, p.number, p.issued_at, p.status, p.tax_type, p.place_of_supply, p.currency, p.total, p.ctin, p.shipping_bill,
           l.rate_bp, l.service, l.txval, l.iamt, l.camt, l.samt
    FROM page p
    -- Per invoice, through the (tenant_id, invoice_id, position) key: a page never scans the
    -- month's lines.
    CROSS JOIN LATERAL (
      SELECT rate_bp, bool_and(hsn_code LIKE '99%') AS service, sum(coalesce(inr_amount, amount))::bigint AS txval, sum(coalesce(inr_igst_amount, igst_amount))::bigint AS iamt,
             sum(coalesce(inr_cgst_amount, cgst_amount))::bigint AS camt, sum(coalesce(inr_sgst_amount, sgst_amount))::bigint AS samt
      FROM invoice_lines
      WHERE tenant_id = ${tenantId} AND invoice_id = p.id
      GROUP BY rate_bp
    ) l
    ORDER BY p.issued_at, p.id, l.rate_bp`.execute(tx);
  return rows;
}

/** Where B2CL starts (B2CL_LIMIT_CHANGE in gstr1.ts): the value above which an inter-state B2C invoice is B2CL. */
const b2clLimit = (issuedAt: ReturnType<typeof sql>) => sql`CASE WHEN ${issuedAt} >= ${new Date('2024-07-31T18:30:00Z')} THEN 10000000 ELSE 25000000 END`;

/** An invoice of the period that goes to B2CS (GSTR-1 sums it by place of supply and rate, not per invoice). */
const isB2cs = sql`(i.tax_type <> 'export' AND nullif(i.customer_details->>'gstin', '') IS NULL
  AND NOT (i.tax_type = 'inter_state' AND coalesce(i.inr_total, i.total) > ${b2clLimit(sql`i.issued_at`)}))`;

/**
 * Set-based: the period's issued, not void, GST invoices that GSTR-1 lists one by one (B2B, B2CL,
 * exports), one row per invoice and rate, in (issued_at, id) order — one join of the month's
 * invoices with their lines (a hash join for a month of any size, not a probe per invoice).
 */
export async function listedInvoiceRates(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<InvoiceRateRow[]> {
  const { rows } = await sql<InvoiceRateRow>`
    SELECT i.id, i.number, i.issued_at, i.status, i.tax_type, i.place_of_supply, i.currency,
           coalesce(i.inr_total, i.total) AS total, i.customer_details->>'gstin' AS ctin, i.shipping_bill, l.rate_bp,
           bool_and(l.hsn_code LIKE '99%') AS service, sum(coalesce(l.inr_amount, l.amount))::bigint AS txval, sum(coalesce(l.inr_igst_amount, l.igst_amount))::bigint AS iamt,
           sum(coalesce(l.inr_cgst_amount, l.cgst_amount))::bigint AS camt, sum(coalesce(l.inr_sgst_amount, l.sgst_amount))::bigint AS samt
    FROM invoices i
    JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
    WHERE i.tenant_id = ${tenantId} AND i.entity_id = ${entityId} AND i.issued_at >= ${from} AND i.issued_at < ${to}
      AND i.number IS NOT NULL AND i.status <> 'void' AND i.tax_type <> '' AND NOT ${isB2cs}
    GROUP BY i.tenant_id, i.id, l.rate_bp
    ORDER BY i.issued_at, i.id, l.rate_bp`.execute(tx);
  return rows;
}

export type B2csRow = {
  sply_ty: 'INTRA' | 'INTER';
  pos: string | null;
  rate_bp: number;
  /** SAC lines (services): at 0 % they are exempt; goods at 0 % are nil-rated. */
  service: boolean;
  txval: number;
  iamt: number;
  camt: number;
  samt: number;
  invoices: number;
};

/** Set-based: the period's B2CS invoices summed per supply type, place of supply and rate (`invoices`: how many in all). */
export async function b2csSummary(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<B2csRow[]> {
  const { rows } = await sql<B2csRow>`
    WITH docs AS (
      SELECT i.tenant_id, i.id, i.tax_type, i.place_of_supply FROM invoices i
      WHERE i.tenant_id = ${tenantId} AND i.entity_id = ${entityId} AND i.issued_at >= ${from} AND i.issued_at < ${to}
        AND i.number IS NOT NULL AND i.status <> 'void' AND i.tax_type <> '' AND ${isB2cs}
    )
    SELECT CASE WHEN d.tax_type = 'intra_state' THEN 'INTRA' ELSE 'INTER' END AS sply_ty, d.place_of_supply AS pos, l.rate_bp,
           (l.hsn_code LIKE '99%') AS service, sum(coalesce(l.inr_amount, l.amount))::bigint AS txval, sum(coalesce(l.inr_igst_amount, l.igst_amount))::bigint AS iamt,
           sum(coalesce(l.inr_cgst_amount, l.cgst_amount))::bigint AS camt, sum(coalesce(l.inr_sgst_amount, l.sgst_amount))::bigint AS samt,
           (SELECT count(*) FROM docs)::bigint AS invoices
    FROM docs d
    JOIN invoice_lines l ON l.tenant_id = d.tenant_id AND l.invoice_id = d.id
    GROUP BY 1, 2, 3, 4
    ORDER BY 1, 2, 3, 4`.execute(tx);
  return rows;
}

export type SeriesRow = { prefix: string; first: string; last: string; total: number; cancelled: number };

/**
 * doc_issue, set-based: the period's numbered documents (voids included) per series — the
 * number's text before its trailing digits — with the first and last number by sequence.
 */
export async function documentSeries(
  tx: Tx,
  table: 'invoices' | 'credit_notes',
  tenantId: string,
  entityId: string,
  from: Date,
  to: Date,
): Promise<SeriesRow[]> {
  // A top-up of prepaid credit asks for an advance and is no tax invoice (decision 0700): its own
  // TU- series is not an invoice series of doc_issue (decision 0840).
  const notTopUp = table === 'invoices' ? sql`AND billing_reason IS DISTINCT FROM 'credit_top_up'` : sql``;
  // The sequence is the number's trailing digits; left-padded they sort as numbers (byte order).
  const { rows } = await sql<SeriesRow>`
    WITH d AS (
      SELECT number, status, issued_at, rtrim(number, '0123456789') AS prefix
      FROM ${sql.table(table)}
      WHERE tenant_id = ${tenantId} AND entity_id = ${entityId} AND issued_at >= ${from} AND issued_at < ${to} AND number IS NOT NULL ${notTopUp}
    ),
    k AS (SELECT prefix, status, issued_at, lpad(substr(number, length(prefix) + 1), 40, '0') || number AS sortkey FROM d)
    SELECT prefix, substr(min(sortkey COLLATE "C"), 41) AS first, substr(max(sortkey COLLATE "C"), 41) AS last,
           count(*)::bigint AS total, (count(*) FILTER (WHERE status = 'void'))::bigint AS cancelled
    FROM k GROUP BY prefix ORDER BY min(issued_at), prefix`.execute(tx);
  return rows;
}

/** `b2b`: supplies to registered persons (B2B, SEZ) — GSTR-1 table 12's B2B tab; else its B2C tab (B2CL, B2CS, exports). */
export type HsnRow = { b2b: boolean; hsn_code: string; rate_bp: number; qty: number; txval: number; iamt: number; camt: number; samt: number };

/** The HSN summary of the period's (not void) invoices, summed in SQL (in rupees: a foreign-currency line's INR values). */
export async function invoiceHsnSummary(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<HsnRow[]> {
  const { rows } = await sql<HsnRow>`
    SELECT (nullif(i.customer_details->>'gstin', '') IS NOT NULL AND i.tax_type <> 'export') AS b2b, l.hsn_code, l.rate_bp, sum(l.quantity)::bigint AS qty, sum(coalesce(l.inr_amount, l.amount))::bigint AS txval,
           sum(coalesce(l.inr_igst_amount, l.igst_amount))::bigint AS iamt, sum(coalesce(l.inr_cgst_amount, l.cgst_amount))::bigint AS camt,
           sum(coalesce(l.inr_sgst_amount, l.sgst_amount))::bigint AS samt
    FROM invoices i
    JOIN invoice_lines l ON l.tenant_id = i.tenant_id AND l.invoice_id = i.id
    WHERE i.tenant_id = ${tenantId} AND i.entity_id = ${entityId}
      AND i.issued_at >= ${from} AND i.issued_at < ${to} AND i.number IS NOT NULL AND i.status <> 'void' AND i.tax_type <> ''
    GROUP BY 1, l.hsn_code, l.rate_bp
    ORDER BY 1 DESC, l.hsn_code, l.rate_bp`.execute(tx);
  return rows;
}

/**
 * One credit note of the period and one HSN × rate it credits (a note's rows are consecutive):
 * the lines it credits (credit_note_lines) summed per HSN and rate, or one row with `rate_bp`
 * null for a note from before notes carried lines. Amounts in rupees: a note against a
 * foreign-currency invoice takes the same share of each line's INR values as it takes of the
 * line (the original invoice's rate). `amount` is the note's value in rupees (all its rows).
 */
export type CreditNoteRow = {
  id: string;
  number: string;
  issued_at: Date;
  status: string;
  tax_type: string;
  hsn_code: string;
  rate_bp: number | null;
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

/** share × part ÷ whole rounded half-up (as mulDivRoundHalfUp), 0 for a zero whole. */
const scaled = (value: ReturnType<typeof sql>, part: ReturnType<typeof sql>, whole: ReturnType<typeof sql>) =>
  sql`CASE WHEN ${whole} > 0 THEN round(${value}::numeric * ${part} / ${whole})::bigint ELSE 0 END`;

/** The period's credit notes (void ones included, for doc_issue), per HSN and rate, with the invoice each adjusts. */
export async function creditNotesOfPeriod(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<CreditNoteRow[]> {
  const { rows } = await sql<CreditNoteRow>`
    WITH n AS (
      SELECT c.id, c.number, c.issued_at, c.status, c.tax_type, c.hsn_code, c.subtotal, c.igst_amount, c.cgst_amount, c.sgst_amount,
             c.currency, c.invoice_id, i.number AS invoice_number, i.issued_at AS invoice_issued_at,
             coalesce(i.inr_total, i.total) AS invoice_total, i.place_of_supply, i.customer_details->>'gstin' AS ctin,
             i.inr_subtotal, i.inr_cgst_amount, i.inr_sgst_amount, i.inr_igst_amount,
             i.subtotal AS i_subtotal, i.cgst_amount AS i_cgst, i.sgst_amount AS i_sgst, i.igst_amount AS i_igst
      FROM credit_notes c
      LEFT JOIN invoices i ON i.tenant_id = c.tenant_id AND i.id = c.invoice_id
      WHERE c.tenant_id = ${tenantId} AND c.entity_id = ${entityId}
        AND c.issued_at >= ${from} AND c.issued_at < ${to} AND c.number IS NOT NULL
    ),
    parts AS (
      SELECT cl.credit_note_id AS id, cl.hsn_code, cl.rate_bp,
             sum(CASE WHEN il.inr_amount IS NULL THEN cl.subtotal ELSE ${scaled(sql`il.inr_amount`, sql`cl.subtotal`, sql`il.amount`)} END)::bigint AS subtotal,
             sum(CASE WHEN il.inr_amount IS NULL THEN cl.igst_amount ELSE ${scaled(sql`il.inr_igst_amount`, sql`cl.igst_amount`, sql`il.igst_amount`)} END)::bigint AS igst_amount,
             sum(CASE WHEN il.inr_amount IS NULL THEN cl.cgst_amount ELSE ${scaled(sql`il.inr_cgst_amount`, sql`cl.cgst_amount`, sql`il.cgst_amount`)} END)::bigint AS cgst_amount,
             sum(CASE WHEN il.inr_amount IS NULL THEN cl.sgst_amount ELSE ${scaled(sql`il.inr_sgst_amount`, sql`cl.sgst_amount`, sql`il.sgst_amount`)} END)::bigint AS sgst_amount
      FROM credit_note_lines cl
      JOIN invoice_lines il ON il.tenant_id = cl.tenant_id AND il.id = cl.invoice_line_id
      WHERE cl.tenant_id = ${tenantId} AND cl.credit_note_id IN (SELECT id FROM n)
      GROUP BY cl.credit_note_id, cl.hsn_code, cl.rate_bp
    ),
    rows AS (
      SELECT n.id, p.hsn_code, p.rate_bp, p.subtotal, p.igst_amount, p.cgst_amount, p.sgst_amount FROM n JOIN parts p ON p.id = n.id
      UNION ALL
      SELECT n.id, n.hsn_code, NULL::integer,
             CASE WHEN n.inr_subtotal IS NULL THEN n.subtotal ELSE ${scaled(sql`n.inr_subtotal`, sql`n.subtotal`, sql`n.i_subtotal`)} END,
             CASE WHEN n.inr_subtotal IS NULL THEN n.igst_amount ELSE ${scaled(sql`n.inr_igst_amount`, sql`n.igst_amount`, sql`n.i_igst`)} END,
             CASE WHEN n.inr_subtotal IS NULL THEN n.cgst_amount ELSE ${scaled(sql`n.inr_cgst_amount`, sql`n.cgst_amount`, sql`n.i_cgst`)} END,
             CASE WHEN n.inr_subtotal IS NULL THEN n.sgst_amount ELSE ${scaled(sql`n.inr_sgst_amount`, sql`n.sgst_amount`, sql`n.i_sgst`)} END
      FROM n WHERE NOT EXISTS (SELECT 1 FROM parts p WHERE p.id = n.id)
    )
    SELECT n.id, n.number, n.issued_at, n.status, n.tax_type, r.hsn_code, r.rate_bp, r.subtotal::bigint AS subtotal,
           r.igst_amount::bigint AS igst_amount, r.cgst_amount::bigint AS cgst_amount, r.sgst_amount::bigint AS sgst_amount,
           (sum(r.subtotal + r.igst_amount + r.cgst_amount + r.sgst_amount) OVER (PARTITION BY n.id))::bigint AS amount,
           n.currency, n.invoice_number, n.invoice_issued_at, n.invoice_total, n.place_of_supply, n.ctin
    FROM n JOIN rows r ON r.id = n.id
    ORDER BY n.issued_at, n.id, r.rate_bp, r.hsn_code`.execute(tx);
  return rows.map((r) => ({
    ...r,
    subtotal: Number(r.subtotal),
    igst_amount: Number(r.igst_amount),
    cgst_amount: Number(r.cgst_amount),
    sgst_amount: Number(r.sgst_amount),
    amount: Number(r.amount),
    invoice_total: r.invoice_total === null ? null : Number(r.invoice_total),
  }));
}
