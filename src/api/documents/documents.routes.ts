import type { FastifyReply } from 'fastify';
import type { AppDeps } from '../../app-deps.js';
import { idParams } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { sendInvoice } from '../../flows/invoices/send-invoice.js';
import { invoicePdfResponse, sendInvoiceResponse } from '../../modules/documents/index.js';
import { getCreditNotePdf, getInvoicePdf } from '../../modules/documents/index.js';

export function registerDocumentRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/invoices/:id/send',
    {
      schema: {
        tags: ['invoices'],
        summary: 'E-mail the invoice, with its PDF, to the customer (SPEC 4.8; every refusal is a 400)',
        params: idParams,
        response: { 200: sendInvoiceResponse },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: await sendInvoice(ctx, request.params.id, deps.config, deps.scope) })),
  );
  app.get(
    '/v1/invoices/:id/pdf',
    {
      schema: {
        tags: ['invoices'],
        summary: 'The invoice as a PDF (a draft is marked DRAFT, a void invoice VOID)',
        params: idParams,
        response: { 200: { description: 'The invoice as a PDF', content: { 'application/pdf': { schema: invoicePdfResponse } } } },
      },
    },
    async (request, reply) => {
      const pdf = await getInvoicePdf(readCtx(deps, request), request.params.id);
      // A Buffer is sent as is (no serializer): the response schema only documents the route, so
      // the reply is used untyped here rather than pretending the PDF is a string.
      return (reply as FastifyReply)
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${pdf.filename}"`)
        .header('cache-control', 'private, no-cache')
        .send(pdf.content);
    },
  );
  app.get(
    '/v1/credit-notes/:id/pdf',
    {
      schema: {
        tags: ['credit notes'],
        summary: "The credit note as a PDF: a GST credit note with the original invoice's number and date, the reason and the lines",
        params: idParams,
        response: { 200: { description: 'The credit note as a PDF', content: { 'application/pdf': { schema: invoicePdfResponse } } } },
      },
    },
    async (request, reply) => {
      const pdf = await getCreditNotePdf(readCtx(deps, request), request.params.id);
      return (reply as FastifyReply)
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${pdf.filename}"`)
        .header('cache-control', 'private, no-cache')
        .send(pdf.content);
    },
  );
}
