import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { createCreditGrant, voidCreditGrant } from '../../flows/credits/create-credit-grant.js';
import { setAutoTopUp } from '../../flows/credits/auto-top-up.js';
import {
  autoTopUpSchema,
  getAutoTopUp,
  putAutoTopUpBody,
  toAutoTopUp,
  createCreditGrantBody,
  creditGrantListSchema,
  creditGrantSchema,
  getCreditGrantRow,
  listCreditGrants,
  toCreditGrant,
} from '../../modules/credits/index.js';

export function registerCreditRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/customers/:id/credit-grants',
    {
      schema: {
        tags: ['credit-grants'],
        summary:
          'Grant prepaid credit: promotional (spendable now, a discount before GST) or paid (sold through a top-up tax invoice, spendable once it is paid)',
        params: idParams,
        body: createCreditGrantBody,
        response: { 201: dataEnvelope(creditGrantSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: { data: toCreditGrant(await createCreditGrant(ctx, request.params.id, request.body)) },
      })),
  );

  app.get(
    '/v1/customers/:id/credit-grants',
    {
      schema: {
        tags: ['credit-grants'],
        summary: "A customer's credit grants, newest first, and the balance spendable now per currency",
        params: idParams,
        response: { 200: creditGrantListSchema },
      },
    },
    async (request) => {
      const { grants, balances } = await listCreditGrants(readCtx(deps, request), request.params.id);
      return { data: grants.map(toCreditGrant), balances };
    },
  );

  app.get(
    '/v1/credit-grants/:id',
    { schema: { tags: ['credit-grants'], summary: 'Get a credit grant', params: idParams, response: { 200: dataEnvelope(creditGrantSchema) } } },
    async (request) => ({ data: toCreditGrant(await getCreditGrantRow(readCtx(deps, request), request.params.id)) }),
  );

  app.post(
    '/v1/credit-grants/:id/void',
    {
      schema: {
        tags: ['credit-grants'],
        summary: "Void a grant's unspent balance (promotional; a paid one only while its top-up invoice is unpaid, which is voided with it)",
        params: idParams,
        response: { 200: dataEnvelope(creditGrantSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: toCreditGrant(await voidCreditGrant(ctx, request.params.id)) } })),
  );

  app.put(
    '/v1/customers/:id/auto-top-up',
    {
      schema: {
        tags: ['credit-grants'],
        summary: "Set the customer's auto top-up: when spendable paid credit falls below threshold, a paid grant of amount is sold and charged",
        params: idParams,
        body: putAutoTopUpBody,
        response: { 200: dataEnvelope(autoTopUpSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: toAutoTopUp(await setAutoTopUp(ctx, request.params.id, request.body)) } })),
  );

  app.get(
    '/v1/customers/:id/auto-top-up',
    { schema: { tags: ['credit-grants'], summary: "The customer's auto top-up", params: idParams, response: { 200: dataEnvelope(autoTopUpSchema) } } },
    async (request) => ({ data: toAutoTopUp(await getAutoTopUp(readCtx(deps, request), request.params.id)) }),
  );
}
