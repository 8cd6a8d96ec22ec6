import { Readable } from 'node:stream';
import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  callbackQuery,
  connectBody,
  connectResponse,
  connectionSchema,
  deletedConnectionSchema,
  providerParams,
  syncBody,
  syncRunSchema,
  syncStatusQuery,
  syncStatusResponse,
  tallyExportQuery,
  taxMappingBody,
} from '../../modules/accounting/index.js';
import { completeConnect, disconnect, listConnections, startConnect, startSync, syncStatus, updateTaxMapping } from '../../modules/accounting/index.js';
import { tallyEntity, tallyExport } from '../../modules/accounting/index.js';
import { bindingCookieName, callbackUrl } from '../../modules/accounting/index.js';
import { cookiesOf } from '../../platform/auth/sessions.js';

const callbackPath = (config: AppDeps['config'], provider: Parameters<typeof callbackUrl>[1]) => new URL(callbackUrl(config, provider)).pathname;

const tags = ['accounting'];

export function registerAccountingRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/accounting/connect/:provider',
    {
      schema: {
        errors: ['unavailable'],
        tags,
        summary:
          'Start connecting QuickBooks, Xero or Zoho Books (OAuth authorization code with PKCE); redirect the browser to auth_url. Sets a cookie binding the flow to this browser: the callback refuses another (403)',
        params: providerParams,
        body: connectBody.nullish(),
        response: { 200: connectResponse },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const { answer, setCookie } = await startConnect(ctx, deps, request.params.provider, request.body ?? {});
        // The browser binding (RFC 6749 §10.12): the callback must present it. A replayed answer
        // (Idempotency-Key) sets no cookie: that browser starts again.
        reply.header('set-cookie', setCookie);
        return { status: 200, body: answer };
      }),
  );

  // The provider's redirect: no API key (the single-use state names the tenant), hence public.
  app.get(
    '/v1/accounting/callback/:provider',
    {
      config: { public: true },
      schema: {
        errors: ['forbidden', 'unauthorized'],
        tags,
        summary: 'OAuth callback: exchanges the code, stores the connection, redirects to redirect_uri with the caller’s state',
        security: [],
        params: providerParams,
        querystring: callbackQuery,
      },
    },
    async (request, reply) => {
      const binding = cookiesOf(request.headers.cookie).get(bindingCookieName(request.params.provider));
      const { location } = await completeConnect(deps.db, deps, deps.clock.now(), request.params.provider, request.query, binding);
      return reply
        .code(302)
        .header('location', location)
        .header('cache-control', 'no-store')
        .header(
          'set-cookie',
          `${bindingCookieName(request.params.provider)}=; Path=${callbackPath(deps.config, request.params.provider)}; Max-Age=0; HttpOnly; SameSite=Lax`,
        )
        .send();
    },
  );

  app.get(
    '/v1/accounting/connections',
    { schema: { tags, summary: 'List accounting connections', querystring: z.object(paginationQuery()), response: { 200: listEnvelope(connectionSchema) } } },
    async (request) => {
      const page = toPage(request.query);
      const { connections, total } = await listConnections(readCtx(deps, request), page);
      return listResponse(connections, total, page);
    },
  );

  app.delete(
    '/v1/accounting/connections/:id',
    {
      schema: {
        tags,
        summary: 'Disconnect (the token is revoked at the provider)',
        params: idParams,
        response: { 200: dataEnvelope(deletedConnectionSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await disconnect(ctx, request.params.id) } })),
  );

  app.put(
    '/v1/accounting/connections/:id/tax-mapping',
    {
      schema: {
        tags,
        summary: 'Map GST classes and accounts to the provider’s tax codes and accounts (merged over the India defaults)',
        params: idParams,
        body: taxMappingBody,
        response: { 200: dataEnvelope(connectionSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateTaxMapping(ctx, request.params.id, request.body) } })),
  );

  app.post(
    '/v1/accounting/sync',
    {
      schema: {
        errors: ['not_found'],
        tags,
        summary: 'Queue a sync of customers, invoices, payments and credit notes',
        body: syncBody.nullish(),
        response: { 202: dataEnvelope(z.array(syncRunSchema)) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 202, body: { data: await startSync(ctx, request.body?.connection_id) } })),
  );

  app.get(
    '/v1/accounting/sync-status',
    {
      schema: {
        errors: ['not_found'],
        tags,
        summary: 'Per-record sync status (external id, last error) and the latest run of each connection',
        querystring: syncStatusQuery.extend(paginationQuery()),
        response: { 200: syncStatusResponse },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { records, total, runs } = await syncStatus(readCtx(deps, request), request.query, page);
      return { ...listResponse(records, total, page), runs };
    },
  );

  app.get(
    '/v1/accounting/export/tally',
    {
      schema: {
        tags,
        summary: "Tally XML of one entity's journal for a date range, in its functional currency (INR), one voucher per entry, streamed",
        querystring: tallyExportQuery,
        errors: ['not_found'],
        response: {
          200: {
            description: 'Tally XML (an ENVELOPE of vouchers to import), sent as an attachment',
            content: { 'application/xml': { schema: z.string().meta({ description: 'Tally XML' }) } },
          },
        },
      },
    },
    async (request, reply) => {
      const ctx = readCtx(deps, request);
      const { from, to } = request.query;
      const entity = await tallyEntity(ctx, request.query.entity_id);
      reply.type('application/xml; charset=utf-8').header('content-disposition', `attachment; filename="kosh-tally-${from}-${to}.xml"`);
      // Streamed: the document's string is the concatenation of the stream's chunks.
      return reply.send(Readable.from(tallyExport(ctx, from, to, entity)) as unknown as string);
    },
  );
}
