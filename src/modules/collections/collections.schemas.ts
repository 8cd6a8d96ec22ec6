import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { MANDATE_FREQUENCIES } from './mandates.js';

export const gatewayProvider = z.enum(['test', 'razorpay', 'stripe']);

export const createConnectionBody = z.object({
  provider: gatewayProvider,
  credentials: z.record(z.string().max(100), z.string().max(2000)).default({}),
  currencies: z.array(fields.currency()).max(200).default([]),
});
export type CreateConnectionBody = z.infer<typeof createConnectionBody>;

/** Credentials are never echoed: only which keys were given. */
export const connectionSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    provider: gatewayProvider,
    currencies: z.array(z.string()),
    credential_keys: z.array(z.string()),
    webhook_url: z.string(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'GatewayConnection' });
export type GatewayConnection = z.infer<typeof connectionSchema>;

/** A mandate's terms as the customer agreed them at registration (RBI e-mandate framework; docs/decisions/0520). */
export const mandateTermsInput = z
  .object({
    max_amount: z.int().positive().max(1_000_000_000_00).describe('the most one debit may take, in the minor unit'),
    valid_from: z.iso.datetime({ offset: true }).optional().describe('defaults to the registration').meta({ example: '2026-04-01T00:00:00+05:30' }),
    valid_until: z.iso
      .datetime({ offset: true })
      .nullable()
      .optional()
      .describe('null or absent: until withdrawn')
      .meta({ example: '2031-03-31T23:59:59+05:30' }),
    frequency: z.enum(MANDATE_FREQUENCIES),
  })
  .refine((m) => !m.valid_until || !m.valid_from || Date.parse(m.valid_until) > Date.parse(m.valid_from), {
    message: 'valid_until must be after valid_from',
    path: ['valid_until'],
  });
export type MandateTermsInput = z.infer<typeof mandateTermsInput>;

export const attachPaymentMethodBody = z.object({
  token: z.string().trim().min(1).max(200),
  set_default: z.boolean().default(true),
  mandate: mandateTermsInput.optional().describe("a mandate's terms (a payment method that is an e-mandate only)"),
});
export type AttachPaymentMethodBody = z.infer<typeof attachPaymentMethodBody>;

export const paymentMethodSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    customer_id: z.uuid(),
    type: z.enum(['card', 'upi_mandate']),
    brand: z.string().nullable(),
    last4: z.string().nullable(),
    gateway: z.string(),
    is_default: z.boolean(),
    mandate: z
      .object({
        reference: z.string().describe("the gateway's id of the mandate, quoted in its pre-debit notices"),
        max_amount: z.int().nullable().describe('the most one debit may take (minor unit); null: not stated at registration'),
        valid_from: fields.timestamp().nullable(),
        valid_until: fields.timestamp().nullable(),
        frequency: z.enum(MANDATE_FREQUENCIES).nullable(),
      })
      .nullable()
      .describe('set when the method is an e-mandate (UPI AutoPay, a card standing instruction): debits are announced 24 hours ahead'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'PaymentMethod' });
export type PaymentMethod = z.infer<typeof paymentMethodSchema>;

export const customerPaymentMethodParams = z.object({ id: z.uuid({ message: 'must be a UUID' }), pm_id: z.uuid({ message: 'must be a UUID' }) });

export const payInvoiceBody = z.object({ payment_method_id: z.uuid().optional() }).default({});
export type PayInvoiceBody = z.infer<typeof payInvoiceBody>;

export const paymentAttemptSchema = z
  .object({
    id: z.uuid(),
    invoice_id: z.uuid(),
    payment_method_id: z.uuid().nullable(),
    status: z.enum(['succeeded', 'failed', 'pending', 'canceled']),
    amount: z.int(),
    currency: z.string(),
    gateway: z.string(),
    failure_code: z.string().nullable(),
    failure_message: z.string().nullable(),
    payment_id: z.uuid().nullable(),
    charge_after: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'PaymentAttempt' });
export type PaymentAttempt = z.infer<typeof paymentAttemptSchema>;

export const checkoutSessionSchema = z
  .object({
    id: z.uuid(),
    invoice_id: z.uuid(),
    url: z.string(),
    status: z.enum(['open', 'complete', 'expired']),
    expires_at: fields.timestamp(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'CheckoutSession' });
export type CheckoutSession = z.infer<typeof checkoutSessionSchema>;

export const refundLineInput = z.object({
  invoice_line_id: z.uuid(),
  amount: fields.positiveMinorUnits().describe('gross (with GST) refunded on this line, at most what the line has left to credit'),
});

export const createRefundBody = z.object({
  amount: fields
    .positiveMinorUnits()
    .optional()
    .describe('default: the sum of lines[], else what remains refundable on the payment; with lines it must equal their sum'),
  reason: fields.requiredText(500),
  lines: z
    .array(refundLineInput)
    .min(1)
    .max(500)
    .optional()
    .describe(
      "which lines of the payment's invoice the refund's credit note credits; omitted: the invoice's unspent credit notes are paid out first, else every line pro rata over what it has left",
    ),
});
export type CreateRefundBody = z.infer<typeof createRefundBody>;

export const createCreditNoteRefundBody = z.object({
  amount: fields.positiveMinorUnits().describe("at most the note's unspent balance"),
  payment_id: z
    .uuid()
    .optional()
    .describe(
      "the payment whose gateway pays it back; default: a payment of the note's invoice with enough left to refund (card/UPI first), else an offline refund",
    ),
  reason: fields.text(500).default(''),
});
export type CreateCreditNoteRefundBody = z.infer<typeof createCreditNoteRefundBody>;

export const refundStatus = z.enum(['pending', 'succeeded', 'failed']);

export const markRefundPaidBody = z.object({
  reference: fields.requiredText(100).describe("the bank transfer's UTR, the cheque number or the cash receipt's number"),
  paid_at: fields
    .instant()
    .optional()
    .describe('when the money left; default now; never in the future nor before the refund was created')
    .meta({ example: '2026-04-02T11:00:00+05:30' }),
});
export type MarkRefundPaidBody = z.infer<typeof markRefundPaidBody>;

export const markRefundFailedBody = z.object({
  failure_message: fields
    .text(500)
    .optional()
    .describe('why the money will not be paid out (a cheque returned, a transfer bounced, the customer keeps the credit)'),
});
export type MarkRefundFailedBody = z.infer<typeof markRefundFailedBody>;

export const listRefundsQuery = z.object({
  customer_id: z.uuid().optional(),
  payment_id: z.uuid().optional(),
  invoice_id: z.uuid().optional(),
  status: refundStatus.optional(),
});

export const refundSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    payment_id: z.uuid().nullable().describe('null: an offline refund of credit that names no payment'),
    invoice_id: z.uuid().nullable(),
    customer_id: z.uuid(),
    amount: z.int(),
    currency: z.string(),
    status: refundStatus,
    reason: z.string(),
    credit_note_id: z
      .uuid()
      .nullable()
      .describe("the credit note the refund issued, or (credit_note_issued false) the first note whose balance it paid out; null for an advance's refund"),
    advance_id: z
      .uuid()
      .nullable()
      .describe("the advance whose refund voucher's money the refund carries back (through the gateway, or by hand when `gateway` is null), else null"),
    replaces_refund_id: z.uuid().nullable().describe("an advance's refund paid by hand: the gateway refund the gateway refused, whose money it carries"),
    credit_note_issued: z.boolean().describe('false: the refund paid out credit notes issued before and issued none'),
    credit_notes: z
      .array(z.object({ credit_note_id: z.uuid(), amount: z.int() }))
      .describe('the notes whose balance the refund paid out, and how much of each'),
    gateway: z.string().nullable(),
    failure_code: z.string().nullable(),
    failure_message: z.string().nullable(),
    paid_at: fields.timestamp().nullable().describe('an offline refund: when the money was paid out by hand (`mark_paid`)'),
    reference: z.string().nullable().describe("an offline refund: the bank transfer's, cheque's or receipt's reference given by `mark_paid`"),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Refund' });
export type Refund = z.infer<typeof refundSchema>;
