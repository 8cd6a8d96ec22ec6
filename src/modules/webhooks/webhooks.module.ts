import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { DELIVER_JOB, runDeliveryJob } from './webhooks.delivery.js';
import { queueWebhookDeliveries } from './webhooks.service.js';
import { subscription } from '../events/index.js';

export const webhooksModule: KoshModule = {
  name: 'webhooks',
  jobs: { [DELIVER_JOB]: runDeliveryJob },
  // Every emitted event queues its deliveries inside the emitting transaction (outbox).
  init: () => onEvent(queueWebhookDeliveries, subscription('webhooks')),
};
