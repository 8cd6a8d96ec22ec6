import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, type KoshApp } from '../../platform/http/server.js';
import { z } from 'zod';
import { EVENT_TYPES, eventSchema, listEventsQuery } from '../../modules/events/index.js';

const eventTypeSchema = z
  .object({
    type: z.enum(EVENT_TYPES).describe('the event type, as in `events` of a webhook endpoint and `type` of an event'),
    object: z.string().describe("the kind of object in the event's data.object (the type's prefix)"),
  })
  .meta({ id: 'EventType' });
import { getEvent, listEvents } from '../../modules/events/index.js';

export function registerEventRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/events',
    {
      schema: {
        tags: ['events'],
        summary: 'List events, newest first',
        description: 'Filters: `type`, `object_id`, `created[gte]` and `created[lte]` (inclusive RFC 3339 bounds).',
        querystring: listEventsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(eventSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { events, total } = await listEvents(readCtx(deps, request), request.query, page);
      return listResponse(events, total, page);
    },
  );

  // A static path: the router prefers it to `/:id`, so it is not read as an event id.
  app.get(
    '/v1/events/types',
    {
      schema: {
        tags: ['events'],
        summary: 'List the event types (what a webhook endpoint may subscribe to)',
        response: { 200: dataEnvelope(z.array(eventTypeSchema)) },
      },
    },
    async () => ({ data: EVENT_TYPES.map((type) => ({ type, object: type.split('.')[0]! })) }),
  );

  app.get(
    '/v1/events/:id',
    {
      schema: {
        tags: ['events'],
        summary: 'Get an event (the snapshot stored when it was emitted)',
        params: idParams,
        response: { 200: dataEnvelope(eventSchema) },
      },
    },
    async (request) => ({ data: await getEvent(readCtx(deps, request), request.params.id) }),
  );
}
