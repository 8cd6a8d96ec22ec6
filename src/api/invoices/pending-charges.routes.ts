import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { addCustomerPendingCharge } from '../../flows/invoices/add-pending-charge.js';
import { addPendingChargeBody, deletePendingCharge, listPendingCharges, pendingChargeSchema, toPendingCharge } from '../../modules/invoices/index.js';

const tags = ['invoices'];
const chargeParams = idParams.extend({ charge_id: z.uuid({ message: 'must be a UUID' }) });

/** One-off charges on a customer's (or subscription's) next invoice (DESIGN §24, decision 0380). */
export function registerPendingChargeRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/customers/:id/pending-charges',
    {
      schema: {
        tags,
        summary: "Add a one-off charge to the customer's (or one subscription's) next invoice, as its own line taxed by its own HSN/SAC",
        params: idParams,
        body: addPendingChargeBody,
        response: { 201: dataEnvelope(pendingChargeSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: { data: toPendingCharge(await addCustomerPendingCharge(ctx, request.params.id, request.body)) },
      })),
  );

  app.get(
    '/v1/customers/:id/pending-charges',
    {
      schema: {
        tags,
        summary: "List a customer's one-off charges, oldest first (up to 1000): pending, and invoiced with the invoice that took them",
        params: idParams,
        querystring: z.object({ status: z.enum(['pending', 'invoiced']).optional() }),
        response: { 200: z.object({ data: z.array(pendingChargeSchema) }) },
      },
    },
    async (request) => ({ data: (await listPendingCharges(readCtx(deps, request), request.params.id, request.query.status)).map(toPendingCharge) }),
  );

  app.delete(
    '/v1/customers/:id/pending-charges/:charge_id',
    {
      schema: {
        tags,
        summary: 'Delete a one-off charge while it is pending (409 once an invoice took it)',
        params: chargeParams,
        response: { 200: dataEnvelope(pendingChargeSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: toPendingCharge(await deletePendingCharge(ctx, request.params.id, request.params.charge_id)) },
      })),
  );
}
