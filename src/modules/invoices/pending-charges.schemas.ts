import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const addPendingChargeBody = z.object({
  description: fields.requiredText(500),
  amount: fields.positiveMinorUnits().describe('the unit amount in minor units, before GST'),
  quantity: z.int().min(1).max(1_000_000).default(1),
  currency: fields.currency().optional().describe("ISO 4217; defaults to the subscription's currency with subscription_id, else the tenant's base currency"),
  hsn_code: z
    .string()
    .regex(/^(\d{4}|\d{6}|\d{8})$/, 'must be a 4, 6 or 8 digit HSN/SAC code')
    .describe('the HSN/SAC the charge is taxed by (its own, not the plan’s)'),
  tax_rate_bp: z.int().min(0).max(10_000).optional().describe("the GST rate in basis points; required when the code's rate depends on more than the code"),
  subscription_id: z
    .uuid()
    .optional()
    .describe("only this subscription's next invoice takes the charge; without it, the customer's next invoice in its currency"),
});
export type AddPendingChargeBody = z.infer<typeof addPendingChargeBody>;

export const pendingChargeSchema = z.object({
  id: z.uuid(),
  object: z.literal('pending_charge'),
  customer_id: z.uuid(),
  subscription_id: z.uuid().nullable(),
  description: z.string(),
  currency: z.string(),
  unit_amount: z.int(),
  quantity: z.int(),
  amount: z.int().describe('unit_amount × quantity, before GST'),
  hsn_code: z.string(),
  tax_rate_bp: z.int().nullable(),
  status: z.enum(['pending', 'invoiced']),
  invoice_id: z.uuid().nullable().describe('the invoice that took it'),
  created_at: z.string(),
  invoiced_at: z.string().nullable(),
});
