import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { cancelSubscription, previewSubscriptionCancellation } from '../../flows/subscriptions/cancel-subscription.js';
import { changeSubscriptionPlan, previewSubscriptionPlanChange, renderPlanChange } from '../../flows/subscriptions/change-subscription-plan.js';
import { changeSubscriptionQuantity, previewSubscriptionQuantityChange } from '../../flows/subscriptions/change-subscription-quantity.js';
import { createCheckoutSession, prepareCheckout } from '../../flows/collections/checkout-invoice.js';
import { acceptRetentionOffer, retentionOfferFor } from '../../flows/subscriptions/accept-retention-offer.js';
import { subscriptionInstant, subscriptionNow } from '../../flows/test-clocks/clock-time.js';
import { discountSchema, portalRetentionOfferSchema } from '../../modules/coupons/index.js';
import { creditNoteSchema } from '../../modules/credit-notes/index.js';
import { customerSchema } from '../../modules/customers/index.js';
import {
  canceledSubscriptionSchema,
  planChangeSchema,
  subscriptionSchema,
  subscriptionUpdateSchema,
  toSubscription,
  type CancellationReason,
} from '../../modules/subscriptions/index.js';
import {
  assertPortalAllows,
  billingDetailsBody,
  checkoutLinkSchema,
  invoicePdfResponse,
  ownInvoice,
  ownSubscription,
  planChoiceSchema,
  portalCancelBody,
  portalRetentionOfferBody,
  portalRetentionOfferQuery,
  portalCreditNotePdf,
  portalCreditNotes,
  portalPermissions,
  portalPermissionsSchema,
  portalPlanBody,
  portalPlanChoices,
  portalQuantityBody,
  portalStatementCsv,
  statementResponse,
  updateBillingDetails,
  type PortalPermissions,
  type PortalSession,
} from '../../modules/portal/index.js';

/** What the audit log records of a portal action (the actor is the session's customer). */
export type PortalAudit = { action: string; objectType: string; objectId: string | null };

/** What the portal's routes share with these (registerPortalRoutes makes them). */
export type PortalKit = {
  deps: AppDeps;
  now: () => Date;
  session: (request: FastifyRequest) => PortalSession;
  ctxOf: (session: PortalSession) => ReadCtx;
  inTransaction: <T>(session: PortalSession, audit: PortalAudit, work: (ctx: Ctx) => Promise<T>) => Promise<T>;
  requireSession: preHandlerAsyncHookHandler;
  requireSameOrigin: preHandlerAsyncHookHandler;
};

type CancelInput = { reason?: z.infer<typeof portalCancelBody>['reason']; feedback?: string | undefined };

/**
 * The self-service actions (decision 0500), each the API's own flow on the customer's own record,
 * and only where the tenant's portal settings allow it. Used by the JSON routes below and by the
 * pages' forms (portal.routes.ts), so both take one path.
 */
export function selfService(kit: PortalKit) {
  const { deps } = kit;
  const collections = { db: deps.db, config: deps.config, secrets: deps.secrets, scope: deps.scope };
  const allowed = async (s: PortalSession) => portalPermissions(kit.ctxOf(s));
  /** When a previewed change would happen: the customer's test clock's time when it lives on one. */
  const at = (s: PortalSession, subscriptionId: string) => subscriptionInstant(deps.db, s.tenantId, kit.now(), subscriptionId);
  const cancelMode = (permissions: PortalPermissions) => {
    assertPortalAllows(permissions.cancellation !== 'disabled', 'Cancelling a subscription');
    return permissions.cancellation === 'immediately' ? { at_period_end: false, prorate: true } : { at_period_end: true, prorate: false };
  };
  return {
    permissions: allowed,
    /** A hosted checkout link for any of the customer's open invoices (the API's checkout session). */
    async checkout(s: PortalSession, invoiceId: string): Promise<{ url: string; provider: string | null }> {
      await ownInvoice(kit.ctxOf(s), s.customerId, invoiceId);
      const prepared = await prepareCheckout(kit.ctxOf(s), collections, invoiceId);
      const created = await kit.inTransaction(s, { action: 'invoice.checkout', objectType: 'invoice', objectId: invoiceId }, (ctx) =>
        createCheckoutSession(ctx, collections, invoiceId, prepared),
      );
      // `provider`: the page is the provider's (Razorpay, Stripe), reached through Kosh's link.
      return { url: created.url, provider: prepared.redirect ? prepared.gateway : null };
    },
    async cancel(s: PortalSession, subscriptionId: string, input: CancelInput, preview: boolean) {
      await ownSubscription(kit.ctxOf(s), s.customerId, subscriptionId);
      const body = { ...cancelMode(await allowed(s)), reason: input.reason, feedback: input.feedback };
      if (preview) return previewSubscriptionCancellation(deps.db, s.tenantId, await at(s, subscriptionId), subscriptionId, body);
      return kit.inTransaction(s, { action: 'subscription.cancel', objectType: 'subscription', objectId: subscriptionId }, async (ctx) => {
        const { row, proration } = await cancelSubscription(await subscriptionNow(ctx, subscriptionId), subscriptionId, body);
        return { ...toSubscription(row), ...(proration ? { proration } : {}) };
      });
    },
    /** The retention offer for a cancellation reason (decision 0560), where the tenant lets the customer cancel; null when none applies. */
    async retentionOffer(s: PortalSession, subscriptionId: string, reason: CancellationReason) {
      await ownSubscription(kit.ctxOf(s), s.customerId, subscriptionId);
      cancelMode(await allowed(s));
      return retentionOfferFor(kit.ctxOf(s), subscriptionId, reason);
    },
    /** Takes the offer instead of cancelling: the coupon becomes the subscription's discount. */
    async acceptRetentionOffer(s: PortalSession, subscriptionId: string, input: { reason: CancellationReason; feedback?: string | undefined }) {
      await ownSubscription(kit.ctxOf(s), s.customerId, subscriptionId);
      cancelMode(await allowed(s));
      return kit.inTransaction(s, { action: 'subscription.retention_offer_accept', objectType: 'subscription', objectId: subscriptionId }, (ctx) =>
        acceptRetentionOffer(ctx, subscriptionId, input),
      );
    },
    async changeQuantity(s: PortalSession, subscriptionId: string, quantity: number, preview: boolean) {
      await ownSubscription(kit.ctxOf(s), s.customerId, subscriptionId);
      assertPortalAllows((await allowed(s)).quantity_change, 'Changing the number of seats');
      const change = { quantity, proration_behavior: 'create_prorations' as const };
      if (preview) return previewSubscriptionQuantityChange(deps.db, s.tenantId, await at(s, subscriptionId), subscriptionId, change);
      return kit.inTransaction(s, { action: 'subscription.quantity', objectType: 'subscription', objectId: subscriptionId }, async (ctx) =>
        changeSubscriptionQuantity(await subscriptionNow(ctx, subscriptionId), subscriptionId, change),
      );
    },
    async changePlan(s: PortalSession, subscriptionId: string, planId: string, preview: boolean) {
      const subscription = await ownSubscription(kit.ctxOf(s), s.customerId, subscriptionId);
      assertPortalAllows((await allowed(s)).plan_change, 'Changing the plan');
      // Only the plans the portal offers: active, priced in the subscription's currency.
      const choices = await portalPlanChoices(kit.ctxOf(s), subscription);
      if (!choices.some((c) => c.id === planId)) throw errors.invalidField('plan_id', 'this plan is not offered for this subscription in the portal');
      const change = { plan_id: planId, prorate: true };
      if (preview) return previewSubscriptionPlanChange(deps.db, s.tenantId, await at(s, subscriptionId), subscriptionId, change);
      return kit.inTransaction(s, { action: 'subscription.change_plan', objectType: 'subscription', objectId: subscriptionId }, async (ctx) =>
        renderPlanChange(ctx, await changeSubscriptionPlan(await subscriptionNow(ctx, subscriptionId), subscriptionId, change), false),
      );
    },
    async updateBillingDetails(s: PortalSession, input: z.infer<typeof billingDetailsBody>) {
      assertPortalAllows((await allowed(s)).billing_details, 'Updating billing details');
      return kit.inTransaction(s, { action: 'customer.update', objectType: 'customer', objectId: s.customerId }, (ctx) =>
        updateBillingDetails(ctx, s.customerId, input),
      );
    },
  };
}
export type SelfService = ReturnType<typeof selfService>;

const subscriptionParams = z.object({ id: z.uuid() });

export function registerSelfServiceRoutes(portal: FastifyInstance, kit: PortalKit, actions: SelfService): void {
  const app = portal.withTypeProvider<ZodTypeProvider>();
  const { session } = kit;
  const reads = { preHandler: kit.requireSession };
  const writes = { preHandler: [kit.requireSession, kit.requireSameOrigin] };
  const tags = ['portal'];

  app.get(
    '/portal/api/permissions',
    {
      ...reads,
      schema: { tags, summary: 'What the tenant lets the customer do in the portal', security: [], response: { 200: dataEnvelope(portalPermissionsSchema) } },
    },
    async (request) => ({ data: await actions.permissions(session(request)) }),
  );

  app.post(
    '/portal/api/invoices/:id/checkout',
    {
      ...writes,
      schema: {
        errors: ['conflict', 'unprocessable'],
        tags,
        summary: "A hosted checkout link to pay one of the customer's open invoices (any open invoice, not only overdue ones)",
        security: [],
        params: idParams,
        response: { 201: dataEnvelope(checkoutLinkSchema) },
      },
    },
    async (request, reply) => reply.code(201).send({ data: { url: (await actions.checkout(session(request), request.params.id)).url } }),
  );

  app.post(
    '/portal/api/subscriptions/:id/cancel',
    {
      ...writes,
      schema: {
        errors: ['conflict', 'unprocessable'],
        tags,
        summary:
          "Cancel one of the customer's subscriptions as the tenant allows (at period end, or now with the unused time credited); preview: nothing written",
        security: [],
        params: subscriptionParams,
        body: portalCancelBody,
        response: { 200: dataEnvelope(canceledSubscriptionSchema) },
      },
    },
    async (request) => {
      const { preview, ...input } = request.body;
      return { data: await actions.cancel(session(request), request.params.id, input, preview) };
    },
  );

  app.get(
    '/portal/api/subscriptions/:id/retention-offer',
    {
      ...reads,
      schema: {
        errors: ['forbidden'],
        tags,
        summary: 'The offer (a coupon) the tenant makes a customer cancelling for this reason, or null; ask before the cancellation',
        security: [],
        params: subscriptionParams,
        querystring: portalRetentionOfferQuery,
        response: { 200: z.object({ data: portalRetentionOfferSchema.nullable() }) },
      },
    },
    async (request) => ({ data: await actions.retentionOffer(session(request), request.params.id, request.query.reason) }),
  );

  app.post(
    '/portal/api/subscriptions/:id/retention-offer',
    {
      ...writes,
      schema: {
        errors: ['conflict', 'unprocessable'],
        tags,
        summary: 'Accept the retention offer for this reason instead of cancelling: its coupon becomes the subscription’s discount (409 when none applies)',
        security: [],
        params: subscriptionParams,
        body: portalRetentionOfferBody,
        response: { 200: dataEnvelope(subscriptionSchema.extend({ discount: discountSchema, retention_offer: portalRetentionOfferSchema })) },
      },
    },
    async (request) => ({ data: await actions.acceptRetentionOffer(session(request), request.params.id, request.body) }),
  );

  app.post(
    '/portal/api/subscriptions/:id/quantity',
    {
      ...writes,
      schema: {
        errors: ['conflict', 'unprocessable'],
        tags,
        summary: "Change the seats of one of the customer's subscriptions, prorated as PATCH /v1/subscriptions/{id}; preview: nothing written",
        security: [],
        params: subscriptionParams,
        body: portalQuantityBody,
        response: { 200: dataEnvelope(subscriptionUpdateSchema) },
      },
    },
    async (request) => ({ data: await actions.changeQuantity(session(request), request.params.id, request.body.quantity, request.body.preview) }),
  );

  app.get(
    '/portal/api/subscriptions/:id/plans',
    {
      ...reads,
      schema: {
        tags,
        summary: 'The plans the customer may change this subscription to',
        security: [],
        params: subscriptionParams,
        response: { 200: listEnvelope(planChoiceSchema) },
      },
    },
    async (request) => {
      const s = session(request);
      const subscription = await ownSubscription(kit.ctxOf(s), s.customerId, request.params.id);
      const permissions = await actions.permissions(s);
      const choices = permissions.plan_change ? await portalPlanChoices(kit.ctxOf(s), subscription) : [];
      return listResponse(choices, choices.length, { limit: 100, page: 1, offset: 0 });
    },
  );

  app.post(
    '/portal/api/subscriptions/:id/change-plan',
    {
      ...writes,
      schema: {
        errors: ['conflict', 'unprocessable'],
        tags,
        summary: "Change the plan of one of the customer's subscriptions, prorated as POST /v1/subscriptions/{id}/change-plan; preview: nothing written",
        security: [],
        params: subscriptionParams,
        body: portalPlanBody,
        response: { 200: dataEnvelope(planChangeSchema) },
      },
    },
    async (request) => ({ data: await actions.changePlan(session(request), request.params.id, request.body.plan_id, request.body.preview) }),
  );

  app.patch(
    '/portal/api/billing-details',
    {
      ...writes,
      schema: {
        errors: ['conflict', 'unprocessable'],
        tags,
        summary: "Update the customer's GSTIN, billing address and billing e-mail (validated as PATCH /v1/customers/{id})",
        security: [],
        body: billingDetailsBody,
        response: { 200: dataEnvelope(customerSchema) },
      },
    },
    async (request) => ({ data: await actions.updateBillingDetails(session(request), request.body) }),
  );

  app.get(
    '/portal/api/credit-notes',
    {
      ...reads,
      schema: {
        tags,
        summary: "The customer's credit notes (pending and rejected ones excluded)",
        security: [],
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(creditNoteSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { notes, total } = await portalCreditNotes(kit.ctxOf(session(request)), session(request).customerId, page);
      return listResponse(notes, total, page);
    },
  );

  app.get(
    '/portal/api/credit-notes/:id/pdf',
    {
      ...reads,
      schema: {
        tags,
        summary: "One of the customer's credit notes as a PDF",
        security: [],
        params: idParams,
        response: { 200: { description: 'The credit note as a PDF', content: { 'application/pdf': { schema: invoicePdfResponse } } } },
      },
    },
    async (request, reply) => {
      const pdf = await portalCreditNotePdf(kit.ctxOf(session(request)), session(request).customerId, request.params.id);
      return (reply as FastifyReply)
        .type('application/pdf')
        .header('content-disposition', `inline; filename="${pdf.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(pdf.content);
    },
  );

  app.get(
    '/portal/api/statement',
    {
      ...reads,
      schema: {
        tags,
        summary: 'The customer balance statement as CSV: every movement with a running balance, and the closing balance',
        security: [],
        response: { 200: { description: 'The statement as CSV', content: { 'text/csv': { schema: statementResponse } } } },
      },
    },
    async (request, reply) => {
      const statement = await portalStatementCsv(kit.ctxOf(session(request)), session(request).customerId);
      return (reply as FastifyReply)
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${statement.filename}"`)
        .header('cache-control', 'private, no-store')
        .send(statement.content);
    },
  );
}
