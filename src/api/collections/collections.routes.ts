import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import type { FastifyReply } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { isKoshError } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { principalOf, readCtx, runAction, runTwoPhaseAction, type KoshApp } from '../../platform/http/server.js';
import { chargeAttempt, resolveAttempt } from '../../flows/collections/collect-invoice-payment.js';
import { startAttempt } from '../../flows/collections/start-attempt.js';
import { createRefund } from '../../flows/collections/refund-payment.js';
import { createCreditNoteRefund } from '../../flows/collections/refund-credit-note.js';
import { markRefundFailed, markRefundPaid } from '../../flows/collections/settle-offline-refund.js';
import { getPayment } from '../../modules/payments/index.js';
import { receiveGatewayWebhook } from '../../flows/collections/apply-gateway-webhook.js';
import { preparePaymentMethod, storePaymentMethod } from '../../flows/collections/save-payment-method.js';
import { createCheckoutSession, openCheckoutSession, prepareCheckout, submitCheckout } from '../../flows/collections/checkout-invoice.js';
import { confirmHostedCheckout } from '../../flows/collections/hosted-checkout-payment.js';
import { getCustomer } from '../../modules/customers/index.js';
import { getInvoice, invoiceSchema } from '../../modules/invoices/index.js';
import { readSettings } from '../../modules/tenants/index.js';
import { checkoutGonePage, checkoutPage, mandateSkipPage, pendingAttemptOf } from '../../modules/collections/index.js';
import { readSkippableDebit, submitSkip } from '../../flows/collections/skip-mandate-debit.js';
import {
  attachPaymentMethodBody,
  checkoutSessionSchema,
  connectionSchema,
  createConnectionBody,
  createCreditNoteRefundBody,
  markRefundPaidBody,
  markRefundFailedBody,
  createRefundBody,
  listRefundsQuery,
  customerPaymentMethodParams,
  payInvoiceBody,
  paymentAttemptSchema,
  paymentMethodSchema,
  refundSchema,
} from '../../modules/collections/index.js';
import {
  createConnection,
  deleteConnection,
  detachPaymentMethod,
  getRefund,
  listAttempts,
  listRefunds,
  listConnections,
  listPaymentMethods,
  makeDefaultPaymentMethod,
  type CollectionsEnv,
} from '../../modules/collections/index.js';

const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self' https:; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
};

const whole = <T>(items: T[]) => listResponse(items, items.length, { limit: Math.max(items.length, 1), page: 1, offset: 0 });

/** Collections (DESIGN §11): gateway connections, payment methods, paying invoices, checkout, refunds, inbound gateway webhooks. */
export function registerCollectionsRoutes(app: KoshApp, deps: AppDeps): void {
  const env: CollectionsEnv = { db: deps.db, config: deps.config, secrets: deps.secrets, scope: deps.scope };

  // ---- Gateway connections -----------------------------------------------------------------
  app.post(
    '/v1/gateway-connections',
    {
      schema: {
        tags: ['collections'],
        summary: 'Connect a payment gateway (credentials are stored encrypted and never returned)',
        body: createConnectionBody,
        response: { 201: dataEnvelope(connectionSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const data = await createConnection(ctx, env, request.body);
        return { status: 201, body: { data } };
      }),
  );
  app.get(
    '/v1/gateway-connections',
    { schema: { tags: ['collections'], summary: 'List gateway connections', response: { 200: listEnvelope(connectionSchema) } } },
    async (request) => whole(await listConnections(readCtx(deps, request), env)),
  );
  app.delete(
    '/v1/gateway-connections/:id',
    {
      schema: {
        tags: ['collections'],
        summary: 'Remove a gateway connection',
        params: idParams,
        response: { 200: dataEnvelope(z.object({ id: z.uuid(), deleted: z.literal(true) })) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        await deleteConnection(ctx, request.params.id);
        return { status: 200, body: { data: { id: request.params.id, deleted: true as const } } };
      }),
  );

  // ---- Payment methods ---------------------------------------------------------------------
  app.post(
    '/v1/customers/:id/payment-methods',
    {
      schema: {
        tags: ['collections'],
        summary: "Save a payment method from a gateway token (the first becomes the customer's default)",
        params: idParams,
        body: attachPaymentMethodBody,
        response: { 201: dataEnvelope(paymentMethodSchema) },
      },
    },
    async (request, reply) => {
      // The gateway is asked first, outside any transaction; then the method is stored.
      const prepared = await preparePaymentMethod(readCtx(deps, request), env, request.params.id, request.body.token);
      return runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: { data: await storePaymentMethod(ctx, prepared, request.body.set_default, request.body.mandate) },
      }));
    },
  );
  app.get(
    '/v1/customers/:id/payment-methods',
    { schema: { tags: ['collections'], summary: "List a customer's payment methods", params: idParams, response: { 200: listEnvelope(paymentMethodSchema) } } },
    async (request) => {
      const read = readCtx(deps, request);
      await getCustomer(read, request.params.id);
      return whole(await listPaymentMethods(read, request.params.id));
    },
  );
  app.delete(
    '/v1/customers/:id/payment-methods/:pm_id',
    {
      schema: {
        tags: ['collections'],
        summary: 'Remove a saved payment method',
        params: customerPaymentMethodParams,
        response: { 200: dataEnvelope(z.object({ id: z.uuid(), deleted: z.literal(true) })) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        await detachPaymentMethod(ctx, request.params.id, request.params.pm_id);
        return { status: 200, body: { data: { id: request.params.pm_id, deleted: true as const } } };
      }),
  );
  app.post(
    '/v1/customers/:id/payment-methods/:pm_id/default',
    {
      schema: {
        tags: ['collections'],
        summary: "Make a payment method the customer's default",
        params: customerPaymentMethodParams,
        response: { 200: dataEnvelope(paymentMethodSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await makeDefaultPaymentMethod(ctx, request.params.id, request.params.pm_id) },
      })),
  );

  // ---- Paying invoices ---------------------------------------------------------------------
  app.post(
    '/v1/invoices/:id/pay',
    {
      schema: {
        tags: ['collections'],
        summary: 'Charge the invoice once now (default or given payment method); a failure answers 200 with last_payment_error',
        params: idParams,
        body: payInvoiceBody,
        response: { 200: dataEnvelope(invoiceSchema) },
      },
    },
    (request, reply) => {
      const tenantId = principalOf(request).tenantId;
      // The pending attempt commits first (with its audit record); the gateway call follows it and
      // commits the outcome; the answer is the invoice as it is then.
      return runTwoPhaseAction(deps, request, reply, {
        intent: async (ctx) => ({ attempt_id: (await startAttempt(ctx, env, request.params.id, { paymentMethodId: request.body?.payment_method_id })).id }),
        call: async (intent, firstTime) => {
          // A replay's intent may already have reached the gateway: it is looked up before any charge.
          await (firstTime ? chargeAttempt : resolveAttempt)(env, tenantId, intent.attempt_id, deps.clock.now());
        },
        answer: async () => ({ status: 200, body: { data: await getInvoice(readCtx(deps, request), request.params.id) } }),
      });
    },
  );
  app.get(
    '/v1/invoices/:id/payment-attempts',
    {
      schema: {
        tags: ['collections'],
        summary: "List an invoice's payment attempts, oldest first",
        params: idParams,
        response: { 200: listEnvelope(paymentAttemptSchema) },
      },
    },
    async (request) => {
      const read = readCtx(deps, request);
      await getInvoice(read, request.params.id);
      return whole(await listAttempts(read, request.params.id));
    },
  );

  // ---- Hosted checkout ---------------------------------------------------------------------
  app.post(
    '/v1/invoices/:id/checkout-sessions',
    {
      schema: {
        tags: ['collections'],
        summary: 'Create a hosted checkout link for an open invoice',
        params: idParams,
        response: { 201: dataEnvelope(checkoutSessionSchema) },
      },
    },
    async (request, reply) => {
      const prepared = await prepareCheckout(readCtx(deps, request), env, request.params.id);
      return runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: { data: await createCheckoutSession(ctx, env, request.params.id, prepared) },
      }));
    },
  );

  const checkoutParams = z.object({ tenant_id: z.uuid(), session_id: z.uuid() });
  const checkoutQuery = z.object({ token: z.string().max(200).optional(), error: z.string().max(40).optional(), cancelled: z.string().max(1).optional() });

  app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    /**
     * The checkout link, and (`/return`) where the provider's hosted checkout sends the customer
     * back: a session handed over to Stripe or Razorpay redirects there while open; on return it
     * shows the invoice paid, cancelled, or waiting for the provider's webhook.
     */
    const showCheckout = async (
      request: { params: z.infer<typeof checkoutParams>; query: z.infer<typeof checkoutQuery> },
      reply: FastifyReply,
      returned: boolean,
    ) => {
      const read = { tx: deps.db, tenantId: request.params.tenant_id, now: deps.clock.now() };
      const session = await openCheckoutSession(read, request.params.session_id, request.query.token);
      const page = (status: number, html: string) => reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
      if (!session) return page(404, checkoutGonePage('This payment link is not valid or has expired.'));
      if (session.redirect_url && session.status === 'open' && !returned) return reply.redirect(session.redirect_url, 303);
      // Back from the provider: Kosh asks it whether the session was paid (never the query's word).
      if (returned && session.redirect_url && session.status === 'open' && request.query.cancelled !== '1') await confirmHostedCheckout(env, session, read.now);
      const invoice = await getInvoice(read, session.invoice_id);
      const settings = await readSettings(read);
      const declined =
        invoice.status === 'open' && invoice.last_payment_error && request.query.error === 'declined'
          ? `Payment failed: ${invoice.last_payment_error.message}`
          : undefined;
      const error = request.query.error === 'card' ? 'Unknown card number. In test mode use 4242 4242 4242 4242.' : declined;
      // Kosh's own card form cannot pay while a mandate debit waits out its notice (it would be a
      // second attempt in flight); the customer is told why (docs/decisions/0196).
      const scheduled = !session.redirect_url && invoice.status === 'open' ? await pendingAttemptOf(deps.db, session.tenant_id, invoice.id) : undefined;
      const notice =
        scheduled?.pending_reason === 'notice' && scheduled.charge_after
          ? `A mandate debit of ${invoice.currency} ${(scheduled.amount / 100).toFixed(2)} for this invoice is scheduled on or after ${new Date(scheduled.charge_after).toISOString()}; a card can be used here once it has been made or has failed.`
          : undefined;
      return page(
        200,
        checkoutPage({
          invoice,
          sellerName: invoice.supplier?.name ?? (settings as { name?: string }).name ?? '',
          action: `/checkout/${session.tenant_id}/${session.id}?token=${encodeURIComponent(request.query.token ?? '')}`,
          error,
          notice,
          handover: session.redirect_url ? { provider: session.gateway, url: session.redirect_url, cancelled: request.query.cancelled === '1' } : undefined,
        }),
      );
    };
    const checkoutRoute = { schema: { hide: true, params: checkoutParams, querystring: checkoutQuery } };
    scope.get('/checkout/:tenant_id/:session_id', checkoutRoute, (request, reply) => showCheckout(request, reply, false));
    scope.get('/checkout/:tenant_id/:session_id/return', checkoutRoute, (request, reply) => showCheckout(request, reply, true));
    scope.post(
      '/checkout/:tenant_id/:session_id',
      { schema: { hide: true, params: checkoutParams, querystring: checkoutQuery, body: z.object({ card_number: z.string().max(40).default('') }).loose() } },
      async (request, reply) => {
        const now = deps.clock.now();
        const read = { tx: deps.db, tenantId: request.params.tenant_id, now };
        const session = await openCheckoutSession(read, request.params.session_id, request.query.token);
        if (!session)
          return reply
            .code(404)
            .headers(PAGE_HEADERS)
            .type('text/html; charset=utf-8')
            .send(checkoutGonePage('This payment link is not valid or has expired.'));
        const back = `/checkout/${session.tenant_id}/${session.id}?token=${encodeURIComponent(request.query.token ?? '')}`;
        let result;
        try {
          result = await submitCheckout(env, session, request.body.card_number, now);
        } catch (error) {
          if (isKoshError(error) && error.status < 500) return reply.redirect(back, 303);
          throw error;
        }
        return reply.redirect(result.kind === 'bad_card' ? `${back}&error=card` : `${back}&error=declined`, 303);
      },
    );

    /**
     * The pre-debit notice's "skip this debit" link (docs/decisions/0520): GET shows what would be
     * skipped and a button (a mail scanner following the link skips nothing); POST skips it.
     */
    const skipParams = z.object({ tenant_id: z.uuid(), attempt_id: z.uuid() });
    const skipQuery = z.object({ token: z.string().max(200).optional() });
    const skipPage = async (request: { params: z.infer<typeof skipParams>; query: z.infer<typeof skipQuery> }, reply: FastifyReply, post: boolean) => {
      const now = deps.clock.now();
      const read = { tx: deps.db, tenantId: request.params.tenant_id, now };
      const page = (status: number, html: string) => reply.code(status).headers(PAGE_HEADERS).type('text/html; charset=utf-8').send(html);
      const debit = await readSkippableDebit(read, request.params.attempt_id, request.query.token);
      if (!debit) return page(404, checkoutGonePage('This link is not valid.'));
      let state: 'ready' | 'skipped' | 'closed' = debit.state;
      if (post && state === 'ready')
        state = (await submitSkip(deps.db, request.params.tenant_id, debit.attempt.id, request.query.token!, now)) ? 'skipped' : 'closed';
      return page(
        200,
        mandateSkipPage({
          merchant: debit.merchant,
          invoiceNumber: debit.invoiceNumber,
          amount: debit.attempt.amount,
          currency: debit.attempt.currency,
          notBefore: debit.notBefore,
          state,
          action: `/mandate-debits/${request.params.tenant_id}/${debit.attempt.id}/skip?token=${encodeURIComponent(request.query.token ?? '')}`,
        }),
      );
    };
    const skipRoute = { schema: { hide: true, params: skipParams, querystring: skipQuery } };
    scope.get('/mandate-debits/:tenant_id/:attempt_id/skip', skipRoute, (request, reply) => skipPage(request, reply, false));
    scope.post('/mandate-debits/:tenant_id/:attempt_id/skip', skipRoute, (request, reply) => skipPage(request, reply, true));
  });

  // ---- Refunds (DESIGN §11, §20) ----------------------------------------------------------
  app.post(
    '/v1/payments/:id/refunds',
    {
      schema: {
        tags: ['collections'],
        summary:
          "Refund a payment in full or in part: pays out the invoice's unspent credit notes first, else issues a refund credit note (on the named lines, or pro rata over what each line has left)",
        params: idParams,
        body: createRefundBody,
        response: { 201: dataEnvelope(refundSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createRefund(ctx, request.params.id, request.body) } })),
  );
  app.post(
    '/v1/credit-notes/:id/refunds',
    {
      schema: {
        tags: ['collections'],
        summary: "Pay out a credit note's unspent balance (through the original payment's gateway, or offline) without a new credit note",
        params: idParams,
        body: createCreditNoteRefundBody,
        response: { 201: dataEnvelope(refundSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createCreditNoteRefund(ctx, request.params.id, request.body) } })),
  );
  app.get(
    '/v1/refunds',
    {
      schema: {
        tags: ['collections'],
        summary: 'List refunds (newest first)',
        querystring: listRefundsQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(refundSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { refunds, total } = await listRefunds(readCtx(deps, request), request.query, page);
      return listResponse(refunds, total, page);
    },
  );
  app.get(
    '/v1/refunds/:id',
    { schema: { tags: ['collections'], summary: 'Get a refund', params: idParams, response: { 200: dataEnvelope(refundSchema) } } },
    async (request) => ({ data: await getRefund(readCtx(deps, request), request.params.id) }),
  );
  app.post(
    '/v1/refunds/:id/mark_paid',
    {
      schema: {
        tags: ['collections'],
        summary:
          'Record that an offline refund (no gateway) was paid by hand: succeeded, with the date and the bank or cheque reference; refunds payable moves to cash',
        params: idParams,
        body: markRefundPaidBody,
        response: { 200: dataEnvelope(refundSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await markRefundPaid(ctx, request.params.id, request.body) } })),
  );
  app.post(
    '/v1/refunds/:id/mark_failed',
    {
      schema: {
        tags: ['collections'],
        summary: "Record that an offline refund (no gateway) will not be paid: failed, and its credit notes' credit is spendable again",
        params: idParams,
        body: markRefundFailedBody,
        response: { 200: dataEnvelope(refundSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await markRefundFailed(ctx, request.params.id, request.body) } })),
  );
  app.get(
    '/v1/payments/:id/refunds',
    {
      schema: {
        tags: ['collections'],
        summary: "List a payment's refunds (newest first)",
        params: idParams,
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(refundSchema) },
      },
    },
    async (request) => {
      const ctx = readCtx(deps, request);
      await getPayment(ctx, request.params.id);
      const page = toPage(request.query);
      const { refunds, total } = await listRefunds(ctx, { payment_id: request.params.id }, page);
      return listResponse(refunds, total, page);
    },
  );

  // ---- Inbound gateway webhooks ------------------------------------------------------------
  app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    // The raw bytes are what the provider signed: no JSON parsing before verification.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: 1024 * 1024 }, (_request, body, done) => done(null, body));
    scope.post(
      '/webhooks/gateways/:provider/:connection_id',
      { schema: { hide: true, params: z.object({ provider: z.string().max(40), connection_id: z.uuid() }) } },
      async (request) =>
        receiveGatewayWebhook(
          env,
          request.params.provider,
          request.params.connection_id,
          (request.body as Buffer | undefined) ?? Buffer.alloc(0),
          request.headers,
          deps.clock.now(),
        ),
    );
  });
}
