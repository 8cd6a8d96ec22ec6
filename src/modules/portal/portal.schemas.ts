import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { subscriptionSchema } from '../subscriptions/index.js';

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
    tenant: z.object({ id: z.uuid(), name: z.string() }),
    session_expires_at: fields.timestamp(),
    csrf_token: z.string().describe('send it as the X-CSRF-Token header (or csrf_token form field) on every portal write'),
  })
  .meta({ id: 'PortalProfile' });

export const portalSubscriptionSchema = subscriptionSchema.extend({ plan_name: z.string() });

export const redeemBody = z.object({ code: z.string().max(100) });

export const loggedOutResponse = z.object({ data: z.object({ logged_out: z.literal(true) }) });

export const invoicePdfResponse = z.string().describe('application/pdf');
