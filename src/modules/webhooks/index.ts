/** The public face of the module: what other modules and flows may use. */

export type { Delivery, WebhookEndpoint } from './webhooks.schemas.js';
export type { DeliveryStatus } from './webhooks.states.js';
export {
  createWebhookBody,
  deletedWebhookSchema,
  deliverySchema,
  listDeliveriesQuery,
  redeliverResponse,
  updateWebhookBody,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from './webhooks.schemas.js';
export {
  assertWebhookUrlAllowed,
  createWebhookEndpoint,
  deleteWebhookEndpoint,
  getWebhookEndpoint,
  listEndpointDeliveries,
  listEventDeliveries,
  listWebhookEndpoints,
  redeliverEvent,
  rotateWebhookSecret,
  updateWebhookEndpoint,
} from './webhooks.service.js';
