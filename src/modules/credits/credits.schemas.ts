import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

export const creditGrantCategory = z.enum(['paid', 'promotional']);
export const creditGrantStatus = z.enum(['pending', 'active', 'depleted', 'expired', 'voided']);
export const priceType = z.enum(['fixed', 'usage', 'one_off']);

export const appliesTo = z
  .object({
    plan_ids: z.array(z.uuid()).min(1).max(100).optional(),
    price_types: z.array(priceType).min(1).max(3).optional().describe("fixed: a plan's recurring fee; usage: a metered price; one_off: a line without a price"),
  })
  .strict();

export const createCreditGrantBody = z
  .object({
    amount: fields.positiveMinorUnits().describe('minor units; for a paid grant the taxable value bought (GST is charged on top in its top-up invoice)'),
    currency: fields.currency(),
    category: creditGrantCategory,
    priority: z.int().min(0).max(1000).default(50).describe('lower is drawn first'),
    expires_at: fields.instant().optional(),
    applies_to: appliesTo.optional(),
    name: fields.singleLineName(120).optional(),
  })
  .strict();
export type CreateCreditGrantBody = z.infer<typeof createCreditGrantBody>;

export const creditGrantSchema = z
  .object({
    id: z.uuid(),
    customer_id: z.uuid(),
    entity_id: z.uuid(),
    category: creditGrantCategory,
    status: creditGrantStatus,
    name: z.string().nullable(),
    currency: z.string(),
    amount: z.int(),
    remaining: z.int().describe('what is left to draw, minor units'),
    tax_amount: z.int().describe('a paid grant: the GST its top-up invoice charged (settled with each draw, never charged again); 0 for promotional'),
    priority: z.int(),
    expires_at: fields.timestamp().nullable(),
    applies_to: z.object({ plan_ids: z.array(z.string()).optional(), price_types: z.array(priceType).optional() }).nullable(),
    invoice_id: z.uuid().nullable().describe('a paid grant: its top-up invoice; the grant is spendable once it is paid'),
    voided_at: fields.timestamp().nullable(),
    expired_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'CreditGrant' });
export type CreditGrant = z.infer<typeof creditGrantSchema>;

export const creditGrantListSchema = z.object({
  data: z.array(creditGrantSchema),
  balances: z
    .array(z.object({ currency: z.string(), paid: z.int(), promotional: z.int() }))
    .describe('spendable now (active, unexpired), per currency and category'),
});

export const putAutoTopUpBody = z
  .object({
    enabled: z.boolean(),
    threshold: fields.positiveMinorUnits().describe('a top-up is bought when the spendable paid credit falls below this'),
    amount: fields.positiveMinorUnits().describe('the credit bought each time (GST on top, in its top-up invoice)'),
    currency: fields.currency(),
    payment_method_id: z
      .uuid()
      .nullable()
      .optional()
      .describe(
        "one of the customer's active payment methods: every top-up is charged to it and to no other (if it is detached or revoked, the top-up is not bought and auto_top_up.failed is emitted); none: the customer's default method",
      ),
  })
  .strict();

export const autoTopUpSchema = z
  .object({
    customer_id: z.uuid(),
    enabled: z.boolean(),
    currency: z.string(),
    threshold: z.int(),
    amount: z.int(),
    payment_method_id: z.uuid().nullable(),
    in_flight_invoice_id: z.string().nullable().describe('the open top-up invoice an auto top-up created; none other is created meanwhile'),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'AutoTopUp' });
