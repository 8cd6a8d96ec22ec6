import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  balanceTransactionSchema,
  balanceTransactionsQuery,
  customerBalance,
  customerBalanceSchema,
  listBalanceTransactions,
} from '../../modules/balances/index.js';
import { listLuts, lutListSchema, lutParams, lutSchema, putLut, putLutBody } from '../../modules/entities/index.js';
import { advanceSchema, getAdvance, listAdvances, listAdvancesQuery, refundAdvanceBody } from '../../modules/advances/index.js';
import { refundCustomerAdvance } from '../../flows/collections/refund-advance.js';

/** Customer advances: receipt vouchers (rule 50), their uses, and refund vouchers (rule 51). */
export function registerAdvanceRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/advances',
    {
      schema: {
        tags: ['advances'],
        summary: 'List customer advances (money received before any invoice), newest first',
        querystring: listAdvancesQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(advanceSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { advances, total } = await listAdvances(readCtx(deps, request), request.query, page);
      return listResponse(advances, total, page);
    },
  );
  app.get(
    '/v1/advances/:id',
    {
      schema: {
        tags: ['advances'],
        summary: 'Get an advance: its receipt voucher and every use',
        params: idParams,
        response: { 200: dataEnvelope(advanceSchema) },
      },
    },
    async (request) => ({ data: await getAdvance(readCtx(deps, request), request.params.id) }),
  );
  app.post(
    '/v1/advances/:id/refunds',
    {
      schema: {
        tags: ['advances'],
        summary:
          "Refund (part of) an advance's balance with a refund voucher; the GST on it is reversed; paid back through the gateway of a gateway payment, else by hand (refunds payable)",
        params: idParams,
        body: refundAdvanceBody,
        response: { 201: dataEnvelope(advanceSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await refundCustomerAdvance(ctx, request.params.id, request.body) } })),
  );
  app.get(
    '/v1/customers/:id/balance',
    {
      schema: {
        tags: ['customers'],
        summary: 'What the customer can spend, per currency and source (advances, credit notes)',
        params: idParams,
        response: { 200: dataEnvelope(customerBalanceSchema) },
      },
    },
    async (request) => ({ data: await customerBalance(readCtx(deps, request), request.params.id) }),
  );
  app.get(
    '/v1/customers/:id/balance-transactions',
    {
      schema: {
        tags: ['customers'],
        summary: "Every movement of the customer's balance with its document, newest first",
        params: idParams,
        querystring: balanceTransactionsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(balanceTransactionSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { transactions, total } = await listBalanceTransactions(readCtx(deps, request), request.params.id, request.query, page);
      return listResponse(transactions, total, page);
    },
  );
}

/** Letters of Undertaking per financial year (decision 0282). */
export function registerLutRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/entities/:id/luts',
    {
      schema: {
        tags: ['entities'],
        summary: "The entity's Letters of Undertaking per financial year, and whether one is in force now",
        params: idParams,
        response: { 200: dataEnvelope(lutListSchema) },
      },
    },
    async (request) => ({ data: await listLuts(readCtx(deps, request), request.params.id) }),
  );
  app.put(
    '/v1/entities/:id/luts/:financial_year',
    {
      schema: {
        tags: ['entities'],
        summary: "Record a financial year's Letter of Undertaking with its ARN (exports and SEZ supplies without IGST in that year)",
        params: lutParams,
        body: putLutBody,
        response: { 200: dataEnvelope(lutSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await putLut(ctx, request.params.id, request.params.financial_year, request.body.arn) },
      })),
  );
}
