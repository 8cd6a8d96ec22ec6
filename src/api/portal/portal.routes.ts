import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { errors, isKoshError, type KoshError } from '../../platform/errors.js';
import { limiter, RATE_LIMIT_ABUSE_WINDOW_MS } from '../../platform/http/rate-limits.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { isUuid, runAction, type KoshApp } from '../../platform/http/server.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import { registerSelfServiceRoutes, selfService, type PortalAudit, type PortalKit } from './portal-self-service.routes.js';
import { appendAudit } from '../../platform/audit/audit.js';
import { registerSelfServicePages } from './portal-self-service.pages.js';
import { registerSetupPages, setupOptionsOf } from './portal-setup.pages.js';
import { registerCreditPages } from './portal-credits.pages.js';
import { redeemGift } from '../../flows/gifts/redeem-gift.js';
import { preparePaymentMethod, storePaymentMethod } from '../../flows/collections/save-payment-method.js';
import { listPaymentMethods, makeDefaultPaymentMethod } from '../../modules/collections/index.js';
import { customerAccess } from '../../modules/dunning/index.js';
import { getCustomer } from '../../modules/customers/index.js';
import { invoiceSchema } from '../../modules/invoices/index.js';
import { subscriptionSchema, toSubscription } from '../../modules/subscriptions/index.js';
import { checkEmailPage, dashboardPage, linkInvalidPage, loginPage, payHandoverPage, type DashboardView } from '../../modules/portal/index.js';
import {
  invoicePdfResponse,
  loggedOutResponse,
  loginBody,
  loginResponse,
  portalLinkSchema,
  portalSubscriptionSchema,
  profileSchema,
  redeemBody,
} from '../../modules/portal/index.js';
import {
  authenticate,
  createPortalLink,
  portalInvoicePdf,
  portalCreditNotes,
  portalInvoices,
  portalPermissions,
  portalProfile,
  portalSubscriptions,
  requesterOf,
  requestLoginLink,
  SESSION_TTL_MS,
  signIn,
  signOut,
  type PortalSession,
} from '../../modules/portal/index.js';
import { parseCookies, parseCredential, sameToken, SESSION_COOKIE } from '../../modules/portal/index.js';
import {
  balanceTransactionSchema,
  balanceTransactionsQuery,
  customerBalance,
  customerBalanceSchema,
  listBalanceTransactions,
} from '../../modules/balances/index.js';

declare module 'fastify' {
  interface FastifyRequest {
    portalSession?: PortalSession;
  }
}

const LOGIN_MESSAGE = 'If that address belongs to an account, a sign-in link is on its way.';
const FORM_BODY_LIMIT = 16 * 1024;

/** Pages must not be framed, cached, or leak the sign-in token through Referer. */
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

function sendPage(reply: FastifyReply, status: number, html: string) {
  return reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
}

/**
 * The customer portal (DESIGN §8): `/portal/api/*` JSON for scripts and the `/portal` pages. Not
 * under /v1, so no API key: a `portal_session` cookie (HttpOnly, SameSite=Lax, Secure in live
 * mode, 7 days, stored only as a hash) identifies the customer. JSON writes are authenticated by
 * the cookie alone (SPEC 4.9) and protected from cross-site requests as OWASP advises for JSON
 * APIs: `Sec-Fetch-Site`/`Origin` must not name another site, the body must be application/json,
 * and an X-CSRF-Token, when sent, must be the session's. The HTML forms carry the csrf_token field.
 */
export function registerPortalRoutes(app: KoshApp, deps: AppDeps): void {
  const now = () => deps.clock.now();
  const secure = deps.config.mode === 'live';
  const sessionCookie = (value: string) =>
    `${SESSION_COOKIE}=${value}; Path=/portal; Max-Age=${SESSION_TTL_MS / 1000}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const clearedCookie = `${SESSION_COOKIE}=; Path=/portal; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`;
  const sessionOf = (request: FastifyRequest) => authenticate(deps.db, now(), parseCookies(request.headers.cookie).get(SESSION_COOKIE));
  const ctxOf = (session: PortalSession): ReadCtx => ({ tx: deps.db, tenantId: session.tenantId, now: now() });
  /** A portal action: its transaction, with an audit record naming the customer as the actor (decision 0640). */
  const inTransaction = <T>(session: PortalSession, audit: PortalAudit, work: (ctx: Ctx) => Promise<T>) =>
    deps.db.transaction().execute(async (tx) => {
      const ctx: Ctx = { tx, tenantId: session.tenantId, now: now() };
      const result = await work(ctx);
      await appendAudit(tx, {
        tenantId: session.tenantId,
        actor: { type: 'customer', id: session.customerId, label: 'customer portal' },
        action: audit.action,
        objectType: audit.objectType,
        objectId: audit.objectId,
        changes: {},
        ip: null,
        requestId: null,
        at: ctx.now,
      });
      return result;
    });
  const requireSession = async (request: FastifyRequest) => {
    const session = await sessionOf(request);
    if (!session) throw errors.unauthorized('invalid_session');
    request.portalSession = session;
  };
  const publicOrigin = new URL(deps.config.publicUrl).origin;
  /**
   * A JSON write must come from the portal's own origin or from a non-browser client: browsers
   * say where a request comes from (Sec-Fetch-Site, Origin) and cannot be made to lie; scripts and
   * servers send neither. A cross-site form cannot send application/json without a CORS preflight,
   * which Kosh never answers.
   */
  const requireSameOrigin = async (request: FastifyRequest) => {
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      throw errors.forbidden(`cross-site request refused (Sec-Fetch-Site: ${String(site)})`, 'cross_site_request');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && origin !== publicOrigin && origin !== `${request.protocol}://${request.host}`) {
      throw errors.forbidden('cross-site request refused (Origin is not this portal)', 'cross_site_request');
    }
    const token = request.headers['x-csrf-token'];
    if (token !== undefined && token !== '' && !sameToken(request.portalSession!.csrfToken, token)) {
      throw errors.forbidden('wrong X-CSRF-Token header (GET /portal/api/me gives the token; it may also be left out)', 'csrf_token_invalid');
    }
    const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
    const type = String(request.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim()
      .toLowerCase();
    if (hasBody && type !== 'application/json') {
      throw errors.validation('unsupported Content-Type; send application/json', undefined, 'unsupported_media_type');
    }
  };
  const loginRequests = limiter(app, {
    max: deps.config.rateLimits.portalLogin,
    windowMs: RATE_LIMIT_ABUSE_WINDOW_MS,
    what: 'sign-in requests from this address',
  });
  const wrongCodesByAddress = limiter(app, { max: deps.config.rateLimits.giftCodeFailures, windowMs: RATE_LIMIT_ABUSE_WINDOW_MS, what: 'wrong gift codes' });
  const wrongCodesByCustomer = limiter(app, {
    max: deps.config.rateLimits.giftCodeFailures,
    windowMs: RATE_LIMIT_ABUSE_WINDOW_MS,
    what: 'wrong gift codes',
    key: (request) => `customer:${request.portalSession?.tenantId}:${request.portalSession?.customerId}`,
  });
  /** Redeems with the wrong-code budgets: checked before, spent by a code that is not valid. */
  const redeemCounted = async (request: FastifyRequest, reply: FastifyReply, s: PortalSession, code: string) => {
    request.portalSession = s;
    await wrongCodesByAddress.assertOpen(request, reply);
    await wrongCodesByCustomer.assertOpen(request, reply);
    try {
      return await inTransaction(s, { action: 'gift.redeem', objectType: 'gift', objectId: null }, (ctx) => redeemGift(ctx, s.customerId, code));
    } catch (error) {
      if (isKoshError(error) && error.reason === 'gift_code_invalid') {
        await wrongCodesByAddress.fail(request);
        await wrongCodesByCustomer.fail(request);
      }
      throw error;
    }
  };
  const session = (request: FastifyRequest) => request.portalSession!;

  app.post(
    '/v1/customers/:id/portal-sessions',
    {
      schema: {
        tags: ['portal'],
        summary: 'A one-time customer-portal sign-in link, valid 15 minutes',
        params: idParams,
        response: { 201: dataEnvelope(portalLinkSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createPortalLink(ctx, request.params.id, deps.config.publicUrl) } })),
  );

  app.register(async (scope) => {
    const portal = scope.withTypeProvider<ZodTypeProvider>();
    // HTML forms post urlencoded bodies; the parser exists only inside this scope.
    portal.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });

    // ---- JSON API ------------------------------------------------------------------------

    portal.post(
      '/portal/api/login',
      {
        schema: {
          tags: ['portal'],
          summary: 'E-mail a sign-in link; always 200, revealing nothing about the address or tenant',
          security: [],
          body: loginBody,
          response: { 200: loginResponse },
        },
      },
      async (request, reply) => {
        await loginRequests.hit(request, reply);
        await requestLoginLink(deps.db, now(), request.body, requesterOf(request.ip));
        return { data: { message: LOGIN_MESSAGE } };
      },
    );

    portal.get(
      '/portal/api/me',
      {
        preHandler: requireSession,
        schema: { tags: ['portal'], summary: 'The signed-in customer and the CSRF token', security: [], response: { 200: dataEnvelope(profileSchema) } },
      },
      async (request) => ({ data: await portalProfile(ctxOf(session(request)), session(request)) }),
    );

    portal.get(
      '/portal/api/subscriptions',
      {
        preHandler: requireSession,
        schema: {
          tags: ['portal'],
          summary: "The customer's subscriptions",
          security: [],
          querystring: z.object(paginationQuery()),
          response: { 200: listEnvelope(portalSubscriptionSchema) },
        },
      },
      async (request) => {
        const page = toPage(request.query);
        const { subscriptions, total } = await portalSubscriptions(ctxOf(session(request)), session(request).customerId, page);
        return listResponse(subscriptions, total, page);
      },
    );

    portal.get(
      '/portal/api/invoices',
      {
        preHandler: requireSession,
        schema: {
          tags: ['portal'],
          summary: "The customer's invoices (drafts excluded)",
          security: [],
          querystring: z.object(paginationQuery()),
          response: { 200: listEnvelope(invoiceSchema) },
        },
      },
      async (request) => {
        const page = toPage(request.query);
        const { invoices, total } = await portalInvoices(ctxOf(session(request)), session(request).customerId, page);
        return listResponse(invoices, total, page);
      },
    );

    portal.get(
      '/portal/api/balance',
      {
        preHandler: requireSession,
        schema: {
          tags: ['portal'],
          summary: "The customer's balance per currency and source (advances, credit notes)",
          security: [],
          response: { 200: dataEnvelope(customerBalanceSchema) },
        },
      },
      async (request) => ({ data: await customerBalance(ctxOf(session(request)), session(request).customerId) }),
    );

    portal.get(
      '/portal/api/balance-transactions',
      {
        preHandler: requireSession,
        schema: {
          tags: ['portal'],
          summary: "Every movement of the customer's balance with its document, newest first",
          security: [],
          querystring: balanceTransactionsQuery.extend(paginationQuery()),
          response: { 200: listEnvelope(balanceTransactionSchema) },
        },
      },
      async (request) => {
        const page = toPage(request.query);
        const { transactions, total } = await listBalanceTransactions(ctxOf(session(request)), session(request).customerId, request.query, page);
        return listResponse(transactions, total, page);
      },
    );

    portal.get(
      '/portal/api/invoices/:id/pdf',
      {
        preHandler: requireSession,
        schema: {
          tags: ['portal'],
          summary: "One of the customer's invoices as a PDF",
          security: [],
          params: idParams,
          response: { 200: { description: 'The invoice as a PDF', content: { 'application/pdf': { schema: invoicePdfResponse } } } },
        },
      },
      async (request, reply) => {
        const pdf = await portalInvoicePdf(ctxOf(session(request)), session(request).customerId, request.params.id);
        return (reply as FastifyReply)
          .type('application/pdf')
          .header('content-disposition', `inline; filename="${pdf.filename}"`)
          .header('cache-control', 'private, no-store')
          .send(pdf.content);
      },
    );

    portal.post(
      '/portal/api/redeem',
      {
        preHandler: [requireSession, requireSameOrigin],
        schema: {
          errors: ['unprocessable'],
          tags: ['portal'],
          summary: 'Redeem a gift code (SPEC 4.9): the gift subscription, active for its months',
          security: [],
          body: redeemBody,
          response: { 201: dataEnvelope(subscriptionSchema) },
        },
      },
      async (request, reply) => {
        const s = session(request);
        const { subscription } = await redeemCounted(request, reply, s, request.body.code);
        return reply.code(201).send({ data: toSubscription(subscription) });
      },
    );

    portal.post(
      '/portal/api/logout',
      {
        preHandler: [requireSession, requireSameOrigin],
        schema: { tags: ['portal'], summary: 'End the portal session', security: [], response: { 200: loggedOutResponse } },
      },
      async (request, reply) => {
        await signOut(deps.db, now(), session(request));
        return reply.header('set-cookie', clearedCookie).send({ data: { logged_out: true as const } });
      },
    );

    const kit: PortalKit = { deps, now, session, ctxOf: (s) => ctxOf(s), inTransaction, requireSession, requireSameOrigin };
    const actions = selfService(kit);
    registerSelfServiceRoutes(scope, kit, actions);

    // ---- pages ---------------------------------------------------------------------------

    const dashboard = async (s: PortalSession, extra: Pick<DashboardView, 'notice' | 'error' | 'code'> = {}) => {
      const ctx = ctxOf(s);
      const first = { limit: 100, page: 1, offset: 0 };
      const [profile, subscriptions, invoices, paymentMethods, access, creditNotes, permissions, billing, setupOptions] = await Promise.all([
        portalProfile(ctx, s),
        portalSubscriptions(ctx, s.customerId, first),
        portalInvoices(ctx, s.customerId, first),
        listPaymentMethods(ctx, s.customerId),
        customerAccess(ctx, s.customerId),
        portalCreditNotes(ctx, s.customerId, first),
        portalPermissions(ctx),
        getCustomer(ctx, s.customerId),
        setupOptionsOf(kit, s),
      ]);
      const walled = new Set(access.invoice_ids);
      const toPay = invoices.invoices.filter(
        (i) =>
          (i.status === 'open' || i.status === 'uncollectible') &&
          i.amount_due > 0 &&
          (walled.has(i.id) || (i.due_date !== null && new Date(i.due_date) < ctx.now)),
      );
      return dashboardPage({
        profile,
        subscriptions: subscriptions.subscriptions,
        invoices: invoices.invoices,
        paymentMethods,
        attention: { blocked: access.blocked, invoices: toPay },
        creditNotes: creditNotes.notes,
        permissions,
        billing,
        testMode: deps.config.mode === 'test',
        setupOptions,
        ...extra,
      });
    };
    const formField = (request: FastifyRequest, name: string): string | undefined => {
      const value = (request.body as Record<string, unknown> | undefined)?.[name];
      return typeof value === 'string' ? value : undefined;
    };
    const tenantHint = (value: unknown) => (typeof value === 'string' && isUuid(value) ? value.toLowerCase() : undefined);
    const NOTICES: Record<string, string> = {
      gift_redeemed: 'Gift redeemed — your new subscription is below.',
      payment_method_added: 'Payment method saved.',
      default_changed: 'Default payment method changed.',
      signed_out: 'You are signed out.',
      seats_changed: 'Your seats are changed.',
      plan_changed: 'Your plan is changed.',
      cancelled: 'Your subscription is cancelled.',
      offer_accepted: 'Offer accepted: your subscription continues, with the discount on its next invoices.',
      billing_saved: 'Billing details saved.',
      setup_cancelled: 'Nothing was saved: you came back from the payment page without finishing.',
      setup_pending: 'The payment provider has not confirmed the payment method yet; it appears here once it does.',
    };
    const query = (request: FastifyRequest) => request.query as Record<string, unknown>;

    portal.get('/portal', { schema: { hide: true } }, async (request, reply) => {
      const s = await sessionOf(request);
      const notice = NOTICES[String(query(request).notice ?? '')];
      if (!s) {
        if (parseCookies(request.headers.cookie).has(SESSION_COOKIE)) reply.header('set-cookie', clearedCookie);
        return sendPage(reply, 200, loginPage({ tenantId: tenantHint(query(request).tenant), notice }));
      }
      return sendPage(reply, 200, await dashboard(s, { notice }));
    });

    portal.get('/portal/login', { schema: { hide: true } }, async (request, reply) => {
      const token = query(request).token;
      const opened = typeof token === 'string' ? await signIn(deps.db, now(), token) : null;
      if (!opened) return sendPage(reply, 400, linkInvalidPage(parseCredential(typeof token === 'string' ? token : undefined)?.tenantId));
      return reply.code(303).headers(PAGE_HEADERS).header('set-cookie', sessionCookie(opened.cookieValue)).header('location', '/portal').send();
    });

    portal.post('/portal/login', { schema: { hide: true } }, async (request, reply) => {
      const parsed = loginBody.safeParse({ tenant_id: formField(request, 'tenant_id'), email: formField(request, 'email')?.trim() });
      const tenantId = tenantHint(formField(request, 'tenant_id'));
      if (!parsed.success) return sendPage(reply, 400, loginPage({ tenantId, error: 'Enter a valid e-mail address.' }));
      try {
        await loginRequests.hit(request, reply);
      } catch (error) {
        if (isKoshError(error) && error.kind === 'rate_limited') return sendPage(reply, 429, loginPage({ tenantId, error: tooMany(error) }));
        throw error;
      }
      await requestLoginLink(deps.db, now(), parsed.data, requesterOf(request.ip));
      return sendPage(reply, 200, checkEmailPage());
    });

    portal.post('/portal/redeem', { schema: { hide: true } }, async (request, reply) => {
      const s = await sessionOf(request);
      if (!s) return sendPage(reply, 401, loginPage({ error: 'Your session has ended. Sign in again to redeem the code.' }));
      const code = (formField(request, 'code') ?? '').slice(0, 100);
      if (!sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
        return sendPage(reply, 403, await dashboard(s, { error: 'This form had expired. Please try again.', code }));
      }
      if (!code.trim()) return sendPage(reply, 422, await dashboard(s, { error: 'Enter the gift code.', code }));
      try {
        await redeemCounted(request, reply, s, code);
      } catch (error) {
        if (isKoshError(error) && error.kind === 'rate_limited') return sendPage(reply, 429, await dashboard(s, { error: tooMany(error), code }));
        if (isKoshError(error) && error.status < 500) return sendPage(reply, error.status, await dashboard(s, { error: redeemMessage(error.message), code }));
        throw error;
      }
      return reply.code(303).headers(PAGE_HEADERS).header('location', '/portal?notice=gift_redeemed').send();
    });

    // Payment methods (collections): add one (the test gateway's in test mode) and choose the default.
    const paymentMethodForm = async (request: FastifyRequest, reply: FastifyReply, work: (s: PortalSession) => Promise<string>) => {
      const s = await sessionOf(request);
      if (!s) return sendPage(reply, 401, loginPage({ error: 'Your session has ended. Sign in again.' }));
      if (!sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
        return sendPage(reply, 403, await dashboard(s, { error: 'This form had expired. Please try again.' }));
      }
      try {
        const notice = await work(s);
        return reply.code(303).headers(PAGE_HEADERS).header('location', `/portal?notice=${notice}#payment-methods`).send();
      } catch (error) {
        if (isKoshError(error) && error.status < 500) return sendPage(reply, error.status, await dashboard(s, { error: redeemMessage(error.message) }));
        throw error;
      }
    };
    const collections = { db: deps.db, config: deps.config, secrets: deps.secrets, scope: deps.scope };
    portal.post('/portal/payment-methods', { schema: { hide: true } }, (request, reply) =>
      paymentMethodForm(request, reply, async (s) => {
        const prepared = await preparePaymentMethod(ctxOf(s), collections, s.customerId, (formField(request, 'token') ?? '').slice(0, 200));
        await inTransaction(s, { action: 'payment_method.create', objectType: 'payment_method', objectId: null }, (ctx) =>
          storePaymentMethod(ctx, prepared, true),
        );
        return 'payment_method_added';
      }),
    );
    portal.post('/portal/payment-methods/default', { schema: { hide: true } }, (request, reply) =>
      paymentMethodForm(request, reply, async (s) => {
        const id = formField(request, 'payment_method_id') ?? '';
        if (!isUuid(id)) throw errors.notFound('payment method');
        await inTransaction(s, { action: 'payment_method.make_default', objectType: 'payment_method', objectId: id }, (ctx) =>
          makeDefaultPaymentMethod(ctx, s.customerId, id),
        );
        return 'default_changed';
      }),
    );

    // The banner's pay button: a hosted checkout session for one of the customer's own invoices, then there.
    portal.post('/portal/invoices/:invoice_id/pay', { schema: { hide: true } }, async (request, reply) => {
      const s = await sessionOf(request);
      if (!s) return sendPage(reply, 401, loginPage({ error: 'Your session has ended. Sign in again to pay.' }));
      if (!sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
        return sendPage(reply, 403, await dashboard(s, { error: 'This form had expired. Please try again.' }));
      }
      const invoiceId = String((request.params as { invoice_id?: unknown }).invoice_id ?? '');
      try {
        if (!isUuid(invoiceId)) throw errors.notFound('invoice');
        const checkout = await actions.checkout(s, invoiceId);
        const url = new URL(checkout.url);
        // The provider's page is linked, not redirected to: the portal's CSP lets its forms lead
        // only to the portal itself, redirects included (docs/decisions/0730).
        if (checkout.provider) return sendPage(reply, 200, payHandoverPage({ provider: checkout.provider, url: `${url.pathname}${url.search}` }));
        return reply.code(303).headers(PAGE_HEADERS).header('location', `${url.pathname}${url.search}`).send();
      } catch (error) {
        if (isKoshError(error) && error.status < 500) return sendPage(reply, error.status, await dashboard(s, { error: redeemMessage(error.message) }));
        throw error;
      }
    });

    registerSelfServicePages(portal, {
      sessionOf,
      dashboard,
      formField,
      actions,
      ctxOf: (s) => ctxOf(s),
      sendPage: (reply, status, html) => sendPage(reply, status, html),
      redirect: (reply, location) => reply.code(303).headers(PAGE_HEADERS).header('location', location).send(),
      message: redeemMessage,
    });

    registerCreditPages(portal, {
      sessionOf,
      ctxOf: (s) => ctxOf(s),
      sendPage: (reply, status, html) => sendPage(reply, status, html),
      redirect: (reply, location) => reply.code(303).headers(PAGE_HEADERS).header('location', location).send(),
    });

    registerSetupPages(portal, {
      kit,
      sessionOf,
      dashboard,
      formField,
      sendPage: (reply, status, html) => sendPage(reply, status, html),
      redirect: (reply, location) => reply.code(303).headers(PAGE_HEADERS).header('location', location).send(),
      message: redeemMessage,
    });

    portal.post('/portal/logout', { schema: { hide: true } }, async (request, reply) => {
      const s = await sessionOf(request);
      if (s && !sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
        return sendPage(reply, 403, await dashboard(s, { error: 'This form had expired. Please try again.' }));
      }
      if (s) await signOut(deps.db, now(), s);
      const tenant = s ? `&tenant=${s.tenantId}` : '';
      return reply.code(303).headers(PAGE_HEADERS).header('set-cookie', clearedCookie).header('location', `/portal?notice=signed_out${tenant}`).send();
    });
  });
}

/** A rate-limit refusal on a page: "too many wrong gift codes; retry in 840 s" → minutes. */
function tooMany(error: KoshError): string {
  const seconds = Number(/retry in (\d+) s/.exec(error.message)?.[1] ?? 60);
  return `Too many attempts. Please try again in ${Math.max(1, Math.ceil(seconds / 60))} minute(s).`;
}

/** The API's sentence, capitalized for the page ("this gift code has expired" → "This gift code has expired."). */
function redeemMessage(message: string): string {
  const sentence = message.charAt(0).toUpperCase() + message.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}
