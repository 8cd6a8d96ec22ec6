import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { creditNoteSchema } from '../credit-notes/index.js';

export const giftStatus = z.enum(['purchased', 'redeemed', 'canceled']);

export const MAX_GIFT_MONTHS = 36;

export const createGiftBody = z.object({
  plan_id: z.uuid(),
  buyer_customer_id: z.uuid(),
  recipient_email: z.email({ message: 'must be an e-mail address' }).max(254),
  duration_months: z.int({ message: 'must be a whole number of months' }).min(1).max(MAX_GIFT_MONTHS),
  currency: fields.currency().optional().describe("defaults to the plan's only price, else the tenant's base currency"),
});
export type CreateGiftBody = z.infer<typeof createGiftBody>;

export const listGiftsQuery = z.object({
  status: giftStatus.optional(),
  buyer_customer_id: z.uuid().optional(),
});

/** SPEC §2 "Gift", plus amount, currency, expires_at, canceled_at and subscription_id. */
export const giftSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    code: z.string(),
    plan_id: z.uuid(),
    buyer_customer_id: z.uuid(),
    recipient_email: z.string(),
    status: giftStatus,
    redeemed_by_customer_id: z.uuid().nullable(),
    redeemed_at: fields.timestamp().nullable(),
    invoice_id: z.uuid().optional().describe('omitted on gifts bought before invoice linking existed'),
    subscription_id: z.uuid().nullable(),
    duration_months: z.int(),
    currency: z.string(),
    amount: z.int().describe('purchase price before tax, minor units'),
    expires_at: fields.timestamp(),
    canceled_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Gift' });
export type Gift = z.infer<typeof giftSchema>;

export const cancelGiftResponse = z.object({
  data: z.object({
    gift: giftSchema,
    credit_note: creditNoteSchema.optional(),
    invoice_voided: z.boolean(),
  }),
});
