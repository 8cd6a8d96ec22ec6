import type { AppliesTo } from './credits.tables.js';

/** What a line is, for `applies_to`: a plan's recurring fee, a metered (usage) price, or a line with no price. */
export type PriceType = 'fixed' | 'usage' | 'one_off';

export type GrantForDraw = {
  id: string;
  priority: number;
  expires_at: Date | null;
  created_at: Date;
  remaining: number;
  applies_to: AppliesTo | null;
};

export type LineForDraw = { key: string; amount: number; plan_id: string | null; price_type: PriceType };

/** The order invoices draw grants in: priority (lower first), then soonest expiry (none last), then oldest. */
export function drawOrder(a: GrantForDraw, b: GrantForDraw): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  const ea = a.expires_at?.getTime() ?? Number.POSITIVE_INFINITY;
  const eb = b.expires_at?.getTime() ?? Number.POSITIVE_INFINITY;
  if (ea !== eb) return ea < eb ? -1 : 1;
  if (a.created_at.getTime() !== b.created_at.getTime()) return a.created_at.getTime() - b.created_at.getTime();
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** Whether a grant may be spent on a line: every list `applies_to` gives must hold (none: any line). */
export function grantAppliesTo(grant: Pick<GrantForDraw, 'applies_to'>, line: Pick<LineForDraw, 'plan_id' | 'price_type'>): boolean {
  const rule = grant.applies_to;
  if (!rule) return true;
  if (rule.plan_ids && rule.plan_ids.length > 0 && (line.plan_id === null || !rule.plan_ids.includes(line.plan_id))) return false;
  if (rule.price_types && rule.price_types.length > 0 && !rule.price_types.includes(line.price_type)) return false;
  return true;
}

export type PromotionalAllocation = {
  /** Discount per line key (only lines that take some). */
  lineDiscounts: Map<string, number>;
  /** Amount taken per grant id, in draw order. */
  draws: { grantId: string; amount: number }[];
};

/**
 * Spends promotional grants on one invoice's lines before GST: grants in draw order, each filling
 * the lines it applies to one after another, never past a line's amount (a taxable value never
 * goes below zero) nor past the grant's balance. Integer minor units, no rounding.
 */
export function allocatePromotional(lines: LineForDraw[], grants: GrantForDraw[]): PromotionalAllocation {
  const left = new Map(lines.map((l) => [l.key, Math.max(0, l.amount)]));
  const lineDiscounts = new Map<string, number>();
  const draws: { grantId: string; amount: number }[] = [];
  for (const grant of [...grants].sort(drawOrder)) {
    let available = grant.remaining;
    let taken = 0;
    for (const line of lines) {
      if (available <= 0) break;
      if (!grantAppliesTo(grant, line)) continue;
      const room = left.get(line.key)!;
      const take = Math.min(room, available);
      if (take <= 0) continue;
      left.set(line.key, room - take);
      lineDiscounts.set(line.key, (lineDiscounts.get(line.key) ?? 0) + take);
      available -= take;
      taken += take;
    }
    if (taken > 0) draws.push({ grantId: grant.id, amount: taken });
  }
  return { lineDiscounts, draws };
}

export type GrantTax = { amount: number; remaining: number; cgst_amount: number; sgst_amount: number; igst_amount: number };
export type TaxShare = { cgst_amount: number; sgst_amount: number; igst_amount: number; tax_amount: number };

/** round(x × part / whole), half up, exact for any safe integers. */
function share(x: number, part: number, whole: number): number {
  if (part === 0 || x === 0) return 0;
  const n = BigInt(x) * BigInt(part) * 2n + BigInt(whole);
  return Number(n / (2n * BigInt(whole)));
}

/**
 * The top-up GST that drawing `d` more from a paid grant carries: the difference of the
 * cumulative shares after and before the draw, so the draws of a whole grant add up to exactly
 * the tax its top-up invoice charged, however it is split.
 */
export function taxShareOfDraw(grant: GrantTax, d: number): TaxShare {
  const before = grant.amount - grant.remaining;
  const after = before + d;
  const part = (tax: number) => share(after, tax, grant.amount) - share(before, tax, grant.amount);
  const cgst = part(grant.cgst_amount);
  const sgst = part(grant.sgst_amount);
  const igst = part(grant.igst_amount);
  return { cgst_amount: cgst, sgst_amount: sgst, igst_amount: igst, tax_amount: cgst + sgst + igst };
}

/**
 * The largest draw from a paid grant whose value plus its GST share settles at most `cap` of an
 * invoice: d ≤ remaining and d + tax(d) ≤ cap. Starts from cap × amount / (amount + tax), then
 * steps down the one or two units rounding may have put over.
 */
export function paidDrawFor(grant: GrantTax, cap: number): { amount: number; tax: TaxShare } {
  const totalTax = grant.cgst_amount + grant.sgst_amount + grant.igst_amount;
  let d = Math.min(grant.remaining, Number((BigInt(Math.max(0, cap)) * BigInt(grant.amount)) / BigInt(grant.amount + totalTax)));
  let tax = taxShareOfDraw(grant, d);
  while (d > 0 && d + tax.tax_amount > cap) {
    d -= 1;
    tax = taxShareOfDraw(grant, d);
  }
  return { amount: d, tax };
}
