import { convertMinorUnits, mulDivRoundHalfUp } from '../../platform/money.js';
import { splitTaxProRata, type TaxRegime } from '../tax/index.js';

export type AdvanceTax = { subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number; tax_amount: number };

/**
 * The GST contained in a tax-inclusive advance of `gross` at `rateBp` under `regime`
 * (docs/decisions/0280). The taxable value is gross × 10000 ÷ (10000 + rate), rounded half-up;
 * CGST and SGST are each round(value × rate ÷ 20000) (equal by construction, as on invoices),
 * IGST round(value × rate ÷ 10000); the taxable value is then what is left, so value + tax = gross
 * exactly. No GST: an unregistered supplier (tax_type ''), goods (rate 0: Notification
 * 66/2017-Central Tax), and a zero-rated supply under LUT.
 * Example: 11,800.00 at 18 % intra-state → value 10,000.00, CGST 900.00, SGST 900.00.
 */
export function taxOfAdvance(gross: number, rateBp: number, regime: TaxRegime): AdvanceTax {
  const zeroRated = (regime.tax_type === 'export' || regime.tax_type === 'sez') && regime.lut;
  if (regime.tax_type === '' || rateBp <= 0 || zeroRated) return { subtotal: gross, cgst_amount: 0, sgst_amount: 0, igst_amount: 0, tax_amount: 0 };
  const value = mulDivRoundHalfUp(gross, 10_000, 10_000 + rateBp);
  let cgst = 0;
  let igst = 0;
  if (regime.tax_type === 'intra_state') cgst = mulDivRoundHalfUp(value, rateBp, 20_000);
  else igst = mulDivRoundHalfUp(value, rateBp, 10_000);
  const tax = 2 * cgst + igst;
  return { subtotal: gross - tax, cgst_amount: cgst, sgst_amount: cgst, igst_amount: igst, tax_amount: tax };
}

/**
 * The GST on a taxable `value` at `rateBp` under `regime`, each head rounded half-up as on an
 * invoice line (CGST and SGST each round(value × rate ÷ 20000), IGST round(value × rate ÷ 10000)):
 * what a top-up of prepaid credit asks on top of the credit bought (decision 0700). taxOfAdvance of
 * value + this tax finds the same split back (the rounding of the value is within half a unit).
 * Example: 1,000.00 at 18 % intra-state → CGST 90.00, SGST 90.00, gross 1,180.00.
 */
export function taxOfValue(value: number, rateBp: number, regime: TaxRegime): AdvanceTax {
  const zeroRated = (regime.tax_type === 'export' || regime.tax_type === 'sez') && regime.lut;
  if (regime.tax_type === '' || rateBp <= 0 || zeroRated) return { subtotal: value, cgst_amount: 0, sgst_amount: 0, igst_amount: 0, tax_amount: 0 };
  const cgst = regime.tax_type === 'intra_state' ? mulDivRoundHalfUp(value, rateBp, 20_000) : 0;
  const igst = regime.tax_type === 'intra_state' ? 0 : mulDivRoundHalfUp(value, rateBp, 10_000);
  return { subtotal: value, cgst_amount: cgst, sgst_amount: cgst, igst_amount: igst, tax_amount: 2 * cgst + igst };
}

/**
 * The part of a top-up's split that one payment received carries: each head is the difference of
 * its cumulative shares of the received gross after and before the payment (half-up), so the
 * vouchers of a top-up paid in parts add up to exactly its split — the last part takes what is
 * left. Example: 1,180.00 (value 1,000.00, CGST 90.00, SGST 90.00) paid 500.00 then 680.00 →
 * 500.00 (CGST 38.14, SGST 38.14, value 423.72), then 680.00 (CGST 51.86, SGST 51.86, value 576.28).
 */
export function partOfPrepayment(whole: AdvanceTax, gross: number, received: { before: number; after: number }): AdvanceTax {
  const cumulative = (x: number, at: number) => (at >= gross ? x : mulDivRoundHalfUp(x, at, gross));
  const head = (x: number) => cumulative(x, received.after) - cumulative(x, received.before);
  const cgst = head(whole.cgst_amount);
  const sgst = head(whole.sgst_amount);
  const igst = head(whole.igst_amount);
  const tax = cgst + sgst + igst;
  return { subtotal: received.after - received.before - tax, cgst_amount: cgst, sgst_amount: sgst, igst_amount: igst, tax_amount: tax };
}

/**
 * The share of an advance's open value and tax that `amount` of its balance carries: pro rata
 * (splitTaxProRata), and all of it when the amount is the whole balance — so the adjustments and
 * refunds of an advance add up to its voucher's tax exactly, never more.
 */
export function shareOfOpen(
  open: { balance: number; open_subtotal: number; open_cgst: number; open_sgst: number; open_igst: number },
  amount: number,
): AdvanceTax {
  if (amount === open.balance) {
    return {
      subtotal: open.open_subtotal,
      cgst_amount: open.open_cgst,
      sgst_amount: open.open_sgst,
      igst_amount: open.open_igst,
      tax_amount: open.open_cgst + open.open_sgst + open.open_igst,
    };
  }
  const part = splitTaxProRata(
    { subtotal: open.open_subtotal, cgst_amount: open.open_cgst, sgst_amount: open.open_sgst, igst_amount: open.open_igst, total: open.balance },
    amount,
  );
  return { subtotal: part.subtotal, cgst_amount: part.cgst_amount, sgst_amount: part.sgst_amount, igst_amount: part.igst_amount, tax_amount: part.tax_amount };
}

/** The rupee values of an advance or of one use of it (CGST Rules, rule 34). */
export type AdvanceInrPart = { inr_amount: number; inr_subtotal: number; inr_cgst_amount: number; inr_sgst_amount: number; inr_igst_amount: number };

/**
 * The rupee values of a foreign-currency advance's receipt voucher at `rate` (INR per one unit,
 * the rate of the date of receipt: rule 34(2) with CGST Act s.13(2)). Each tax is converted
 * (SGST equal to CGST, as in the advance's currency), the gross too, and the taxable value is what
 * is left, so value + tax = gross in rupees as in the advance's currency.
 * Example: USD 118.00 export without LUT (value 100.00, IGST 18.00) at 83.25 → ₹9,823.50, IGST
 * ₹1,498.50, value ₹8,325.00.
 */
export function inrOfAdvance(gross: number, tax: AdvanceTax, currency: string, rate: string): AdvanceInrPart {
  const inr = (amount: number) => convertMinorUnits(amount, currency, 'INR', rate);
  const amount = inr(gross);
  const cgst = inr(tax.cgst_amount);
  const igst = inr(tax.igst_amount);
  return { inr_amount: amount, inr_subtotal: amount - 2 * cgst - igst, inr_cgst_amount: cgst, inr_sgst_amount: cgst, inr_igst_amount: igst };
}

/**
 * The rupee share of one use of an advance: each rupee value open takes the share the use takes of
 * the same value in the advance's currency (so never more than is open), and the use that empties
 * the advance takes all the rupees left — its adjustments and refunds add up to the voucher's
 * rupee tax exactly, as they do in its currency.
 */
export function inrShareOfOpen(
  open: { balance: number; open_subtotal: number; open_cgst: number; open_sgst: number; open_igst: number },
  openInr: { subtotal: number; cgst: number; sgst: number; igst: number },
  amount: number,
  part: AdvanceTax,
): AdvanceInrPart {
  const take = (inr: number, piece: number, whole: number) => (amount === open.balance ? inr : whole > 0 ? mulDivRoundHalfUp(inr, piece, whole) : 0);
  const subtotal = take(openInr.subtotal, part.subtotal, open.open_subtotal);
  const cgst = take(openInr.cgst, part.cgst_amount, open.open_cgst);
  const sgst = take(openInr.sgst, part.sgst_amount, open.open_sgst);
  const igst = take(openInr.igst, part.igst_amount, open.open_igst);
  return { inr_amount: subtotal + cgst + sgst + igst, inr_subtotal: subtotal, inr_cgst_amount: cgst, inr_sgst_amount: sgst, inr_igst_amount: igst };
}
