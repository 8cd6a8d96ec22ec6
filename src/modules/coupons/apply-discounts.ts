/**
 * Discount allocation, pure: what each coupon takes off each line, before GST.
 *
 * A discount shown on the invoice reduces the value of supply (CGST Act s.15(3)(a)), so GST is
 * computed on each line's net amount. The allocation is per line so that every line (and so every
 * HSN/SAC code and rate) carries its own net taxable value:
 * - percent_off: each eligible line loses round-half-up(remaining × percent), where remaining is
 *   what earlier discounts left of the line;
 * - amount_off: the amount (capped at what the eligible lines have left) is spread over them in
 *   proportion to what they have left, by largest remainder, so the parts sum to it exactly.
 * A line is eligible when the coupon names no plans or names the line's plan. Discounts apply in
 * the order given. No line ever goes below zero.
 */

export type DiscountableLine = { quantity: number; unit_amount: number; plan_id?: string | null };

export type DiscountRule = {
  /** Hundredths of a percent (2500 = 25 %). */
  percent_off_bp?: number | null;
  amount_off?: number | null;
  /** Empty: every line. */
  plan_ids?: readonly string[];
};

export type DiscountAllocation = {
  /** Per line, in line order: the sum of every discount on it. */
  lineDiscounts: number[];
  /** Per discount, in discount order: what it took off the invoice. */
  discountTotals: number[];
  /** Per discount, per line. */
  byDiscount: number[][];
};

function halfUpShare(amount: number, numerator: number, denominator: number): number {
  // amount × numerator ÷ denominator, half-up, exact for the integer sizes an invoice carries.
  const product = BigInt(amount) * BigInt(numerator);
  const d = BigInt(denominator);
  return Number((product * 2n + d) / (2n * d));
}

export function applyDiscounts(lines: readonly DiscountableLine[], discounts: readonly DiscountRule[]): DiscountAllocation {
  const remaining = lines.map((l) => l.quantity * l.unit_amount);
  const lineDiscounts = lines.map(() => 0);
  const byDiscount: number[][] = [];
  const discountTotals: number[] = [];
  for (const discount of discounts) {
    const plans = discount.plan_ids ?? [];
    const eligible = lines.map((l) => plans.length === 0 || (l.plan_id != null && plans.includes(l.plan_id)));
    const parts = lines.map(() => 0);
    if (discount.percent_off_bp != null) {
      for (const [i, ok] of eligible.entries()) {
        if (ok) parts[i] = Math.min(remaining[i]!, halfUpShare(remaining[i]!, discount.percent_off_bp, 10_000));
      }
    } else if (discount.amount_off != null) {
      const base = eligible.reduce((sum, ok, i) => sum + (ok ? remaining[i]! : 0), 0);
      const take = Math.min(discount.amount_off, base);
      if (take > 0) {
        // Floor shares, then the leftover minor units to the largest remainders (ties: first line).
        const rems: { i: number; rem: bigint }[] = [];
        let given = 0;
        for (const [i, ok] of eligible.entries()) {
          if (!ok || remaining[i] === 0) continue;
          const product = BigInt(take) * BigInt(remaining[i]!);
          parts[i] = Number(product / BigInt(base));
          rems.push({ i, rem: product % BigInt(base) });
          given += parts[i]!;
        }
        rems.sort((a, b) => (a.rem === b.rem ? a.i - b.i : a.rem > b.rem ? -1 : 1));
        for (let k = 0; given < take; k++, given++) parts[rems[k % rems.length]!.i]! += 1;
      }
    }
    for (const [i, part] of parts.entries()) {
      remaining[i]! -= part;
      lineDiscounts[i]! += part;
    }
    byDiscount.push(parts);
    discountTotals.push(parts.reduce((a, b) => a + b, 0));
  }
  return { lineDiscounts, discountTotals, byDiscount };
}
