import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import type { EinvoiceDocumentType } from '../../modules/einvoicing/index.js';
import { z } from 'zod';
import { cancelEinvoiceBody, einvoiceSchema, reportDueQuery, reportDueSchema, retryEinvoiceBody } from '../../modules/einvoicing/index.js';
import { retryEinvoiceOfDocument } from '../../flows/einvoicing/retry-einvoice.js';
import { cancelEinvoiceOfDocument } from '../../flows/einvoicing/cancel-einvoice.js';
import { einvoicesDueForReport, getEinvoice } from '../../modules/einvoicing/index.js';

export function registerEinvoicingRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/einvoices/report-due',
    {
      schema: {
        tags: ['invoices'],
        summary:
          'Documents not yet reported to the IRP whose 30-day limit (₹10 crore or more AATO) ends within `days` days, soonest first (at most 200; decision 0363)',
        querystring: reportDueQuery,
        response: { 200: dataEnvelope(z.array(reportDueSchema)) },
      },
    },
    async (request) => ({ data: await einvoicesDueForReport(readCtx(deps, request), request.query.days) }),
  );
  const resources: { prefix: string; type: EinvoiceDocumentType; tag: string }[] = [
    { prefix: '/v1/invoices', type: 'invoice', tag: 'invoices' },
    { prefix: '/v1/credit-notes', type: 'credit_note', tag: 'credit notes' },
  ];
  for (const { prefix, type, tag } of resources) {
    app.get(
      `${prefix}/:id/einvoice`,
      {
        schema: {
          tags: [tag],
          summary: "The document's e-invoice (IRN) registration (DESIGN §15)",
          params: idParams,
          response: { 200: dataEnvelope(einvoiceSchema) },
        },
      },
      async (request) => ({ data: await getEinvoice(readCtx(deps, request), type, request.params.id) }),
    );
    app.post(
      `${prefix}/:id/einvoice/cancel`,
      {
        schema: {
          tags: [tag],
          summary: "Cancel the IRN within 24 hours of its generation (reason codes 1–4); an invoice's cancel voids the invoice too; else 409",
          params: idParams,
          body: cancelEinvoiceBody,
          response: { 200: dataEnvelope(einvoiceSchema) },
        },
      },
      (request, reply) =>
        runAction(deps, request, reply, async (ctx) => ({
          status: 200,
          body: { data: await cancelEinvoiceOfDocument(ctx, type, request.params.id, request.body.reason_code, request.body.remarks) },
        })),
    );

    app.post(
      `${prefix}/:id/einvoice/retry`,
      {
        schema: {
          tags: [tag],
          summary: 'Resubmit a failed e-invoice registration (after fixing the data); 409 unless failed',
          params: idParams,
          body: retryEinvoiceBody,
          response: { 202: dataEnvelope(einvoiceSchema) },
        },
      },
      (request, reply) =>
        runAction(deps, request, reply, async (ctx) => ({
          status: 202,
          body: { data: await retryEinvoiceOfDocument(ctx, type, request.params.id, request.body?.refresh_buyer ?? true) },
        })),
    );
  }
}
