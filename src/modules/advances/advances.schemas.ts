import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

const inr = {
  inr_amount: z.int().nullable().describe("in rupees at the advance's exchange_rate (CGST Rules, rule 34); null for an INR advance"),
  inr_subtotal: z.int().nullable(),
  inr_cgst_amount: z.int().nullable(),
  inr_sgst_amount: z.int().nullable(),
  inr_igst_amount: z.int().nullable(),
};

const tax = {
  subtotal: z.int().describe('taxable value'),
  cgst_amount: z.int(),
  sgst_amount: z.int().describe('SGST, or UTGST when utgst is true'),
  igst_amount: z.int(),
};

/** One use of an advance: applied to an invoice (GSTR-1 11B), or refunded (a refund voucher, rule 51). */
export const advanceMovementSchema = z
  .object({
    id: z.uuid(),
    kind: z.enum(['applied', 'refunded']),
    invoice_id: z.uuid().nullable(),
    refund_voucher_number: z.string().nullable(),
    payout: z.enum(['offline', 'gateway']).describe("a refund voucher's money: by hand (refunds payable), or back through the payment's gateway"),
    refund_id: z
      .uuid()
      .nullable()
      .describe(
        'the refund (GET /v1/refunds/{id}) that carries it: through the gateway, or (payout offline) paid by hand and settled by `POST /v1/refunds/{id}/mark_paid`; null for a voucher older than such refunds',
      ),
    amount: z.int(),
    ...tax,
    ...inr,
    reason: z.string(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'AdvanceMovement' });

/** A customer advance and its receipt voucher (CGST Rules, rule 50). */
export const advanceSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('advance'),
    customer_id: z.uuid(),
    entity_id: z.uuid(),
    payment_id: z.uuid().nullable().describe('the payment that brought the money; null for the receipt voucher of a prepaid-credit top-up'),
    credit_grant_id: z
      .uuid()
      .nullable()
      .describe('the paid credit grant whose top-up this voucher taxed (decision 0700): its draw-downs adjust it; never applied or refunded on its own'),
    receipt_voucher_number: z.string(),
    currency: z.string(),
    amount: z.int().describe('received, GST included'),
    ...tax,
    tax_amount: z.int(),
    rate_bp: z.int().describe('the GST rate the advance was taxed at, in basis points (0: no GST)'),
    hsn_code: z.string(),
    tax_type: z.string().describe("intra_state, inter_state, export, sez, or '' (no GST: an entity without a GSTIN)"),
    place_of_supply: z.string().nullable(),
    utgst: z.boolean(),
    balance: z.int().describe('not yet applied or refunded'),
    tax_open: z.int().describe('the GST on the balance: adjusted when applied, reversed when refunded'),
    exchange_rate: z
      .string()
      .nullable()
      .describe('INR per one unit of `currency` on the date of receipt, the rate GST on the advance is determined at (CGST Rules, rule 34(2)); null for INR'),
    ...inr,
    inr_tax_amount: z.int().nullable(),
    inr_tax_open: z.int().nullable().describe('the rupee GST on the balance'),
    movements: z.array(advanceMovementSchema),
    received_at: fields.timestamp(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Advance' });
export type Advance = z.infer<typeof advanceSchema>;

export const listAdvancesQuery = z.object({ customer_id: z.uuid().optional() });

export const refundAdvanceBody = z.object({
  amount: fields.positiveMinorUnits().optional().describe('default: the whole balance'),
  reason: fields.text(500).default(''),
});
export type RefundAdvanceBody = z.infer<typeof refundAdvanceBody>;
