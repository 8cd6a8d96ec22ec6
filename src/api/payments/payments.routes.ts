import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { recordOfflinePayment } from '../../flows/payments/record-offline-payment.js';
import { certifyWithheldTds } from '../../flows/payments/certify-payment-tds.js';
import { parseTdsCodeTable } from '../../modules/invoices/index.js';
import { certifyPaymentTdsBody, listPaymentsQuery, paymentSchema, recordOfflinePaymentBody } from '../../modules/payments/index.js';
import { getPayment, listPayments } from '../../modules/payments/index.js';

export function registerPaymentRoutes(app: KoshApp, deps: AppDeps): void {
  const tdsCodes = parseTdsCodeTable(deps.config.tdsCodes);
  app.post(
    '/v1/payments/offline',
    {
      schema: {
        errors: ['not_found'],
        tags: ['payments'],
        summary: 'Record an offline payment (bank transfer, cash, cheque), optionally with TDS',
        body: recordOfflinePaymentBody,
        response: { 201: dataEnvelope(paymentSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await recordOfflinePayment(ctx, request.body) } })),
  );
  app.post(
    '/v1/payments/:id/tds-certificate',
    {
      schema: {
        errors: ['not_found', 'conflict'],
        tags: ['payments'],
        summary: 'Record the certificate (Form 16A; Form 131 from 1 April 2026) for the TDS the customer withheld with this payment',
        params: idParams,
        body: certifyPaymentTdsBody,
        response: { 200: dataEnvelope(paymentSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await certifyWithheldTds(ctx, request.params.id, request.body, tdsCodes) },
      })),
  );
  app.get(
    '/v1/payments',
    {
      schema: {
        tags: ['payments'],
        summary: 'List payments',
        querystring: listPaymentsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(paymentSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { payments, total } = await listPayments(readCtx(deps, request), request.query, page);
      return listResponse(payments, total, page);
    },
  );
  // A static path: the router prefers it to `/:id`, so it is not read as a payment id.
  app.get(
    '/v1/payments/offline',
    {
      schema: {
        tags: ['payments'],
        summary: 'List offline payments (bank transfer, cash, cheque recorded through POST /v1/payments/offline)',
        querystring: listPaymentsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(paymentSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { payments, total } = await listPayments(readCtx(deps, request), { ...request.query, channel: 'offline' }, page);
      return listResponse(payments, total, page);
    },
  );
  app.get(
    '/v1/payments/:id',
    { schema: { tags: ['payments'], summary: 'Get a payment', params: idParams, response: { 200: dataEnvelope(paymentSchema) } } },
    async (request) => ({ data: await getPayment(readCtx(deps, request), request.params.id) }),
  );
}
