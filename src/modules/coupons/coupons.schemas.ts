import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';

const UUID_SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `coupon` on subscriptions and invoices: the coupon's id or its code (codes never look like a UUID). */
export const couponReference = z.string().trim().min(1).max(100).describe("the coupon's id or its code");

export const createCouponBody = z
  .object({
    code: z
      .string()
      .trim()
      .min(1)
      .max(100)
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'letters, digits, ".", "_" and "-" only')
      .refine((c) => !UUID_SHAPE.test(c), 'must not look like a UUID (coupons are referenced by id or code)'),
    name: fields.requiredText(200).optional(),
    percent_off: z
      .number()
      .gt(0, 'must be greater than 0')
      .max(100, 'must be at most 100')
      .refine((p) => Number.isInteger(Math.round(p * 100)) && Math.abs(p * 100 - Math.round(p * 100)) < 1e-9, 'at most two decimals')
      .optional(),
    amount_off: fields.positiveMinorUnits().optional(),
    currency: fields.currency().optional(),
    duration: z.enum(['once', 'repeating', 'forever']),
    duration_in_months: z.int().min(1).max(120).optional(),
    max_redemptions: z.int().min(1).max(2_000_000_000).optional(),
    redeem_by: fields.instant().optional(),
    plan_ids: z.array(z.uuid()).max(100).optional(),
    metadata: fields.metadata().default({}),
  })
  .superRefine((body, ctx) => {
    if ((body.percent_off === undefined) === (body.amount_off === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['percent_off'], message: 'give exactly one of percent_off and amount_off' });
    }
    if (body.amount_off !== undefined && !body.currency) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'currency is required with amount_off' });
    if (body.percent_off !== undefined && body.currency) ctx.addIssue({ code: 'custom', path: ['currency'], message: 'currency goes with amount_off only' });
    if (body.duration === 'repeating' && body.duration_in_months === undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration_in_months'], message: 'required when duration is repeating' });
    }
    if (body.duration !== 'repeating' && body.duration_in_months !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['duration_in_months'], message: 'only with duration repeating' });
    }
  })
  .meta(
    bodyExample({
      code: 'LAUNCH20',
      name: 'Launch offer: 20% off for 3 months',
      percent_off: 20,
      duration: 'repeating',
      duration_in_months: 3,
      max_redemptions: 100,
    }),
  );
export type CreateCouponBody = z.infer<typeof createCouponBody>;

export const updateCouponBody = z.object({
  name: fields.requiredText(200).optional(),
  active: z.boolean().optional(),
  metadata: fields.metadata().optional(),
});
export type UpdateCouponBody = z.infer<typeof updateCouponBody>;

export const listCouponsQuery = z.object({
  active: z.enum(['true', 'false']).optional(),
});

export const couponSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    object: z.literal('coupon'),
    code: z.string(),
    name: z.string(),
    percent_off: z.number().nullable(),
    amount_off: z.int().nullable(),
    currency: z.string().nullable(),
    duration: z.enum(['once', 'repeating', 'forever']),
    duration_in_months: z.int().nullable(),
    max_redemptions: z.int().nullable(),
    times_redeemed: z.int(),
    redeem_by: fields.timestamp().nullable(),
    plan_ids: z.array(z.uuid()),
    active: z.boolean(),
    valid: z.boolean().describe('active, before redeem_by and below max_redemptions'),
    metadata: z.record(z.string(), z.unknown()),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Coupon' });
export type Coupon = z.infer<typeof couponSchema>;

export const discountSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('discount'),
    coupon_id: z.uuid(),
    coupon_code: z.string(),
    customer_id: z.uuid(),
    subscription_id: z.uuid().nullable(),
    invoice_id: z.uuid().nullable(),
    start: fields.timestamp(),
    end: fields.timestamp().nullable().describe('repeating: start + duration_in_months; once and forever: null'),
    invoices_discounted: z.int(),
    ended_at: fields.timestamp().nullable(),
  })
  .meta({ id: 'Discount' });
export type Discount = z.infer<typeof discountSchema>;

export const applyDiscountBody = z.object({ coupon: couponReference });
export type ApplyDiscountBody = z.infer<typeof applyDiscountBody>;
