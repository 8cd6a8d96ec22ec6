/** The public face of the module: what other modules and flows may use. */

export { EVENT_TYPES, isEventType, type EventType } from './events.catalog.js';
export { EVENT_SUBSCRIBERS, SUBSCRIBERS, subscription, typesOf, type Subscriber } from './event-subscribers.js';
export { eventType, type Event } from './events.schemas.js';
export { getEvent, toEvent } from './events.service.js';
export type { EventRow } from './events.repository.js';
export { eventSchema, listEventsQuery } from './events.schemas.js';
export { listEvents } from './events.service.js';
export { findEventRow } from './events.service.js';
