import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { EVENT_TYPES } from './events.catalog.js';

export const eventType = z.enum(EVENT_TYPES, { message: 'must be an event type listed in docs/events.md' });

/** The payload stored at emission (DESIGN §7): a snapshot of the object as the API showed it then. */
export const eventSchema = z
  .object({
    id: z.uuid(),
    type: z.string(),
    created_at: fields.timestamp(),
    tenant_id: z.uuid(),
    data: z.object({ object: z.record(z.string(), z.unknown()) }),
    test_clock_id: z.uuid().optional().describe('present when the event happened while a test clock advanced: that clock'),
  })
  .meta({ id: 'Event' });
export type Event = z.infer<typeof eventSchema>;

const instant = fields.instant('must be an RFC 3339 date-time, e.g. 2026-04-01T00:00:00Z');

/**
 * Filters of `GET /v1/events`. Time bounds use Stripe's bracket style, `created[gte]` and
 * `created[lte]` (both inclusive).
 */
export const listEventsQuery = z.object({
  type: eventType.optional(),
  object_id: z.uuid({ message: 'must be a UUID' }).optional(),
  'created[gte]': instant.optional(),
  'created[lte]': instant.optional(),
});
export type ListEventsQuery = z.infer<typeof listEventsQuery>;
