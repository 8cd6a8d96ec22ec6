import type { KoshModule } from '../../app-deps.js';
import { registerEventRoutes } from './events.routes.js';

/** The read API over the platform's `events` outbox. Deliveries of events live in the webhooks module. */
export const eventsModule: KoshModule = {
  name: 'events',
  registerRoutes: registerEventRoutes,
};
