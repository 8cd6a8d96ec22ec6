import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { CANCELLATION_REASONS, subscriptionSchema } from '../subscriptions/index.js';
import { updateCustomerBody } from '../customers/index.js';
import { PORTAL_CANCELLATION } from '../tenants/index.js';

export const portalLinkSchema = z
  .object({
    url: z.string().describe('the one-time sign-in link (GET /portal/login?token=…)'),
    token: z.string(),
    expires_at: fields.timestamp().describe('15 minutes after creation'),
  })
  .meta({ id: 'PortalLink' });

export const loginBody = z.object({
  tenant_id: z.uuid(),
  email: z.email({ message: 'must be an e-mail address' }).max(254),
});

export const loginResponse = z.object({ data: z.object({ message: z.string() }) });

export const profileSchema = z
  .object({
    customer: z.object({ id: z.uuid(), email: z.string(), name: z.string().nullable() }),
    billed_to: z
      .object({ name: z.string() })
      .nullable()
      .describe("the parent company that is invoiced for and pays this customer's subscriptions (bill_to 'parent'); null when the customer pays"),
    tenant: z.object({ id: z.uuid(), name: z.string() }),
    session_expires_at: fields.timestamp(),
    csrf_token: z.string().describe('send it as the X-CSRF-Token header (or csrf_token form field) on every portal write'),
  })
  .meta({ id: 'PortalProfile' });

export const portalSubscriptionSchema = subscriptionSchema.extend({ plan_name: z.string() });

export const redeemBody = z.object({ code: z.string().max(100) });

export const loggedOutResponse = z.object({ data: z.object({ logged_out: z.literal(true) }) });

export const invoicePdfResponse = z.string().describe('application/pdf');

/** Billing details a customer may change: the API's own fields and validation (PATCH /v1/customers/{id}). */
export const billingDetailsBody = updateCustomerBody.pick({ email: true, gstin: true, billing_address: true }).strict();
export type BillingDetailsBody = z.infer<typeof billingDetailsBody>;

export const portalPermissionsSchema = z
  .object({
    cancellation: z
      .enum(PORTAL_CANCELLATION)
      .describe('disabled, at_period_end (the subscription runs to the end of the paid period) or immediately (unused time credited)'),
    plan_change: z.boolean(),
    quantity_change: z.boolean(),
    billing_details: z.boolean(),
  })
  .meta({ id: 'PortalPermissions' });

export const portalCancelBody = z.object({
  reason: z.enum(CANCELLATION_REASONS).optional(),
  feedback: fields.text(2000).optional(),
  preview: z.boolean().default(false).describe('answer with what the cancellation would do (as the API preview) and write nothing'),
});

/** Taking the retention offer shown for a cancellation reason (decision 0560), instead of cancelling. */
export const portalRetentionOfferBody = z.object({
  reason: z.enum(CANCELLATION_REASONS),
  feedback: fields.text(2000).optional(),
});
export const portalRetentionOfferQuery = z.object({ reason: z.enum(CANCELLATION_REASONS) });

export const portalQuantityBody = z.object({
  quantity: z.int().min(1).max(1_000_000),
  preview: z.boolean().default(false),
});

export const portalPlanBody = z.object({
  plan_id: z.uuid(),
  preview: z.boolean().default(false),
});

export const planChoiceSchema = z.object({
  id: z.uuid(),
  name: z.string(),
  amount: z.int().nullable().describe('the per-unit price in minor units (null for a tiered price)'),
  interval: z.string(),
});

export const checkoutLinkSchema = z.object({ url: z.string().describe('the hosted checkout page for the invoice') });

export const statementResponse = z.string().describe('text/csv');
