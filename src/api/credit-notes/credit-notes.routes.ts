import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { applyCreditNoteBody, createCreditNoteBody, creditNoteSchema, expandQuery, listCreditNotesQuery } from '../../modules/credit-notes/index.js';
import {
  applyCreditNote,
  approveCreditNote,
  createCreditNote,
  getCreditNote,
  listCreditNotes,
  rejectCreditNote,
  renderCreditNote,
  voidCreditNote,
} from '../../modules/credit-notes/index.js';

export function registerCreditNoteRoutes(app: KoshApp, deps: AppDeps): void {
  const one = { 200: dataEnvelope(creditNoteSchema) };
  app.post(
    '/v1/credit-notes',
    {
      schema: {
        errors: ['not_found'],
        tags: ['credit notes'],
        summary: 'Create a credit note (issued, or pending approval under governance)',
        body: createCreditNoteBody,
        response: { 201: dataEnvelope(creditNoteSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await renderCreditNote(ctx, await createCreditNote(ctx, request.body)) } })),
  );
  app.get(
    '/v1/credit-notes',
    {
      schema: {
        tags: ['credit notes'],
        summary: 'List credit notes',
        querystring: listCreditNotesQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(creditNoteSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { notes, total } = await listCreditNotes(readCtx(deps, request), request.query, page);
      return listResponse(notes, total, page);
    },
  );
  app.get(
    '/v1/credit-notes/:id',
    {
      schema: {
        tags: ['credit notes'],
        summary: 'Get a credit note (expand=customer embeds the customer)',
        params: idParams,
        querystring: expandQuery,
        response: one,
      },
    },
    async (request) => ({ data: await getCreditNote(readCtx(deps, request), request.params.id, request.query.expand !== undefined) }),
  );
  const action = (path: string, summary: string, run: typeof approveCreditNote) =>
    app.post(`/v1/credit-notes/:id/${path}`, { schema: { tags: ['credit notes'], summary, params: idParams, response: one } }, (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await renderCreditNote(ctx, await run(ctx, request.params.id)) } })),
    );
  action('approve', 'Approve a pending credit note (issues it)', approveCreditNote);
  action('reject', 'Reject a pending credit note', rejectCreditNote);
  action('void', 'Void an unspent credit note', voidCreditNote);
  app.post(
    '/v1/credit-notes/:id/apply',
    {
      schema: {
        tags: ['credit notes'],
        summary: 'Spend credit on an open invoice of the same customer',
        params: idParams,
        body: applyCreditNoteBody,
        response: one,
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await renderCreditNote(ctx, await applyCreditNote(ctx, request.params.id, request.body.invoice_id, request.body.amount)) },
      })),
  );
}
