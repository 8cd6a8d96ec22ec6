import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';

export const referralStatus = z.enum(['pending', 'completed', 'expired', 'canceled']);

export const createReferralBody = z
  .object({
    referrer_id: z.uuid(),
    referred_id: z.uuid(),
    reward_amount: fields.minorUnits().optional().describe('minor units; defaults to the tenant setting referral_reward_amount'),
    currency: fields.currency().optional().describe("defaults to the tenant's base currency"),
  })
  .refine((b) => b.referrer_id !== b.referred_id, { path: ['referred_id'], message: 'a customer cannot refer themselves' })
  .meta(
    bodyExample({
      referrer_id: '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77',
      referred_id: '0196f0c2-7d2a-7e4b-8f10-5b1d9c3e2a88',
      reward_amount: 50000,
      currency: 'INR',
    }),
  );
export type CreateReferralBody = z.infer<typeof createReferralBody>;

export const MAX_REFERRALS_PAGE = 250;
const DEFAULT_REFERRALS_PAGE = 50;

/**
 * SPEC 4.7: `limit` (default 50, larger values capped at 250), `per_page` (1..250; the same thing
 * under its other name, preferred when both are given), `page` (>= 1) and `offset` (>= 0,
 * overrides the page-derived offset).
 */
export const listReferralsQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .transform((v) => Math.min(v, MAX_REFERRALS_PAGE))
    .optional()
    .describe(`default ${DEFAULT_REFERRALS_PAGE}; larger values are capped at ${MAX_REFERRALS_PAGE}`),
  per_page: z.coerce.number().int().min(1).max(MAX_REFERRALS_PAGE).optional(),
  page: z.coerce.number().int().min(1).max(1_000_000).default(1),
  offset: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional().describe('overrides page'),
  starting_after: z.uuid({ message: 'must be the id of an object in this list' }).optional().describe('Cursor: the referrals after this id, in list order'),
  ending_before: z.uuid({ message: 'must be the id of an object in this list' }).optional().describe('Cursor: the referrals before this id, in list order'),
  status: referralStatus.optional(),
  referrer_id: z.uuid().optional(),
});
export type ListReferralsQuery = z.infer<typeof listReferralsQuery>;

export const DEFAULT_PAGE_SIZE = DEFAULT_REFERRALS_PAGE;

export const referralSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    code: z.string(),
    referrer_id: z.uuid(),
    referred_id: z.uuid(),
    status: referralStatus,
    reward_amount: z.int(),
    currency: z.string(),
    reward_credited: z.boolean(),
    credit_note_id: z.uuid().nullable().describe("the referrer's reward credit note, once completed"),
    qualifying_invoice_id: z.uuid().nullable().describe("the referred customer's invoice whose payment completed the referral"),
    expires_at: fields.timestamp().describe('end of the window: created_at + referral_window_days'),
    qualified_at: fields.timestamp().nullable(),
    completed_at: fields.timestamp().nullable(),
    expired_at: fields.timestamp().nullable(),
    canceled_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Referral' });
export type Referral = z.infer<typeof referralSchema>;

export const referralListEnvelope = z.object({
  data: z.array(referralSchema),
  object: z.literal('list'),
  has_more: z.boolean(),
  total_count: z.int().min(0),
  meta: z.object({ page: z.int(), per_page: z.int(), total: z.int(), total_pages: z.int() }),
});
