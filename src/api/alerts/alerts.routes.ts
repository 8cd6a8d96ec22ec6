import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { alertSchema, archiveAlert, createAlert, createAlertBody, listAlerts, toAlert } from '../../modules/alerts/index.js';

export function registerAlertRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/alerts',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Create a usage, spend or credit-balance alert (notify, or block the customer in entitlements until the next period)',
        body: createAlertBody,
        errors: ['not_found'],
        response: { 201: dataEnvelope(alertSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: toAlert(await createAlert(ctx, request.body)) } })),
  );

  app.get(
    '/v1/alerts',
    {
      schema: {
        tags: ['alerts'],
        summary: 'List alerts (newest first, up to 1000)',
        querystring: z.object({ customer_id: z.uuid().optional() }),
        response: { 200: z.object({ data: z.array(alertSchema) }) },
      },
    },
    async (request) => ({ data: (await listAlerts(readCtx(deps, request), request.query.customer_id)).map(toAlert) }),
  );

  app.post(
    '/v1/alerts/:id/archive',
    {
      schema: {
        tags: ['alerts'],
        summary: 'Archive an alert: it stops watching and lifts its block now',
        params: idParams,
        response: { 200: dataEnvelope(alertSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: toAlert(await archiveAlert(ctx, request.params.id)) } })),
  );
}
