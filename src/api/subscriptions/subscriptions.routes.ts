import { customerNow, subscriptionInstant, subscriptionNow } from '../../flows/test-clocks/clock-time.js';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { principalOf, readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { cancelSubscription, previewSubscriptionCancellation } from '../../flows/subscriptions/cancel-subscription.js';
import { changeSubscriptionPlan, previewSubscriptionPlanChange, renderPlanChange } from '../../flows/subscriptions/change-subscription-plan.js';
import { createSubscription } from '../../flows/subscriptions/create-subscription.js';
import { changeSubscriptionQuantity, previewSubscriptionQuantityChange } from '../../flows/subscriptions/change-subscription-quantity.js';
import { applySubscriptionDiscount } from '../../flows/subscriptions/apply-subscription-discount.js';
import { applyDiscountBody, discountSchema, findCoupon, removeSubscriptionDiscount, toDiscount } from '../../modules/coupons/index.js';
import { resumeSubscription } from '../../flows/subscriptions/resume-subscription.js';
import { subscriptionUsage, upcomingInvoice } from '../../flows/subscriptions/preview-subscription-usage.js';
import { upcomingInvoiceSchema } from '../../modules/invoices/index.js';
import { registerSubscriptionItemRoutes } from './subscription-items.routes.js';
import {
  canceledSubscriptionSchema,
  cancelSubscriptionBody,
  changePlanBody,
  createSubscriptionBody,
  listSubscriptionsQuery,
  planChangeSchema,
  subscriptionSchema,
  subscriptionUsageSchema,
  subscriptionUpdateSchema,
  updateSubscriptionBody,
} from '../../modules/subscriptions/index.js';
import {
  getSubscription,
  getSubscriptionRow,
  listSubscriptions,
  minimumCommitmentBody,
  pauseSubscription,
  reactivateSubscription,
  removeMinimumCommitment,
  setMinimumCommitment,
  toSubscription,
} from '../../modules/subscriptions/index.js';

export function registerSubscriptionRoutes(app: KoshApp, deps: AppDeps): void {
  registerSubscriptionItemRoutes(app, deps);
  const tags = ['subscriptions'];
  const one = { 200: dataEnvelope(subscriptionSchema) };

  app.post(
    '/v1/subscriptions',
    {
      schema: {
        errors: ['not_found'],
        tags,
        summary: 'Create a subscription (trialing, or active with its first invoice finalized)',
        body: createSubscriptionBody,
        response: { 201: dataEnvelope(subscriptionSchema.extend({ discount: discountSchema.nullable().optional() })) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const { row, discount } = await createSubscription(await customerNow(ctx, request.body.customer_id), request.body);
        const coupon = discount ? await findCoupon(ctx.tx, ctx.tenantId, discount.coupon_id) : undefined;
        return { status: 201, body: { data: { ...toSubscription(row), ...(discount && coupon ? { discount: toDiscount(discount, coupon) } : {}) } } };
      }),
  );

  app.patch(
    '/v1/subscriptions/:id',
    {
      schema: {
        tags,
        summary: 'Change the quantity (seats) now, prorated to the day like a plan change (preview: nothing written)',
        params: idParams,
        body: updateSubscriptionBody,
        response: { 200: dataEnvelope(subscriptionUpdateSchema) },
      },
    },
    async (request, reply) => {
      const { preview, ...change } = request.body;
      if (preview) {
        const { tenantId } = principalOf(request);
        const at = await subscriptionInstant(deps.db, tenantId, deps.clock.now(), request.params.id);
        const data = await previewSubscriptionQuantityChange(deps.db, tenantId, at, request.params.id, change);
        return reply.code(200).send({ data });
      }
      return runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await changeSubscriptionQuantity(await subscriptionNow(ctx, request.params.id), request.params.id, change) },
      }));
    },
  );

  // Minimum commitments (DESIGN §24, decision 0540). On a test clock's customer, "now" is the clock's.
  app.put(
    '/v1/subscriptions/:id/minimum-commitment',
    {
      schema: {
        tags,
        summary: "Set or replace the subscription's minimum commitment per period (a true-up line bills any shortfall at the period's end)",
        params: idParams,
        body: minimumCommitmentBody,
        response: { 200: dataEnvelope(subscriptionSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const row = await getSubscriptionRow(ctx, request.params.id);
        const at = await customerNow(ctx, row.customer_id);
        return { status: 200, body: { data: toSubscription(await setMinimumCommitment(at, request.params.id, request.body)) } };
      }),
  );

  app.delete(
    '/v1/subscriptions/:id/minimum-commitment',
    {
      schema: {
        tags,
        summary: "End the subscription's minimum commitment (the period in progress is no longer trued up)",
        params: idParams,
        response: { 200: dataEnvelope(subscriptionSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const row = await getSubscriptionRow(ctx, request.params.id);
        const at = await customerNow(ctx, row.customer_id);
        return { status: 200, body: { data: toSubscription(await removeMinimumCommitment(at, request.params.id)) } };
      }),
  );

  app.post(
    '/v1/subscriptions/:id/discount',
    {
      schema: {
        tags,
        summary: "Apply a coupon (id or code) to the subscription's next invoices; replaces the discount in force",
        params: idParams,
        body: applyDiscountBody,
        response: { 200: dataEnvelope(subscriptionSchema.extend({ discount: discountSchema })) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const { row, discount, coupon } = await applySubscriptionDiscount(ctx, request.params.id, request.body.coupon);
        return { status: 200, body: { data: { ...toSubscription(row), discount: toDiscount(discount, coupon) } } };
      }),
  );

  app.delete(
    '/v1/subscriptions/:id/discount',
    { schema: { tags, summary: 'End the discount in force on the subscription', params: idParams, response: { 200: dataEnvelope(discountSchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        await getSubscription(ctx, request.params.id);
        const ended = await removeSubscriptionDiscount(ctx, request.params.id);
        const coupon = await findCoupon(ctx.tx, ctx.tenantId, ended.coupon_id);
        return { status: 200, body: { data: toDiscount(ended, coupon!) } };
      }),
  );

  app.get(
    '/v1/subscriptions',
    {
      schema: {
        tags,
        summary: 'List subscriptions (filters: status, customer_id, plan_id)',
        querystring: listSubscriptionsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(subscriptionSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { subscriptions, total } = await listSubscriptions(readCtx(deps, request), request.query, page);
      return listResponse(subscriptions, total, page);
    },
  );

  app.get(
    '/v1/subscriptions/:id/usage',
    {
      schema: {
        tags,
        summary: "The current period's usage of each metered price, and its amount so far",
        params: idParams,
        response: { 200: dataEnvelope(subscriptionUsageSchema) },
      },
    },
    async (request) => ({ data: await subscriptionUsage(readCtx(deps, request), request.params.id) }),
  );

  app.get(
    '/v1/subscriptions/:id/upcoming-invoice',
    {
      schema: {
        errors: ['conflict'],
        tags,
        summary: 'The invoice the next renewal would issue now (usage so far, next fixed fee, GST), computed without writing',
        params: idParams,
        response: { 200: dataEnvelope(upcomingInvoiceSchema) },
      },
    },
    async (request) => ({ data: await upcomingInvoice(readCtx(deps, request), request.params.id) }),
  );

  app.get('/v1/subscriptions/:id', { schema: { tags, summary: 'Get a subscription', params: idParams, response: one } }, async (request) => ({
    data: await getSubscription(readCtx(deps, request), request.params.id),
  }));

  app.post(
    '/v1/subscriptions/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel at period end (default) or now, optionally crediting the unused time, with a reason and feedback (preview: nothing written)',
        params: idParams,
        body: cancelSubscriptionBody.nullish(),
        response: { 200: dataEnvelope(canceledSubscriptionSchema) },
      },
    },
    async (request, reply) => {
      const { preview, ...body } = cancelSubscriptionBody.parse(request.body ?? {});
      if (preview) {
        const { tenantId } = principalOf(request);
        const at = await subscriptionInstant(deps.db, tenantId, deps.clock.now(), request.params.id);
        const data = await previewSubscriptionCancellation(deps.db, tenantId, at, request.params.id, body);
        return reply.code(200).send({ data });
      }
      return runAction(deps, request, reply, async (ctx) => {
        const { row, proration } = await cancelSubscription(await subscriptionNow(ctx, request.params.id), request.params.id, body);
        return { status: 200, body: { data: { ...toSubscription(row), ...(proration ? { proration } : {}) } } };
      });
    },
  );

  app.post(
    '/v1/subscriptions/:id/pause',
    { schema: { tags, summary: 'Pause billing (active or past_due)', params: idParams, response: one } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: toSubscription(await pauseSubscription(await subscriptionNow(ctx, request.params.id), request.params.id)) },
      })),
  );

  app.post(
    '/v1/subscriptions/:id/resume',
    { schema: { tags, summary: 'Resume a paused subscription (a lapsed period restarts now, invoiced)', params: idParams, response: one } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: toSubscription(await resumeSubscription(await subscriptionNow(ctx, request.params.id), request.params.id)) },
      })),
  );

  app.post(
    '/v1/subscriptions/:id/reactivate',
    { schema: { tags, summary: 'Undo a pending cancel_at_period_end before the period ends', params: idParams, response: one } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: toSubscription(await reactivateSubscription(await subscriptionNow(ctx, request.params.id), request.params.id)) },
      })),
  );

  app.post(
    '/v1/subscriptions/:id/change-plan',
    {
      schema: {
        tags,
        summary: 'Change plan now, prorated to the day (preview: the would-be invoice, nothing written)',
        params: idParams,
        body: changePlanBody,
        response: { 200: dataEnvelope(planChangeSchema) },
      },
    },
    async (request, reply) => {
      const { preview, ...change } = request.body;
      if (preview) {
        const { tenantId } = principalOf(request);
        const at = await subscriptionInstant(deps.db, tenantId, deps.clock.now(), request.params.id);
        const data = await previewSubscriptionPlanChange(deps.db, tenantId, at, request.params.id, change);
        return reply.code(200).send({ data });
      }
      return runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: {
          data: await renderPlanChange(ctx, await changeSubscriptionPlan(await subscriptionNow(ctx, request.params.id), request.params.id, change), false),
        },
      }));
    },
  );
}
