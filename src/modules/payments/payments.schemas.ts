import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { exchangeRateField } from '../entities/index.js';

export const paymentType = z.enum(['bank_transfer', 'cash', 'cheque']);

/** SPEC 4.4, field for field. */
export const recordOfflinePaymentBody = z.object({
  customer_id: z.uuid(),
  invoice_id: z.uuid().optional(),
  payment_type: paymentType,
  amount: z.int({ message: 'must be an integer amount in minor units' }).min(1, 'must be greater than 0').max(Number.MAX_SAFE_INTEGER),
  tds_amount: fields.minorUnits().default(0),
  currency: fields.currency().default('INR'),
  reference_number: fields.text(100).optional(),
  notes: z.string().max(500, 'at most 500 characters').optional(),
  recorded_by: fields.text(200).optional(),
  entity_id: z.uuid().optional().describe('without invoice_id (an advance): the entity that received it; default the primary one'),
  hsn_code: z
    .string()
    .optional()
    .describe('without invoice_id (an advance): the SAC/HSN of the supply it is for; default 998314 (services at 18 %). Goods codes: no GST on the advance'),
  exchange_rate: exchangeRateField()
    .optional()
    .describe("functional currency (INR) per one unit of `currency` on the payment's date; default the entity's rate table, else the invoice's rate"),
});
export type RecordOfflinePaymentBody = z.infer<typeof recordOfflinePaymentBody>;

export const listPaymentsQuery = z.object({
  customer_id: z.uuid().optional(),
  invoice_id: z.uuid().optional(),
});

/** Both SPEC descriptions: the formal record plus status, channel, created_at, updated_at. */
export const paymentSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    customer_id: z.uuid(),
    invoice_id: z.uuid().nullable(),
    payment_type: z.enum(['bank_transfer', 'cash', 'cheque', 'card', 'upi']),
    amount: z.int(),
    tds_amount: z.int(),
    currency: z.string(),
    reference_number: z.string(),
    notes: z.string(),
    recorded_by: z.string(),
    recorded_at: fields.timestamp(),
    status: z.string(),
    channel: z.string(),
    gateway: z.string().nullable(),
    gateway_payment_id: z.string().nullable(),
    amount_refunded: z.int(),
    exchange_rate: z.string().nullable().describe("the entity's functional currency per one unit of `currency` on the payment's date"),
    exchange_rate_source: z.enum(['functional_currency', 'request', 'entity_rate_table', 'invoice']).nullable(),
    functional_amount: z.int().nullable().describe('the amount in the functional currency (INR) at that rate'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'OfflinePayment' });
export type Payment = z.infer<typeof paymentSchema>;
