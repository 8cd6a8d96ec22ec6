import type { KoshModule } from '../../app-deps.js';

/** The read API over the platform's `events` outbox. Deliveries of events live in the webhooks module. */
export const eventsModule: KoshModule = {
  name: 'events',
};
