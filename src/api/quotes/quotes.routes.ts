import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { acceptQuote } from '../../flows/quotes/accept-quote.js';
import { createQuoteBody, listQuotesQuery, quoteSchema } from '../../modules/quotes/index.js';
import { createQuote, declineQuote, getQuote, listQuotes, toQuote } from '../../modules/quotes/index.js';

export function registerQuoteRoutes(app: KoshApp, deps: AppDeps): void {
  const one = { 200: dataEnvelope(quoteSchema) };
  app.post(
    '/v1/quotes',
    {
      schema: {
        errors: ['not_found'],
        tags: ['quotes'],
        summary: 'Create a quote (status draft; amounts and tax computed by the server)',
        body: createQuoteBody,
        response: { 201: dataEnvelope(quoteSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: toQuote(await createQuote(ctx, request.body)) } })),
  );

  app.get(
    '/v1/quotes',
    {
      schema: {
        tags: ['quotes'],
        summary: 'List quotes',
        querystring: listQuotesQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(quoteSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { quotes, total } = await listQuotes(readCtx(deps, request), request.query, page);
      return listResponse(quotes, total, page);
    },
  );

  app.get('/v1/quotes/:id', { schema: { tags: ['quotes'], summary: 'Get a quote', params: idParams, response: one } }, async (request) => ({
    data: await getQuote(readCtx(deps, request), request.params.id),
  }));

  app.post(
    '/v1/quotes/:id/accept',
    { schema: { tags: ['quotes'], summary: 'Accept a quote: creates and finalizes its invoice (invoice_id)', params: idParams, response: one } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: toQuote((await acceptQuote(ctx, request.params.id)).quote) } })),
  );

  app.post('/v1/quotes/:id/decline', { schema: { tags: ['quotes'], summary: 'Decline a quote', params: idParams, response: one } }, (request, reply) =>
    runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: toQuote(await declineQuote(ctx, request.params.id)) } })),
  );
}
