import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';
import { EVENT_TYPES } from '../events/index.js';
import { DELIVERY_STATUSES, MAX_ATTEMPTS } from './webhooks.states.js';

/**
 * Shape checks every mode shares: absolute http(s) URL with a host and no credentials. The outbound
 * guard (platform/http/outbound-guard.ts) adds the address rules, and https in live mode, before the action runs.
 */
export const webhookUrl = z
  .string()
  .trim()
  .min(1)
  .max(2048)
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be an absolute http or https URL' });
      return;
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') ctx.addIssue({ code: 'custom', message: 'must use http or https' });
    else if (!url.hostname) ctx.addIssue({ code: 'custom', message: 'must name a host' });
    if (url.username || url.password) ctx.addIssue({ code: 'custom', message: 'must not carry a user name or password' });
  })
  .meta({ format: 'uri' });

/** `'*'` (every type) or documented event types only: a typo would otherwise never match anything. */
export const eventFilter = z
  .array(
    // An enum, so the OpenAPI document lists the types (GET /v1/events/types serves them too).
    z.enum(['*', ...EVENT_TYPES], { error: "unknown event type (see docs/events.md and GET /v1/events/types), or '*' for all" }),
  )
  .min(1, "must list at least one event type, or '*' for all")
  .max(100)
  .transform((types) => (types.includes('*') ? ['*'] : [...new Set(types)]));

export const createWebhookBody = z
  .object({
    url: webhookUrl,
    events: eventFilter.default(['*']),
    description: fields.text(500).optional(),
    enabled: z.boolean().default(true),
  })
  .meta(bodyExample({ url: 'https://acme.example/webhooks/kosh', events: ['invoice.finalized', 'invoice.paid'], description: 'Billing events for the ERP' }));
export type CreateWebhookBody = z.infer<typeof createWebhookBody>;

export const updateWebhookBody = z
  .object({
    url: webhookUrl.optional(),
    events: eventFilter.optional(),
    description: fields.text(500).nullable().optional(),
    enabled: z.boolean().optional(),
  })
  .meta(bodyExample({ events: ['*'], enabled: true }));
export type UpdateWebhookBody = z.infer<typeof updateWebhookBody>;

export const webhookEndpointSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    enabled: z.boolean(),
    previous_secret_expires_at: fields.timestamp().nullable().describe('until then, deliveries are also signed with the secret before the last rotation'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'WebhookEndpoint' });
export type WebhookEndpoint = z.infer<typeof webhookEndpointSchema>;

/** Only creation and rotation answer the secret. */
export const webhookEndpointWithSecretSchema = webhookEndpointSchema
  .extend({ secret: z.string().describe('whsec_<base64>: shown only here') })
  .meta({ id: 'WebhookEndpointWithSecret' });
export type WebhookEndpointWithSecret = z.infer<typeof webhookEndpointWithSecretSchema>;

export const deletedWebhookSchema = z.object({ id: z.uuid(), deleted: z.literal(true) });

/** SPEC §2 "Webhook delivery" (plus tenant_id and updated_at, as every record has). */
export const deliverySchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    event_id: z.uuid(),
    webhook_endpoint_id: z.uuid(),
    endpoint_url: z.string(),
    status: z.enum(DELIVERY_STATUSES).describe(`derived: succeeded when delivered; failed after ${MAX_ATTEMPTS} failed attempts; pending otherwise`),
    attempts: z.int(),
    last_status_code: z.int().nullable(),
    last_error: z.string().nullable(),
    next_retry_at: fields.timestamp().nullable(),
    delivered_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'WebhookDelivery' });
export type Delivery = z.infer<typeof deliverySchema>;

export const MAX_DELIVERY_LIMIT = 500;

/** SPEC 4.15: `status`, `limit` (default 50, capped at 500), `offset` (>= 0); `page` also accepted (DESIGN §10). */
export const listDeliveriesQuery = z.object({
  status: z.enum(DELIVERY_STATUSES).optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .default(50)
    .transform((v) => Math.min(v, MAX_DELIVERY_LIMIT))
    .describe(`1..${MAX_DELIVERY_LIMIT}, default 50; larger values are capped`),
  offset: z.coerce.number().int().min(0).max(1_000_000_000).optional(),
  page: z.coerce.number().int().min(1).max(1_000_000).optional().describe('alternative to offset: offset = (page - 1) * limit'),
});
export type ListDeliveriesQuery = z.infer<typeof listDeliveriesQuery>;

export const redeliverResponse = z.object({
  data: z.object({ event_id: z.uuid(), deliveries: z.array(deliverySchema) }),
});
