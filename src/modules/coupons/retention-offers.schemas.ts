import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';
import { CANCELLATION_REASONS } from '../subscriptions/index.js';
import { couponReference } from './coupons.schemas.js';

const reasons = z
  .array(z.enum(CANCELLATION_REASONS))
  .min(1)
  .max(CANCELLATION_REASONS.length)
  .refine((r) => new Set(r).size === r.length, 'each reason once')
  .describe('the cancellation reasons (as POST /v1/subscriptions/{id}/cancel takes them) this offer answers; a reason belongs to at most one active offer');

const message = z.string().trim().min(1).max(500).describe('what the portal says above the coupon’s terms (a default sentence when absent)');

export const createRetentionOfferBody = z
  .object({
    coupon: couponReference.describe('the coupon offered (id or code)'),
    reasons,
    message: message.optional(),
  })
  .meta(bodyExample({ coupon: 'STAY20', reasons: ['too_expensive', 'unused'], message: 'Stay with us: 20% off your next three months.' }));
export type CreateRetentionOfferBody = z.infer<typeof createRetentionOfferBody>;

export const updateRetentionOfferBody = z.object({
  reasons: reasons.optional(),
  message: message.nullable().optional(),
  active: z.boolean().optional().describe('false: no longer offered (its acceptances stay)'),
});
export type UpdateRetentionOfferBody = z.infer<typeof updateRetentionOfferBody>;

export const listRetentionOffersQuery = z.object({ active: z.enum(['true', 'false']).optional() });

export const retentionOfferSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('retention_offer'),
    coupon_id: z.uuid(),
    coupon_code: z.string(),
    reasons: z.array(z.enum(CANCELLATION_REASONS)),
    message: z.string().nullable(),
    active: z.boolean(),
    times_accepted: z.int().describe('subscriptions kept with this offer'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'RetentionOffer' });
export type RetentionOffer = z.infer<typeof retentionOfferSchema>;

/** What the portal shows a customer who picked one of the offer's reasons: the coupon's terms. */
export const portalRetentionOfferSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('retention_offer'),
    reason: z.enum(CANCELLATION_REASONS),
    message: z.string().nullable(),
    coupon: z.object({
      name: z.string(),
      percent_off: z.number().nullable(),
      amount_off: z.int().nullable(),
      currency: z.string().nullable(),
      duration: z.enum(['once', 'repeating', 'forever']),
      duration_in_months: z.int().nullable(),
    }),
  })
  .meta({ id: 'PortalRetentionOffer' });
export type PortalRetentionOffer = z.infer<typeof portalRetentionOfferSchema>;
