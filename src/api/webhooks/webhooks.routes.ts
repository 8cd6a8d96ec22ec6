import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  createWebhookBody,
  deletedWebhookSchema,
  deliverySchema,
  listDeliveriesQuery,
  redeliverResponse,
  updateWebhookBody,
  webhookEndpointSchema,
  webhookEndpointWithSecretSchema,
} from '../../modules/webhooks/index.js';
import {
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
} from '../../modules/webhooks/index.js';

export function registerWebhookRoutes(app: KoshApp, deps: AppDeps): void {
  const tags = ['webhooks'];

  app.post(
    '/v1/webhooks',
    {
      schema: {
        tags,
        summary: 'Register a webhook endpoint (the signing secret is shown only in this answer)',
        description:
          "`events` defaults to `['*']` (every type). The URL must not resolve to a private, loopback or link-local address; in live mode it must be https.",
        body: createWebhookBody,
        response: { 201: dataEnvelope(webhookEndpointWithSecretSchema) },
      },
    },
    async (request, reply) => {
      // DNS is resolved here, before the transaction opens.
      await assertWebhookUrlAllowed(request.body.url, deps.config);
      // The signing secret is shown once: a replay shows it again, stored sealed (DESIGN §21).
      return runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: { data: await createWebhookEndpoint(ctx, deps.secrets, request.body) },
        sealReplay: true,
      }));
    },
  );

  app.get(
    '/v1/webhooks',
    {
      schema: {
        tags,
        summary: 'List webhook endpoints, newest first',
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(webhookEndpointSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { endpoints, total } = await listWebhookEndpoints(readCtx(deps, request), page);
      return listResponse(endpoints, total, page);
    },
  );

  app.get(
    '/v1/webhooks/:id',
    { schema: { tags, summary: 'Get a webhook endpoint (without its secret)', params: idParams, response: { 200: dataEnvelope(webhookEndpointSchema) } } },
    async (request) => ({ data: await getWebhookEndpoint(readCtx(deps, request), request.params.id) }),
  );

  app.patch(
    '/v1/webhooks/:id',
    {
      schema: {
        tags,
        summary: 'Update a webhook endpoint: url, events, description, enabled',
        params: idParams,
        body: updateWebhookBody,
        response: { 200: dataEnvelope(webhookEndpointSchema) },
      },
    },
    async (request, reply) => {
      await assertWebhookUrlAllowed(request.body.url, deps.config);
      return runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await updateWebhookEndpoint(ctx, request.params.id, request.body) },
      }));
    },
  );

  app.delete(
    '/v1/webhooks/:id',
    { schema: { tags, summary: 'Delete a webhook endpoint', params: idParams, response: { 200: dataEnvelope(deletedWebhookSchema) } } },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await deleteWebhookEndpoint(ctx, request.params.id) } })),
  );

  app.post(
    '/v1/webhooks/:id/rotate-secret',
    {
      schema: {
        tags,
        summary: 'Rotate the signing secret; the previous one keeps signing alongside it for 24 h',
        params: idParams,
        response: { 200: dataEnvelope(webhookEndpointWithSecretSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await rotateWebhookSecret(ctx, deps.secrets, request.params.id) },
        sealReplay: true,
      })),
  );

  app.get(
    '/v1/webhooks/:id/deliveries',
    {
      schema: {
        tags,
        summary: "List an endpoint's deliveries, newest first (SPEC 4.15)",
        params: idParams,
        querystring: listDeliveriesQuery,
        response: { 200: listEnvelope(deliverySchema) },
      },
    },
    async (request) => {
      const { deliveries, total, page } = await listEndpointDeliveries(readCtx(deps, request), request.params.id, request.query);
      return listResponse(deliveries, total, page);
    },
  );

  app.get(
    '/v1/events/:id/deliveries',
    {
      schema: {
        tags,
        summary: "List an event's deliveries, newest first",
        params: idParams,
        querystring: listDeliveriesQuery,
        response: { 200: listEnvelope(deliverySchema) },
      },
    },
    async (request) => {
      const { deliveries, total, page } = await listEventDeliveries(readCtx(deps, request), request.params.id, request.query);
      return listResponse(deliveries, total, page);
    },
  );

  app.post(
    '/v1/events/:id/redeliver',
    {
      schema: {
        tags,
        summary: 'Send an event again: a fresh delivery to every enabled endpoint subscribed to its type',
        params: idParams,
        response: { 202: redeliverResponse },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 202, body: { data: await redeliverEvent(ctx, request.params.id) } })),
  );
}
