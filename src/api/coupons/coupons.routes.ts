import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { couponSchema, createCouponBody, listCouponsQuery, updateCouponBody } from '../../modules/coupons/index.js';
import { createCoupon, getCoupon, listCoupons, updateCoupon } from '../../modules/coupons/index.js';

export function registerCouponRoutes(app: KoshApp, deps: AppDeps): void {
  const tags = ['coupons'];
  app.post(
    '/v1/coupons',
    {
      schema: {
        errors: ['not_found'],
        tags,
        summary: 'Create a coupon (percent_off or amount_off + currency; once, repeating or forever)',
        body: createCouponBody,
        response: { 201: dataEnvelope(couponSchema) },
      },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createCoupon(ctx, request.body) } })),
  );
  app.get(
    '/v1/coupons',
    {
      schema: { tags, summary: 'List coupons', querystring: listCouponsQuery.extend(paginationQuery()), response: { 200: listEnvelope(couponSchema) } },
    },
    async (request) => {
      const page = toPage(request.query);
      const { coupons, total } = await listCoupons(readCtx(deps, request), request.query, page);
      return listResponse(coupons, total, page);
    },
  );
  app.get(
    '/v1/coupons/:id',
    { schema: { tags, summary: 'Get a coupon', params: idParams, response: { 200: dataEnvelope(couponSchema) } } },
    async (request) => ({
      data: await getCoupon(readCtx(deps, request), request.params.id),
    }),
  );
  app.patch(
    '/v1/coupons/:id',
    {
      schema: {
        tags,
        summary: 'Rename or (de)activate a coupon; its terms never change',
        params: idParams,
        body: updateCouponBody,
        response: { 200: dataEnvelope(couponSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateCoupon(ctx, request.params.id, request.body) } })),
  );
}
