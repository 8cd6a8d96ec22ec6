/**
 * Price maths (DESIGN §13), pure: what a quantity costs under a price. Integers in, integers out;
 * an amount beyond Number.MAX_SAFE_INTEGER throws rather than rounds.
 *
 * - per unit: quantity × amount; with `package_size`, the quantity is first rounded UP to whole
 *   packages and `amount` is the price of one package.
 * - graduated tiers: each tier prices the units that fall inside it; its flat amount is added
 *   when at least one unit falls inside it.
 * - volume tiers: the tier the whole quantity falls in prices every unit, plus its flat amount.
 * - a quantity of 0 costs 0 under every scheme (no tier is entered).
 */

export type Tier = { up_to: number | null; unit_amount: number; flat_amount?: number | null };
export type TiersMode = 'graduated' | 'volume';

export type PricingScheme = {
  amount: number;
  tiers_mode?: TiersMode | null;
  tiers?: Tier[] | null;
  package_size?: number | null;
};

/** One priced part of a quantity: a tier's share (or the whole quantity at the unit price). */
export type PricedPart = { from: number; to: number | null; quantity: number; unit_amount: number; flat_amount: number; amount: number };

export type PricedQuantity = { quantity: number; amount: number; parts: PricedPart[] };

function safe(value: number): number {
  if (!Number.isSafeInteger(value)) throw new RangeError(`amount ${value} is beyond the largest safe integer`);
  return value;
}

/** Tier rules: at least one tier, up_to strictly ascending positive integers, only the last one unbounded (null). */
export function tierProblems(tiers: Tier[]): string[] {
  const problems: string[] = [];
  if (tiers.length === 0) problems.push('at least one tier is required');
  tiers.forEach((tier, i) => {
    const last = i === tiers.length - 1;
    if (tier.up_to === null && !last) problems.push(`tiers.${i}.up_to: only the last tier may be unbounded (null)`);
    if (tier.up_to !== null && last) problems.push(`tiers.${i}.up_to: the last tier must be unbounded (up_to: null)`);
    if (tier.up_to !== null && (!Number.isSafeInteger(tier.up_to) || tier.up_to < 1)) problems.push(`tiers.${i}.up_to: must be a positive integer`);
    const previous = i > 0 ? tiers[i - 1]!.up_to : 0;
    if (tier.up_to !== null && previous !== null && tier.up_to <= previous) {
      problems.push(`tiers.${i}.up_to: tiers must be ascending and not overlap (${tier.up_to} after ${previous})`);
    }
  });
  return problems;
}

function graduated(tiers: Tier[], quantity: number): PricedQuantity {
  const parts: PricedPart[] = [];
  let from = 0;
  let amount = 0;
  for (const tier of tiers) {
    if (quantity <= from) break;
    const upper = tier.up_to === null ? quantity : Math.min(quantity, tier.up_to);
    const units = upper - from;
    const flat = tier.flat_amount ?? 0;
    const partAmount = safe(safe(units * tier.unit_amount) + flat);
    parts.push({ from: from + 1, to: tier.up_to, quantity: units, unit_amount: tier.unit_amount, flat_amount: flat, amount: partAmount });
    amount = safe(amount + partAmount);
    if (tier.up_to === null) break;
    from = tier.up_to;
  }
  return { quantity, amount, parts };
}

function volume(tiers: Tier[], quantity: number): PricedQuantity {
  if (quantity === 0) return { quantity, amount: 0, parts: [] };
  let from = 0;
  for (const tier of tiers) {
    if (tier.up_to === null || quantity <= tier.up_to) {
      const flat = tier.flat_amount ?? 0;
      const amount = safe(safe(quantity * tier.unit_amount) + flat);
      return { quantity, amount, parts: [{ from: from + 1, to: tier.up_to, quantity, unit_amount: tier.unit_amount, flat_amount: flat, amount }] };
    }
    from = tier.up_to;
  }
  throw new RangeError(`quantity ${quantity} is above the last tier (the last tier must be unbounded)`);
}

/** What `quantity` (a non-negative integer) costs under `price`. */
export function priceQuantity(price: PricingScheme, quantity: number): PricedQuantity {
  if (!Number.isSafeInteger(quantity) || quantity < 0) throw new RangeError(`quantity must be a non-negative integer, not ${quantity}`);
  if (price.tiers && price.tiers.length > 0)
    return (price.tiers_mode ?? 'graduated') === 'volume' ? volume(price.tiers, quantity) : graduated(price.tiers, quantity);
  const size = price.package_size ?? 1;
  const units = Math.ceil(quantity / size);
  const amount = safe(units * price.amount);
  return { quantity, amount, parts: quantity === 0 ? [] : [{ from: 1, to: null, quantity: units, unit_amount: price.amount, flat_amount: 0, amount }] };
}

/** Whether the price is a plain per-unit price: amount × quantity, no tiers and no packages. */
export function isSimpleUnitPrice(price: PricingScheme): boolean {
  return !(price.tiers && price.tiers.length > 0) && (price.package_size ?? 1) === 1;
}

const money = (minor: number) => (minor / 100).toFixed(2);

/** How a priced quantity reads on an invoice line: "1,234 units: 1–1,000 at 0.00; 1,001–1,234 at 0.50 + 10.00 flat". */
export function describePricing(price: PricingScheme, priced: PricedQuantity, unitName = 'units'): string {
  const n = (v: number) => v.toLocaleString('en-IN');
  const head = `${n(priced.quantity)} ${unitName}`;
  if (priced.parts.length === 0) return head;
  if (price.tiers && price.tiers.length > 0) {
    const mode = (price.tiers_mode ?? 'graduated') === 'volume' ? 'volume' : 'graduated';
    const parts = priced.parts.map((p) => {
      const range = mode === 'volume' ? `tier ${n(p.from)}–${p.to === null ? '∞' : n(p.to)}` : `${n(p.from)}–${n(p.from + p.quantity - 1)}`;
      return `${range} at ${money(p.unit_amount)}${p.flat_amount ? ` + ${money(p.flat_amount)} flat` : ''}`;
    });
    return `${head} (${mode} tiers: ${parts.join('; ')})`;
  }
  const size = price.package_size ?? 1;
  if (size > 1) return `${head} (${n(priced.parts[0]!.quantity)} packages of ${n(size)} at ${money(price.amount)})`;
  return `${head} at ${money(price.amount)}`;
}

/**
 * DESIGN §24: a metered price's price for one combination of its metric's dimensions. `match`
 * names dimension values (compared as text); the entry is a per-unit amount (optionally per
 * package) or tiers, priced by the same maths as a whole price.
 */
export type DimensionPrice = {
  match: Record<string, string>;
  unit_amount: number | null;
  package_size: number | null;
  tiers_mode: TiersMode | null;
  tiers: { up_to: number | null; unit_amount: number; flat_amount: number }[] | null;
};

/** The pricing scheme of a dimension price. */
export function dimensionScheme(entry: DimensionPrice): PricingScheme {
  return { amount: entry.unit_amount ?? 0, package_size: entry.package_size, tiers_mode: entry.tiers_mode, tiers: entry.tiers };
}

/** Whether a price prices anything by itself (an amount or tiers): a dimensional price's default for usage no entry matches. */
export function hasOwnPrice(price: PricingScheme): boolean {
  return price.amount > 0 || (price.tiers?.length ?? 0) > 0;
}

/**
 * The first entry whose every `match` value equals the combination's value of that dimension
 * (a dimension the combination lacks matches nothing); null when none does.
 */
export function matchDimensionPrice(entries: DimensionPrice[], dimensions: Record<string, string | null>): DimensionPrice | null {
  return entries.find((e) => Object.entries(e.match).every(([k, v]) => dimensions[k] !== null && dimensions[k] !== undefined && dimensions[k] === v)) ?? null;
}
