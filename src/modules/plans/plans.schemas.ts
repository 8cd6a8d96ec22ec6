import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const intervalUnit = z.enum(['day', 'week', 'month', 'year']);

/** HSN (goods, 4/6/8 digits) or SAC (services, 6 digits starting 99); empty means "use the tenant's". */
export const hsnCode = z.string().regex(/^(\d{4}|\d{6}|\d{8})?$/, 'must be a 4, 6 or 8 digit HSN/SAC code, or empty');

const priceInput = z.object({
  amount: fields.positiveMinorUnits(),
  currency: fields.currency(),
  billing_scheme: z.literal('per_unit', { message: "only 'per_unit' pricing is supported; tiered and metered are not yet" }).default('per_unit'),
});

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
    const currencies = [...(body.amount !== undefined && body.currency ? [body.currency] : []), ...(body.prices ?? []).map((p) => p.currency)];
    if (new Set(currencies).size !== currencies.length) {
      ctx.addIssue({ code: 'custom', path: ['prices'], message: 'a plan has at most one price per currency' });
    }
  });

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
export const createPriceBody = priceInput.extend({
  replace: z.boolean().default(true).describe('archive the active price in the same currency (true, the default); false refuses with 409 when there is one'),
});
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
