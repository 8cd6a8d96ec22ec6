import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { cancelGift } from '../../flows/gifts/cancel-gift.js';
import { purchaseGift } from '../../flows/gifts/purchase-gift.js';
import { renderCreditNote } from '../../modules/credit-notes/index.js';
import { cancelGiftResponse, createGiftBody, giftSchema, listGiftsQuery } from '../../modules/gifts/index.js';
import { getGift, listGifts, toGift } from '../../modules/gifts/index.js';

export function registerGiftRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/gifts',
    {
      schema: {
        errors: ['not_found'],
        tags: ['gifts'],
        summary: 'Buy a gift: the gift code and its purchase invoice (finalized, open)',
        body: createGiftBody,
        response: { 201: dataEnvelope(giftSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: toGift(await purchaseGift(ctx, request.body)) } })),
  );

  app.get(
    '/v1/gifts',
    { schema: { tags: ['gifts'], summary: 'List gifts', querystring: listGiftsQuery.extend(paginationQuery()), response: { 200: listEnvelope(giftSchema) } } },
    async (request) => {
      const page = toPage(request.query);
      const { gifts, total } = await listGifts(readCtx(deps, request), request.query, page);
      return listResponse(gifts, total, page);
    },
  );

  app.get(
    '/v1/gifts/:id',
    { schema: { tags: ['gifts'], summary: 'Get a gift', params: idParams, response: { 200: dataEnvelope(giftSchema) } } },
    async (request) => ({ data: await getGift(readCtx(deps, request), request.params.id) }),
  );

  app.post(
    '/v1/gifts/:id/cancel',
    {
      schema: {
        tags: ['gifts'],
        summary: 'Cancel a purchased gift and settle its purchase invoice (credit note if paid, void if open)',
        params: idParams,
        response: { 200: cancelGiftResponse },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const { gift, creditNote, invoiceVoided } = await cancelGift(ctx, request.params.id);
        return {
          status: 200,
          body: {
            data: { gift: toGift(gift), ...(creditNote ? { credit_note: await renderCreditNote(ctx, creditNote) } : {}), invoice_voided: invoiceVoided },
          },
        };
      }),
  );
}
