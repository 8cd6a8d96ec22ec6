import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, fields, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { createInvoice } from '../../flows/invoices/create-invoice.js';
import { applyCustomerBalance, finalizeInvoiceWithCredit } from '../../flows/invoices/finalize-invoice.js';
import { voidInvoiceWithCreditNotes } from '../../flows/invoices/void-invoice.js';
import { recordCertifiedTds } from '../../flows/invoices/record-certified-tds.js';
import { correctGstDetails } from '../../flows/invoices/correct-gst-details.js';
import { journalEntrySchema, listInvoiceJournalEntries } from '../../modules/ledger/index.js';
import { z } from 'zod';
import { irnCancelReasonCode } from '../../modules/einvoicing/index.js';
import { correctGstDetailsBody, createInvoiceBody, invoiceSchema, listInvoicesQuery, parseTdsCodeTable, recordTdsBody } from '../../modules/invoices/index.js';
import { registerPendingChargeRoutes } from './pending-charges.routes.js';
import { getInvoice, getInvoiceRow, listInvoices, markInvoiceUncollectible, renderInvoice } from '../../modules/invoices/index.js';

/** The IRN's cancellation, when the invoice has one (default: reason 4 others, "Invoice voided"). */
const voidInvoiceBody = z
  .object({ reason_code: irnCancelReasonCode.optional(), remarks: fields.requiredText(100).optional() })
  .nullish()
  .describe("an optional body: how the invoice's IRN is canceled with it");

export function registerInvoiceRoutes(app: KoshApp, deps: AppDeps): void {
  registerPendingChargeRoutes(app, deps);
  // The operator's TDS code table, checked once at start-up (a malformed one stops Kosh starting).
  const tdsCodes = parseTdsCodeTable(deps.config.tdsCodes);
  const one = { 200: dataEnvelope(invoiceSchema) };
  app.post(
    '/v1/invoices',
    {
      schema: {
        errors: ['not_found'],
        tags: ['invoices'],
        summary: 'Create an invoice (finalized at once unless auto_finalize is false)',
        body: createInvoiceBody,
        response: { 201: dataEnvelope(invoiceSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        let row = await createInvoice(ctx, request.body);
        if (request.body.auto_finalize) row = await finalizeInvoiceWithCredit(ctx, row.id);
        return { status: 201, body: { data: await renderInvoice(ctx, await getInvoiceRow(ctx, row.id)) } };
      }),
  );
  app.get(
    '/v1/invoices',
    {
      schema: {
        tags: ['invoices'],
        summary: 'List invoices',
        querystring: listInvoicesQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(invoiceSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { invoices, total } = await listInvoices(readCtx(deps, request), request.query, page);
      return listResponse(invoices, total, page);
    },
  );
  app.get('/v1/invoices/:id', { schema: { tags: ['invoices'], summary: 'Get an invoice', params: idParams, response: one } }, async (request) => ({
    data: await getInvoice(readCtx(deps, request), request.params.id),
  }));
  app.post(
    '/v1/invoices/:id/finalize',
    { schema: { tags: ['invoices'], summary: 'Finalize a draft: number, ledger entry, credit applied', params: idParams, response: one } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const row = await finalizeInvoiceWithCredit(ctx, request.params.id);
        return { status: 200, body: { data: await renderInvoice(ctx, await getInvoiceRow(ctx, row.id)) } };
      }),
  );
  app.post(
    '/v1/invoices/:id/apply-balance',
    {
      schema: {
        tags: ['invoices'],
        summary: "Spend the customer's balance on an open invoice now: credit notes, then advances (their GST adjusted, GSTR-1 11B)",
        params: idParams,
        response: one,
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const row = await applyCustomerBalance(ctx, request.params.id);
        return { status: 200, body: { data: await renderInvoice(ctx, row) } };
      }),
  );
  app.post(
    '/v1/invoices/:id/void',
    {
      schema: {
        tags: ['invoices'],
        summary:
          'Void an invoice (keeps its number; reverses the ledger entry; voids its unspent credit notes; cancels its IRN). Only while its tax period is open and any IRN is under 24 hours old; else 409 void_not_allowed: issue a credit note',
        params: idParams,
        body: voidInvoiceBody,
        response: one,
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: {
          data: await renderInvoice(
            ctx,
            await voidInvoiceWithCreditNotes(ctx, request.params.id, { reasonCode: request.body?.reason_code, remarks: request.body?.remarks }),
          ),
        },
      })),
  );
  app.post(
    '/v1/invoices/:id/mark-uncollectible',
    { schema: { tags: ['invoices'], summary: 'Mark an open invoice uncollectible', params: idParams, response: one } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await renderInvoice(ctx, await markInvoiceUncollectible(ctx, request.params.id)) },
      })),
  );
  app.post(
    '/v1/invoices/:id/tds',
    {
      schema: {
        tags: ['invoices'],
        summary: 'Record TDS the customer certified after paying (Form 16A): it settles its part of the invoice',
        params: idParams,
        body: recordTdsBody,
        response: one,
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await renderInvoice(ctx, await recordCertifiedTds(ctx, request.params.id, request.body, tdsCodes)) },
      })),
  );
  app.post(
    '/v1/invoices/:id/gst-details',
    {
      schema: {
        errors: ['not_found', 'conflict'],
        tags: ['invoices'],
        summary:
          "Correct an issued invoice's GST particulars that leave its tax as it was: the place of supply of a small inter-state invoice to an unregistered person (B2CS), an export's shipping bill. A closed month's GSTR-1 declares it in the next return's b2csa / expa (decision 0610); 409 gst_correction_changes_supply otherwise",
        params: idParams,
        body: correctGstDetailsBody,
        response: one,
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await renderInvoice(ctx, await correctGstDetails(ctx, request.params.id, request.body)) },
      })),
  );
  app.get(
    '/v1/invoices/:id/journal-entries',
    {
      schema: {
        tags: ['ledger'],
        summary: "The invoice's journal entries, oldest first",
        params: idParams,
        response: { 200: z.object({ data: z.array(journalEntrySchema) }) },
      },
    },
    async (request) => {
      const ctx = readCtx(deps, request);
      await getInvoiceRow(ctx, request.params.id);
      return { data: await listInvoiceJournalEntries(ctx, request.params.id) };
    },
  );
}
