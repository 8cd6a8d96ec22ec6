import { errors } from '../../platform/errors.js';
import { splitTaxProRata, type TaxComponents } from '../tax/index.js';

/** What an invoice line has left to credit: its amounts less what live notes already credited. */
export type LineRemaining = {
  invoice_line_id: string;
  position: number;
  hsn_code: string;
  rate_bp: number;
  subtotal: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  total: number;
};

export type CreditedLine = { line: LineRemaining; split: TaxComponents };

/**
 * Splits `amount` (gross) over the lines in proportion to what each has left to credit: each
 * line's share is rounded down, and the units left over go one each to the lines with the largest
 * remainders (never beyond what a line has left), so the shares add up to `amount` exactly.
 * The caller has checked that `amount` ≤ the lines' total left.
 */
export function allocateProRata(lines: LineRemaining[], amount: number): { line: LineRemaining; amount: number }[] {
  const open = lines.filter((l) => l.total > 0);
  const left = open.reduce((sum, l) => sum + BigInt(l.total), 0n);
  if (left === 0n || BigInt(amount) > left) throw new RangeError(`cannot spread ${amount} over lines with ${left} left`);
  const shares = open.map((line) => {
    const exact = BigInt(amount) * BigInt(line.total);
    return { line, amount: Number(exact / left), rest: exact % left };
  });
  let short = amount - shares.reduce((sum, s) => sum + s.amount, 0);
  const byRest = [...shares].sort((a, b) => (a.rest === b.rest ? a.line.position - b.line.position : a.rest > b.rest ? -1 : 1));
  for (const share of byRest) {
    if (short === 0) break;
    if (share.amount < share.line.total) {
      share.amount += 1;
      short -= 1;
    }
  }
  return shares.filter((s) => s.amount > 0).map(({ line, amount: a }) => ({ line, amount: a }));
}

/** Each line's share split at that line's own rate, against what the line has left. */
export function splitLines(shares: { line: LineRemaining; amount: number }[]): CreditedLine[] {
  return shares.map(({ line, amount }) => ({ line, split: splitTaxProRata(line, amount) }));
}

/**
 * The lines a request names (`lines: [{ invoice_line_id, amount }]`), checked against the
 * invoice: every line must be the invoice's, named once, and credit no more than it has left.
 */
export function namedShares(lines: LineRemaining[], requested: { invoice_line_id: string; amount: number }[]): { line: LineRemaining; amount: number }[] {
  const byId = new Map(lines.map((l) => [l.invoice_line_id, l]));
  const seen = new Set<string>();
  return requested.map((r, i) => {
    const line = byId.get(r.invoice_line_id);
    if (!line) throw errors.invalidField(`lines.${i}.invoice_line_id`, 'not a line of the invoice');
    if (seen.has(r.invoice_line_id)) throw errors.invalidField(`lines.${i}.invoice_line_id`, 'the line is named twice');
    seen.add(r.invoice_line_id);
    if (r.amount > line.total) {
      throw errors.conflict(`credit of ${r.amount} on line ${line.position} exceeds what remains creditable on it (${line.total})`, 'amount_exceeds_line');
    }
    return { line, amount: r.amount };
  });
}

/** The note's totals: the sum of its lines. */
export function sumLines(lines: CreditedLine[]): TaxComponents {
  const sum = (key: keyof TaxComponents) => lines.reduce((total, l) => total + l.split[key], 0);
  return {
    subtotal: sum('subtotal'),
    cgst_amount: sum('cgst_amount'),
    sgst_amount: sum('sgst_amount'),
    igst_amount: sum('igst_amount'),
    tax_amount: sum('tax_amount'),
    total: sum('total'),
  };
}
