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

/** POST /v1/payments/{id}/tds-certificate (decision 0770). */
export const certifyPaymentTdsBody = z.object({
  certificate_number: fields.text(100).describe('the certificate number: Form 131 from 1 April 2026, Form 16A before'),
  section: fields
    .text(20)
    .optional()
    .describe(
      "deducted under: from 1 April 2026 the Income-tax Act 2025's s.393 payment code (1001–1092, e.g. 1026 technical services, 1027 professional fees); before, the 1961 Act's section (194C, 194H, 194-I(a), 194-I(b), 194J, 194J(a), 194J(b)). docs/decisions/0510",
    ),
  deducted_on: z.iso
    .date()
    .optional()
    .describe("the day (in India) the customer deducted, as the certificate says; default: the payment's day in the entity's time zone"),
});
export type CertifyPaymentTdsBody = z.infer<typeof certifyPaymentTdsBody>;

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
    tds_certificate: z
      .object({
        certificate_number: z.string().nullable(),
        section: z.string().nullable().describe('the section (1961 Act) or s.393 payment code (Income-tax Act 2025) it was deducted under'),
        payment_code: z.string().nullable().describe('the Income-tax Act 2025 payment code'),
        certificate_form: z.enum(['Form 16A', 'Form 131']),
        deducted_on: z.iso.date(),
        recorded_at: fields.timestamp(),
      })
      .nullable()
      .describe('the certificate for `tds_amount`, once recorded with POST /v1/payments/{id}/tds-certificate (decision 0770)'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'OfflinePayment' });
export type Payment = z.infer<typeof paymentSchema>;
