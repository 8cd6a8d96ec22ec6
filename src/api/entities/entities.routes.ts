import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { z } from 'zod';
import { createEntityBody, entitySchema, exchangeRateSchema, putExchangeRateBody, updateEntityBody } from '../../modules/entities/index.js';
import { createEntity, getEntity, listEntities, listExchangeRates, putExchangeRate, updateEntity } from '../../modules/entities/index.js';

export function registerEntityRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/entities',
    {
      schema: {
        tags: ['entities'],
        summary: 'Create a legal entity with its own ledger and invoice series',
        body: createEntityBody,
        response: { 201: dataEnvelope(entitySchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createEntity(ctx, request.body) } })),
  );
  app.get(
    '/v1/entities',
    { schema: { tags: ['entities'], summary: 'List legal entities', querystring: z.object(paginationQuery()), response: { 200: listEnvelope(entitySchema) } } },
    async (request) => {
      const page = toPage(request.query);
      const { entities, total } = await listEntities(readCtx(deps, request), page);
      return listResponse(entities, total, page);
    },
  );
  app.get(
    '/v1/entities/:id',
    { schema: { tags: ['entities'], summary: 'Get a legal entity', params: idParams, response: { 200: dataEnvelope(entitySchema) } } },
    async (request) => ({ data: await getEntity(readCtx(deps, request), request.params.id) }),
  );
  app.patch(
    '/v1/entities/:id',
    {
      schema: {
        tags: ['entities'],
        summary: 'Update a legal entity (e-invoicing settings: DESIGN §15; IRP credentials are sealed, never answered)',
        params: idParams,
        body: updateEntityBody,
        response: { 200: dataEnvelope(entitySchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await updateEntity(ctx, request.params.id, request.body, (credentials, aad) => deps.secrets.sealJson(credentials, aad)) },
      })),
  );
  app.put(
    '/v1/entities/:id/exchange-rates',
    {
      schema: {
        tags: ['entities'],
        summary: "Set the entity's INR exchange rate for a currency (used for the INR amounts of its foreign-currency invoices)",
        params: idParams,
        body: putExchangeRateBody,
        response: { 200: dataEnvelope(exchangeRateSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await putExchangeRate(ctx, request.params.id, request.body) } })),
  );
  app.get(
    '/v1/entities/:id/exchange-rates',
    {
      schema: {
        tags: ['entities'],
        summary: "The entity's exchange rates, newest first per currency",
        params: idParams,
        response: { 200: z.object({ data: z.array(exchangeRateSchema) }) },
      },
    },
    async (request) => ({ data: await listExchangeRates(readCtx(deps, request), request.params.id) }),
  );
}
