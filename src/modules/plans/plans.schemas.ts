import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';
import { tierProblems } from './pricing.js';

export const intervalUnit = z.enum(['day', 'week', 'month', 'year']);

/** HSN (goods, 4/6/8 digits) or SAC (services, 6 digits starting 99); empty means "use the tenant's". */
export const hsnCode = z.string().regex(/^(\d{4}|\d{6}|\d{8})?$/, 'must be a 4, 6 or 8 digit HSN/SAC code, or empty');

export const tierSchema = z.object({
  up_to: z.int().min(1).max(Number.MAX_SAFE_INTEGER).nullable().describe('the last unit of the tier; null (only on the last tier) = no upper bound'),
  unit_amount: fields.minorUnits().describe('the price of one unit in the tier, in minor units'),
  flat_amount: fields.minorUnits().optional().describe('added once when the tier is reached'),
});

export const billingScheme = z.enum(['per_unit', 'tiered', 'metered']);

/** DESIGN §24: a metered price's price for the usage whose dimensions match (decision 0480). */
export const dimensionPriceInput = z.object({
  match: z
    .record(z.string().min(1).max(100), z.string().max(200))
    .refine((m) => Object.keys(m).length >= 1 && Object.keys(m).length <= 5, 'match names 1 to 5 dimensions')
    .describe("dimension values the usage must have (compared with the event property's text), e.g. { model: 'gpt-4', direction: 'input' }"),
  unit_amount: fields.positiveMinorUnits().optional().describe('the price of one unit (or one package) in minor units'),
  package_size: z.int().min(1).max(1_000_000_000).optional().describe('units per package: the quantity is rounded up to whole packages'),
  tiers_mode: z.enum(['graduated', 'volume']).optional(),
  tiers: z.array(tierSchema).min(1).max(50).optional(),
});

/**
 * One price (DESIGN §13). `per_unit`: `amount` per unit (or per `package_size` units, rounded up);
 * `tiered`: `tiers` in `tiers_mode`, applied to the subscription's quantity; `metered`: billed in
 * arrears on the usage of `metric_code`, at `amount` per unit (or package) or by `tiers`.
 */
const priceFields = z.object({
  amount: fields.positiveMinorUnits().optional(),
  currency: fields.currency(),
  billing_scheme: billingScheme.default('per_unit'),
  tiers_mode: z.enum(['graduated', 'volume']).optional(),
  tiers: z.array(tierSchema).min(1).max(50).optional(),
  package_size: z.int().min(1).max(1_000_000_000).optional(),
  metric_code: z.string().min(1).max(100).optional(),
  dimension_prices: z
    .array(dimensionPriceInput)
    .min(1)
    .max(100)
    .optional()
    .describe(
      "metered only: prices per dimension combination; the first whose match fits a combination prices it. Usage none matches is billed at the price's own amount or tiers, or counted as unpriced when it has neither",
    ),
  hsn_code: z
    .string()
    .regex(/^(\d{4}|\d{6}|\d{8})$/, 'must be a 4, 6 or 8 digit HSN/SAC code')
    .optional()
    .describe("this price's HSN/SAC on invoice lines; the plan's when absent"),
});

/** The rules of one dimension price: a unit amount (optionally per package) or tiers with their mode; distinct matches. */
function checkDimensionPrices(entries: z.infer<typeof dimensionPriceInput>[], issue: (path: string, message: string) => void): void {
  const seen = new Set<string>();
  entries.forEach((d, i) => {
    const at = `dimension_prices.${i}`;
    if (d.tiers) {
      for (const problem of tierProblems(d.tiers)) issue(at, problem);
      if (!d.tiers_mode) issue(at, 'graduated or volume is required with tiers');
      if (d.unit_amount !== undefined || d.package_size !== undefined)
        issue(at, 'a dimension price has either unit_amount (and package_size) or tiers, not both');
    } else {
      if (d.unit_amount === undefined) issue(at, 'unit_amount or tiers is required');
      if (d.tiers_mode !== undefined) issue(at, 'tiers_mode goes with tiers');
    }
    const key = JSON.stringify(Object.entries(d.match).sort(([a], [b]) => (a < b ? -1 : 1)));
    if (seen.has(key)) issue(at, 'two dimension prices have the same match');
    seen.add(key);
  });
}

/** The rules across a price's fields (a refinement, so it is applied to each schema built from priceFields). */
function checkPrice(price: z.infer<typeof priceFields>, ctx: z.RefinementCtx): void {
  const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
  const tiered = price.billing_scheme === 'tiered' || (price.billing_scheme === 'metered' && price.tiers !== undefined);
  if (price.billing_scheme === 'metered' && !price.metric_code) issue('metric_code', 'a metered price needs the metric_code of a billable metric');
  if (price.billing_scheme !== 'metered' && price.metric_code !== undefined) issue('metric_code', 'only a metered price has a metric_code');
  if (price.dimension_prices) {
    if (price.billing_scheme !== 'metered') issue('dimension_prices', 'only a metered price has dimension_prices');
    checkDimensionPrices(price.dimension_prices, issue);
  }
  if (tiered) {
    if (!price.tiers) issue('tiers', 'a tiered price needs tiers');
    else for (const problem of tierProblems(price.tiers)) issue('tiers', problem);
    if (!price.tiers_mode) issue('tiers_mode', 'graduated or volume is required with tiers');
    if (price.amount !== undefined) issue('amount', 'a price has either amount or tiers, not both');
    if (price.package_size !== undefined) issue('package_size', 'package pricing applies to a per-unit amount, not to tiers');
  } else {
    // With dimension prices the price's own amount is optional: the default for unmatched usage.
    if (price.amount === undefined && !price.dimension_prices) issue('amount', 'amount is required (greater than 0)');
    if (price.tiers_mode !== undefined) issue('tiers_mode', 'tiers_mode goes with tiers');
  }
}

const priceInput = priceFields.superRefine(checkPrice);

export type PriceInput = z.infer<typeof priceInput>;

/**
 * SPEC 4.2 gives two request shapes; both are accepted: `interval_unit` or `interval`, and a single
 * `amount` + `currency` or a `prices` array (or both, if their currencies differ).
 */
export const createPlanBody = z
  .object({
    name: fields.requiredText(200),
    code: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only')
      .optional(),
    description: fields.text(2000).optional(),
    interval_unit: intervalUnit.optional(),
    interval: intervalUnit.optional(),
    interval_count: z.int().min(1).max(365).default(1),
    trial_days: z.int().min(0).max(730).default(0),
    amount: z.int({ message: 'must be an integer amount in minor units' }).min(1, 'must be greater than 0').max(Number.MAX_SAFE_INTEGER).optional(),
    currency: fields.currency().optional(),
    prices: z.array(priceInput).max(50).optional(),
    hsn_code: hsnCode.default(''),
    tax_rate_bp: z.int().min(0).max(10_000).optional().describe("the GST rate in basis points for the plan's lines when the code alone does not decide it"),
    features: z.array(z.string().max(200)).max(100).default([]),
    metadata: fields.metadata().default({}),
  })
  .superRefine((body, ctx) => {
    if (!body.interval_unit && !body.interval) {
      ctx.addIssue({ code: 'custom', path: ['interval_unit'], message: 'interval_unit (or interval) is required' });
    }
    if (body.interval_unit && body.interval && body.interval_unit !== body.interval) {
      ctx.addIssue({ code: 'custom', path: ['interval'], message: 'interval and interval_unit disagree' });
    }
    if (body.amount === undefined && !body.prices?.length) {
      ctx.addIssue({ code: 'custom', path: ['amount'], message: 'amount and currency (or a non-empty prices array) are required' });
    }
    if (body.amount !== undefined && !body.currency) {
      ctx.addIssue({ code: 'custom', path: ['currency'], message: 'currency is required with amount' });
    }
    const prices = body.prices ?? [];
    const fixed = [
      ...(body.amount !== undefined && body.currency ? [body.currency] : []),
      ...prices.filter((p) => p.billing_scheme !== 'metered').map((p) => p.currency),
    ];
    if (new Set(fixed).size !== fixed.length) {
      ctx.addIssue({ code: 'custom', path: ['prices'], message: 'a plan has at most one fixed (per_unit or tiered) price per currency' });
    }
    const metered = prices.filter((p) => p.billing_scheme === 'metered').map((p) => `${p.currency}/${p.metric_code}`);
    if (new Set(metered).size !== metered.length) {
      ctx.addIssue({ code: 'custom', path: ['prices'], message: 'a plan has at most one metered price per metric and currency' });
    }
    // Metered prices alone in a currency make a pure usage plan (decision 0190): billed in arrears only.
  })
  .meta(
    bodyExample({
      name: 'Pro',
      code: 'pro-monthly',
      description: 'Pro plan, billed monthly',
      interval_unit: 'month',
      amount: 49900,
      currency: 'INR',
      hsn_code: '998314',
      features: ['api_access'],
    }),
  );

export type CreatePlanBody = z.infer<typeof createPlanBody>;

export const updatePlanBody = z.object({
  name: fields.requiredText(200).optional(),
  description: fields.text(2000).nullable().optional(),
  metadata: fields.metadata().optional(),
  features: z.array(z.string().max(200)).max(100).optional(),
  active: z.boolean().optional().describe('false archives the plan: no new subscriptions (409 plan_inactive); running ones renew as before'),
});
export type UpdatePlanBody = z.infer<typeof updatePlanBody>;

/** A new price for a plan (prices are immutable): by default it replaces the active price in its currency, which is archived. */
export const createPriceBody = priceFields
  .extend({
    replace: z
      .boolean()
      .default(true)
      .describe(
        'archive the active price it replaces (same currency; for a metered price, same metric) — true, the default; false refuses with 409 when there is one',
      ),
  })
  .superRefine(checkPrice)
  .meta(bodyExample({ amount: 59900, currency: 'INR', billing_scheme: 'per_unit', hsn_code: '998314', replace: true }));
export type CreatePriceBody = z.infer<typeof createPriceBody>;

export const priceParams = z.object({ id: z.uuid(), price_id: z.uuid() });

export const listPlansQuery = z.object({
  q: z.string().max(200).optional(),
  currency: fields.currency().optional(),
  interval_unit: intervalUnit.optional(),
});

export const priceSchema = z
  .object({
    id: z.uuid(),
    plan_id: z.uuid(),
    currency: z.string(),
    amount: z.int(),
    type: z.string(),
    billing_scheme: z.string(),
    tiers_mode: z.enum(['graduated', 'volume']).nullable(),
    tiers: z.array(z.object({ up_to: z.int().nullable(), unit_amount: z.int(), flat_amount: z.int() })).nullable(),
    package_size: z.int().nullable(),
    metric_code: z.string().nullable(),
    dimension_prices: z
      .array(
        z.object({
          match: z.record(z.string(), z.string()),
          unit_amount: z.int().nullable(),
          package_size: z.int().nullable(),
          tiers_mode: z.enum(['graduated', 'volume']).nullable(),
          tiers: z.array(z.object({ up_to: z.int().nullable(), unit_amount: z.int(), flat_amount: z.int() })).nullable(),
        }),
      )
      .nullable()
      .describe('DESIGN §24: prices per dimension combination of the metric; null: none'),
    hsn_code: z.string().nullable(),
    active: z.boolean().describe('false once archived: new subscriptions cannot use it; running ones keep it'),
    archived_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'Price' });

export const planSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    name: z.string(),
    code: z.string(),
    description: z.string().nullable(),
    interval_unit: intervalUnit,
    interval: intervalUnit,
    interval_count: z.int(),
    trial_days: z.int(),
    active: z.boolean(),
    hsn_code: z.string(),
    tax_rate_bp: z.int().nullable(),
    features: z.array(z.string()),
    metadata: z.record(z.string(), z.unknown()),
    prices: z.array(priceSchema),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Plan' });

export type Plan = z.infer<typeof planSchema>;
export type Price = z.infer<typeof priceSchema>;
