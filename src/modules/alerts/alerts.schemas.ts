import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const alertType = z.enum(['usage_threshold', 'spend_threshold', 'credit_balance_below']);

export const createAlertBody = z
  .object({
    customer_id: z.uuid().optional(),
    subscription_id: z
      .uuid()
      .optional()
      .describe("the subscription's customer and current period; else the customer's running subscription's period, else the calendar month (UTC)"),
    type: alertType,
    metric_code: z.string().min(1).max(100).optional().describe('usage_threshold: the billable metric'),
    currency: fields.currency().optional().describe("spend_threshold and credit_balance_below: the currency (default: the tenant's base currency)"),
    threshold: fields.positiveMinorUnits().describe('usage: a quantity; spend and credit: minor units'),
    action: z.enum(['notify', 'block']).default('notify'),
    recurring: z.boolean().default(true),
  })
  .strict();
export type CreateAlertBody = z.infer<typeof createAlertBody>;

export const alertSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    subscription_id: z.uuid().nullable(),
    type: alertType,
    metric_code: z.string().nullable(),
    currency: z.string().nullable(),
    threshold: z.int(),
    action: z.enum(['notify', 'block']),
    recurring: z.boolean(),
    status: z.enum(['active', 'archived']),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Alert' });
