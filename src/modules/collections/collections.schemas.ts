import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

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

export const attachPaymentMethodBody = z.object({
  token: z.string().trim().min(1).max(200),
  set_default: z.boolean().default(true),
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

export const createRefundBody = z.object({
  amount: fields.positiveMinorUnits().optional(),
  reason: fields.requiredText(500),
});
export type CreateRefundBody = z.infer<typeof createRefundBody>;

export const refundSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    payment_id: z.uuid(),
    invoice_id: z.uuid(),
    amount: z.int(),
    currency: z.string(),
    status: z.enum(['pending', 'succeeded', 'failed']),
    reason: z.string(),
    credit_note_id: z.uuid(),
    gateway: z.string().nullable(),
    failure_code: z.string().nullable(),
    failure_message: z.string().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'Refund' });
export type Refund = z.infer<typeof refundSchema>;
