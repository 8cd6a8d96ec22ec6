import { mulDivRoundHalfUp, sumMinorUnits } from '../../platform/money.js';

/**
 * Splits a quote-level discount over its lines in proportion to their amounts, so the invoice
 * that acceptance creates can carry it (invoice lines cannot be negative) and GST is charged on
 * the discounted value. Each share is rounded half-up; the few paise the rounding leaves over or
 * short are then moved one at a time, largest line first, between lines that have room. The
 * shares always sum to `discount` exactly and no share exceeds its line.
 */
export function allocateDiscount(amounts: readonly number[], discount: number): number[] {
  const subtotal = sumMinorUnits(amounts);
  if (discount < 0 || discount > subtotal) throw new RangeError(`discount ${discount} must be between 0 and the subtotal ${subtotal}`);
  if (discount === 0 || subtotal === 0) return amounts.map(() => 0);
  const shares = amounts.map((a) => mulDivRoundHalfUp(a, discount, subtotal));
  let residual = discount - sumMinorUnits(shares);
  const bySize = amounts.map((_, i) => i).sort((a, b) => amounts[b]! - amounts[a]! || a - b);
  while (residual !== 0) {
    for (const i of bySize) {
      if (residual > 0 && shares[i]! < amounts[i]!) {
        shares[i]! += 1;
        residual -= 1;
      } else if (residual < 0 && shares[i]! > 0) {
        shares[i]! -= 1;
        residual += 1;
      }
      if (residual === 0) break;
    }
  }
  return shares;
}
