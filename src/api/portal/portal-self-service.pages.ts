import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReadCtx } from '../../platform/context.js';
import { errors, isKoshError } from '../../platform/errors.js';
import { isUuid } from '../../platform/http/server.js';
import {
  billingDetailsBody,
  ownSubscription,
  portalPermissions,
  portalPlanChoices,
  portalProfile,
  sameToken,
  subscriptionPage,
} from '../../modules/portal/index.js';
import type { CancelPreview, DashboardView, PortalSession, SubscriptionView } from '../../modules/portal/index.js';
import { CANCELLATION_REASONS, type PlanChange, type SubscriptionUpdate } from '../../modules/subscriptions/index.js';
import { findPlan } from '../../modules/plans/index.js';
import type { SelfService } from './portal-self-service.routes.js';

type Pages = {
  sessionOf: (request: FastifyRequest) => Promise<PortalSession | null>;
  dashboard: (s: PortalSession, extra?: Pick<DashboardView, 'notice' | 'error'>) => Promise<string>;
  formField: (request: FastifyRequest, name: string) => string | undefined;
  actions: SelfService;
  ctxOf: (s: PortalSession) => ReadCtx;
  sendPage: (reply: FastifyReply, status: number, html: string) => unknown;
  redirect: (reply: FastifyReply, location: string) => unknown;
  message: (text: string) => string;
};

/**
 * The portal pages' self-service forms (decision 0500): plain HTML that posts and redirects. A
 * change is first previewed (the API's preview: the same flow, rolled back), shown in words, and
 * done only when the customer confirms — through the same actions as the JSON routes.
 */
export function registerSelfServicePages(portal: FastifyInstance, pages: Pages): void {
  const { actions, formField } = pages;
  const idOf = (request: FastifyRequest) => String((request.params as { id?: unknown }).id ?? '');

  const subscriptionView = async (s: PortalSession, id: string, extra: Pick<SubscriptionView, 'error' | 'pending'> = {}) => {
    const ctx = pages.ctxOf(s);
    if (!isUuid(id)) throw errors.notFound('subscription');
    const subscription = await ownSubscription(ctx, s.customerId, id);
    const permissions = await portalPermissions(ctx);
    const plans = permissions.plan_change ? await portalPlanChoices(ctx, subscription) : [];
    const planName = (await findPlan(ctx.tx, ctx.tenantId, subscription.plan_id))?.name ?? '';
    return subscriptionPage({ profile: await portalProfile(ctx, s), subscription: { ...subscription, plan_name: planName }, permissions, plans, ...extra });
  };

  /** A signed-in form post with its CSRF token; refusals of the action are shown on the subscription page. */
  const subscriptionForm = async (
    request: FastifyRequest,
    reply: FastifyReply,
    work: (s: PortalSession, id: string, confirm: boolean) => Promise<SubscriptionView['pending'] | string>,
  ) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    const id = idOf(request);
    try {
      if (!sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
        return pages.sendPage(reply, 403, await subscriptionView(s, id, { error: 'This form had expired. Please try again.' }));
      }
      const outcome = await work(s, id, formField(request, 'step') === 'confirm');
      if (typeof outcome === 'string') return pages.redirect(reply, `/portal?notice=${outcome}`);
      return pages.sendPage(reply, 200, await subscriptionView(s, id, { pending: outcome }));
    } catch (error) {
      if (isKoshError(error) && error.status < 500) {
        if (error.kind === 'not_found') return pages.sendPage(reply, 404, await pages.dashboard(s, { error: 'That subscription was not found.' }));
        return pages.sendPage(reply, error.status, await subscriptionView(s, id, { error: pages.message(error.message) }));
      }
      throw error;
    }
  };

  portal.get('/portal/subscriptions/:id', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    try {
      return await pages.sendPage(reply, 200, await subscriptionView(s, idOf(request)));
    } catch (error) {
      if (isKoshError(error) && error.kind === 'not_found')
        return pages.sendPage(reply, 404, await pages.dashboard(s, { error: 'That subscription was not found.' }));
      throw error;
    }
  });

  portal.post('/portal/subscriptions/:id/quantity', { schema: { hide: true } }, (request, reply) =>
    subscriptionForm(request, reply, async (s, id, confirm) => {
      const quantity = Number(formField(request, 'quantity'));
      if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > 1_000_000)
        throw errors.invalidField('quantity', 'must be a whole number of seats, at least 1');
      if (confirm) {
        await actions.changeQuantity(s, id, quantity, false);
        return 'seats_changed';
      }
      return { kind: 'quantity', quantity, result: (await actions.changeQuantity(s, id, quantity, true)) as SubscriptionUpdate };
    }),
  );

  portal.post('/portal/subscriptions/:id/plan', { schema: { hide: true } }, (request, reply) =>
    subscriptionForm(request, reply, async (s, id, confirm) => {
      const planId = formField(request, 'plan_id') ?? '';
      if (!isUuid(planId)) throw errors.invalidField('plan_id', 'choose a plan');
      if (confirm) {
        await actions.changePlan(s, id, planId, false);
        return 'plan_changed';
      }
      const result = (await actions.changePlan(s, id, planId, true)) as PlanChange;
      const planName = (await findPlan(pages.ctxOf(s).tx, s.tenantId, planId))?.name ?? '';
      return { kind: 'plan', planId, planName, result };
    }),
  );

  portal.post('/portal/subscriptions/:id/cancel', { schema: { hide: true } }, (request, reply) =>
    subscriptionForm(request, reply, async (s, id, confirm) => {
      const reason = formField(request, 'reason') ?? '';
      const known = (CANCELLATION_REASONS as readonly string[]).includes(reason) ? (reason as (typeof CANCELLATION_REASONS)[number]) : undefined;
      if (!known) throw errors.invalidField('reason', 'choose a reason');
      const feedback = (formField(request, 'feedback') ?? '').trim().slice(0, 2000);
      const input = { reason: known, feedback: feedback || undefined };
      if (confirm) {
        await actions.cancel(s, id, input, false);
        return 'cancelled';
      }
      const result = (await actions.cancel(s, id, input, true)) as CancelPreview;
      return { kind: 'cancel', reason, feedback, result, offer: await actions.retentionOffer(s, id, known) };
    }),
  );

  portal.post('/portal/subscriptions/:id/retention-offer', { schema: { hide: true } }, (request, reply) =>
    subscriptionForm(request, reply, async (s, id) => {
      const reason = formField(request, 'reason') ?? '';
      const known = (CANCELLATION_REASONS as readonly string[]).includes(reason) ? (reason as (typeof CANCELLATION_REASONS)[number]) : undefined;
      if (!known) throw errors.invalidField('reason', 'choose a reason');
      const feedback = (formField(request, 'feedback') ?? '').trim().slice(0, 2000);
      await actions.acceptRetentionOffer(s, id, { reason: known, feedback: feedback || undefined });
      return 'offer_accepted';
    }),
  );

  portal.post('/portal/billing-details', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    if (!sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
      return pages.sendPage(reply, 403, await pages.dashboard(s, { error: 'This form had expired. Please try again.' }));
    }
    const text = (name: string) => {
      const value = (formField(request, name) ?? '').trim();
      return value === '' ? null : value;
    };
    const line1 = text('line1');
    const parsed = billingDetailsBody.safeParse({
      email: text('billing_email') ?? undefined,
      gstin: text('gstin')?.toUpperCase() ?? null,
      billing_address: line1
        ? {
            line1,
            line2: text('line2'),
            city: text('city'),
            state_code: text('state_code'),
            postal_code: text('postal_code'),
            country: (text('country') ?? 'IN').toUpperCase(),
          }
        : null,
    });
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      return pages.sendPage(reply, 400, await pages.dashboard(s, { error: pages.message(`${issue.path.join('.')}: ${issue.message}`) }));
    }
    try {
      await actions.updateBillingDetails(s, parsed.data);
    } catch (error) {
      if (isKoshError(error) && error.status < 500)
        return pages.sendPage(reply, error.status, await pages.dashboard(s, { error: pages.message(error.message) }));
      throw error;
    }
    return pages.redirect(reply, '/portal?notice=billing_saved#billing-details');
  });
}
