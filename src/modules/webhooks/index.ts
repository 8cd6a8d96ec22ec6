/** The public face of the module: what other modules and flows may use. */

export type { Delivery, WebhookEndpoint } from './webhooks.schemas.js';
export type { DeliveryStatus } from './webhooks.states.js';
