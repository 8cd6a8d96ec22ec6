import { sql } from 'kysely';
import type { Tx } from '../../platform/db/schema.js';
import type { SeriesRow } from './gst-returns.repository.js';
import type { Gstr1Table11Row } from './gst-returns.schemas.js';
import { rupees } from './gstr1.js';

/**
 * GSTR-1 table 11 (docs/decisions/0280): tax on advances received (11A, JSON `at`) and advances
 * adjusted (11B, JSON `txpd`), per place of supply, supply type and rate, `ad_amt` being the
 * advance's taxable value.
 * - 11A: the taxable advances whose receipt vouchers are dated in the month (an advance that paid
 *   no GST — an entity without a GSTIN, goods, a zero-rated supply under LUT — is not listed).
 * - 11B: the part of earlier months' advances applied to an invoice this month (the invoice itself
 *   is in table 4/5/7 with its full tax), and the part refunded with a refund voucher this month
 *   (rule 51: no supply was made, so the tax paid on it comes off).
 * - Amounts are rupees: a foreign-currency advance's values at the rate of its date of receipt
 *   (CGST Rules, rule 34(2); docs/decisions/0400), its uses at their rupee shares.
 * - An advance received and applied or refunded in the same month is not reported for that part
 *   (the GSTN's instructions for table 11: only what remains unadjusted at the end of the month
 *   goes into 11A), so its 11A row is net of those uses.
 */
export type AdvanceSections = { at: Table11Row[]; txpd: Table11Row[] };
export type Table11Row = Gstr1Table11Row;

type Part = { pos: string | null; tax_type: string; rate_bp: number; subtotal: number; cgst: number; sgst: number; igst: number };
type Totals = { ad_amt: number; iamt: number; camt: number; samt: number };

/** Receipts of the month, and uses (applied, refunded) of the month with whether the advance is of the month too. */
async function partsOfMonth(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date) {
  const receipts = await sql<Part>`
    SELECT place_of_supply AS pos, tax_type, rate_bp, coalesce(inr_subtotal, subtotal)::bigint AS subtotal, coalesce(inr_cgst_amount, cgst_amount)::bigint AS cgst,
           coalesce(inr_sgst_amount, sgst_amount)::bigint AS sgst, coalesce(inr_igst_amount, igst_amount)::bigint AS igst
    FROM customer_advances
    WHERE tenant_id = ${tenantId} AND entity_id = ${entityId} AND tax_amount > 0
      AND received_at >= ${from} AND received_at < ${to}`.execute(tx);
  const uses = await sql<Part & { same_month: boolean }>`
    SELECT a.place_of_supply AS pos, a.tax_type, a.rate_bp, coalesce(m.inr_subtotal, m.subtotal)::bigint AS subtotal,
           coalesce(m.inr_cgst_amount, m.cgst_amount)::bigint AS cgst, coalesce(m.inr_sgst_amount, m.sgst_amount)::bigint AS sgst,
           coalesce(m.inr_igst_amount, m.igst_amount)::bigint AS igst,
           (a.received_at >= ${from}) AS same_month
    FROM advance_movements m
    JOIN customer_advances a ON a.tenant_id = m.tenant_id AND a.id = m.advance_id
    WHERE m.tenant_id = ${tenantId} AND a.entity_id = ${entityId} AND a.tax_amount > 0
      AND m.created_at >= ${from} AND m.created_at < ${to}`.execute(tx);
  return { receipts: receipts.rows, uses: uses.rows };
}

function keyOf(p: Part): string {
  return `${p.pos ?? '96'}|${p.tax_type === 'intra_state' ? 'INTRA' : 'INTER'}|${p.rate_bp}`;
}

function add(map: Map<string, Totals>, p: Part, sign: 1 | -1): void {
  const t = map.get(keyOf(p)) ?? { ad_amt: 0, iamt: 0, camt: 0, samt: 0 };
  t.ad_amt += sign * Number(p.subtotal);
  t.iamt += sign * Number(p.igst);
  t.camt += sign * Number(p.cgst);
  t.samt += sign * Number(p.sgst);
  map.set(keyOf(p), t);
}

function rows(map: Map<string, Totals>): Table11Row[] {
  const byPlace = new Map<string, Table11Row>();
  for (const [key, t] of [...map].sort(([a], [b]) => a.localeCompare(b))) {
    if (t.ad_amt === 0 && t.iamt === 0 && t.camt === 0 && t.samt === 0) continue;
    const [pos, sply, rate] = key.split('|') as [string, 'INTRA' | 'INTER', string];
    const row = byPlace.get(`${pos}|${sply}`) ?? { pos, sply_ty: sply, itms: [] };
    row.itms.push({ rt: Number(rate) / 100, ad_amt: rupees(t.ad_amt), iamt: rupees(t.iamt), camt: rupees(t.camt), samt: rupees(t.samt), csamt: 0 });
    byPlace.set(`${pos}|${sply}`, row);
  }
  return [...byPlace.values()];
}

/** Tables 11A and 11B of one entity's month ([from, to) in its time zone). */
export async function advanceSections(tx: Tx, tenantId: string, entityId: string, from: Date, to: Date): Promise<AdvanceSections> {
  const { receipts, uses } = await partsOfMonth(tx, tenantId, entityId, from, to);
  const received = new Map<string, Totals>();
  const adjusted = new Map<string, Totals>();
  for (const r of receipts) add(received, r, 1);
  for (const u of uses) {
    if (u.same_month) add(received, u, -1);
    else add(adjusted, u, 1);
  }
  return { at: rows(received), txpd: rows(adjusted) };
}

/** What table 11 adds to GSTR-3B 3.1(a) (tax on advances, net of adjustments), in minor units. */
export function advancesNetOfAdjustments(sections: AdvanceSections): Totals {
  const sum = (list: Table11Row[], k: 'ad_amt' | 'iamt' | 'camt' | 'samt') =>
    list.reduce((a, r) => a + r.itms.reduce((b, i) => b + Math.round(i[k] * 100), 0), 0);
  const net = (k: 'ad_amt' | 'iamt' | 'camt' | 'samt') => sum(sections.at, k) - sum(sections.txpd, k);
  return { ad_amt: net('ad_amt'), iamt: net('iamt'), camt: net('camt'), samt: net('samt') };
}

/**
 * GSTR-1 table 13 (`doc_issue`), rows 6 and 8: the month's receipt vouchers (rule 50: every
 * advance's, taxed or not, since the series is one) and refund vouchers (rule 51) per series, with
 * the first and last number by sequence. A voucher is never cancelled (an advance is refunded with
 * a refund voucher, not voided), so `cancelled` is 0.
 */
export async function voucherSeries(tx: Tx, kind: 'receipt' | 'refund', tenantId: string, entityId: string, from: Date, to: Date): Promise<SeriesRow[]> {
  const documents =
    kind === 'receipt'
      ? sql`SELECT number, received_at AS issued_at FROM customer_advances
            WHERE tenant_id = ${tenantId} AND entity_id = ${entityId} AND received_at >= ${from} AND received_at < ${to}`
      : sql`SELECT m.number, m.created_at AS issued_at FROM advance_movements m
            JOIN customer_advances a ON a.tenant_id = m.tenant_id AND a.id = m.advance_id
            WHERE m.tenant_id = ${tenantId} AND a.entity_id = ${entityId} AND m.kind = 'refunded' AND m.number IS NOT NULL
              AND m.created_at >= ${from} AND m.created_at < ${to}`;
  // The sequence is the number's trailing digits; left-padded they sort as numbers (byte order).
  const { rows } = await sql<SeriesRow>`
    WITH d AS (SELECT number, issued_at, rtrim(number, '0123456789') AS prefix FROM (${documents}) v),
    k AS (SELECT prefix, issued_at, lpad(substr(number, length(prefix) + 1), 40, '0') || number AS sortkey FROM d)
    SELECT prefix, substr(min(sortkey COLLATE "C"), 41) AS first, substr(max(sortkey COLLATE "C"), 41) AS last,
           count(*)::bigint AS total, 0::bigint AS cancelled
    FROM k GROUP BY prefix ORDER BY min(issued_at), prefix`.execute(tx);
  return rows;
}
