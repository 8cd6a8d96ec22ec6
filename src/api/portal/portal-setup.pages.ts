import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors, isKoshError } from '../../platform/errors.js';
import { isUuid } from '../../platform/http/server.js';
import { confirmSetup, createSetupSession, prepareSetup, type SetupRequest } from '../../flows/collections/setup-payment-method.js';
import { findSetupSession, listConnections, MANDATE_FREQUENCIES, type MandateFrequency } from '../../modules/collections/index.js';
import { sameToken, setupHandoverPage, type DashboardView, type PortalSession, type SetupOption } from '../../modules/portal/index.js';
import type { PortalKit } from './portal-self-service.routes.js';

type SetupPages = {
  kit: PortalKit;
  sessionOf: (request: FastifyRequest) => Promise<PortalSession | null>;
  dashboard: (s: PortalSession, extra?: Pick<DashboardView, 'notice' | 'error'>) => Promise<string>;
  formField: (request: FastifyRequest, name: string) => string | undefined;
  sendPage: (reply: FastifyReply, status: number, html: string) => unknown;
  redirect: (reply: FastifyReply, location: string) => unknown;
  message: (text: string) => string;
};

/** The most a portal mandate may allow per debit: ₹10 lakh (the form's bound; the API allows more). */
const MAX_MANDATE_RUPEES = 1_000_000;

/** What the tenant's Razorpay and Stripe connections can save on their hosted pages. */
export async function setupOptionsOf(kit: PortalKit, s: PortalSession): Promise<SetupOption[]> {
  const env = { db: kit.deps.db, config: kit.deps.config, secrets: kit.deps.secrets, scope: kit.deps.scope };
  const providers = new Set((await listConnections(kit.ctxOf(s), env)).map((c) => c.provider));
  const options: SetupOption[] = [];
  if (providers.has('razorpay')) options.push({ provider: 'razorpay', method: 'upi_mandate' }, { provider: 'razorpay', method: 'card' });
  if (providers.has('stripe')) options.push({ provider: 'stripe', method: 'card' });
  return options;
}

/**
 * Saving a card or registering a UPI AutoPay / card e-mandate on the provider's hosted page
 * (docs/decisions/0730). The form (with the mandate's limits and the consent) makes a setup
 * session and shows a page linking to the provider; the provider sends the customer back to
 * `/portal/payment-methods/setup/{id}/return`, where Kosh asks the provider what was saved and
 * saves it once (the signed webhook may have done so first; a replayed return changes nothing).
 */
export function registerSetupPages(portal: FastifyInstance, pages: SetupPages): void {
  const { kit, formField } = pages;
  const env = { db: kit.deps.db, config: kit.deps.config, secrets: kit.deps.secrets, scope: kit.deps.scope };
  const idOf = (request: FastifyRequest) => String((request.params as { setup_id?: unknown }).setup_id ?? '');
  const refused = async (reply: FastifyReply, s: PortalSession, error: unknown) => {
    if (isKoshError(error) && error.status < 500) return pages.sendPage(reply, error.status, await pages.dashboard(s, { error: pages.message(error.message) }));
    throw error;
  };
  const ownSetup = async (s: PortalSession, id: string) => {
    const row = isUuid(id) ? await findSetupSession(kit.deps.db, s.tenantId, id) : undefined;
    if (!row || row.customer_id !== s.customerId) throw errors.notFound('payment setup');
    return row;
  };

  portal.post('/portal/payment-methods/setup', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    if (!sameToken(s.csrfToken, formField(request, 'csrf_token'))) {
      return pages.sendPage(reply, 403, await pages.dashboard(s, { error: 'This form had expired. Please try again.' }));
    }
    try {
      const options = await setupOptionsOf(kit, s);
      const setup = await setupRequestOf(kit, s, options, (name) => formField(request, name));
      const base = kit.deps.config.publicUrl;
      const prepared = await prepareSetup(kit.ctxOf(s), env, s.customerId, setup, (id) => `${base}/portal/payment-methods/setup/${id}/return`);
      await kit.inTransaction(s, { action: 'payment_method.setup', objectType: 'payment_setup', objectId: prepared.id }, (ctx) =>
        createSetupSession(ctx, prepared),
      );
      return pages.redirect(reply, `/portal/payment-methods/setup/${prepared.id}`);
    } catch (error) {
      return refused(reply, s, error);
    }
  });

  // A page, not a redirect: the portal's CSP allows forms to post only to itself, and the link to
  // the provider is followed by the customer.
  portal.get('/portal/payment-methods/setup/:setup_id', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    try {
      const row = await ownSetup(s, idOf(request));
      if (row.status === 'complete') return pages.redirect(reply, '/portal?notice=payment_method_added#payment-methods');
      const mandate =
        row.mandate_max_amount !== null
          ? {
              maxAmount: row.mandate_max_amount,
              frequency: row.mandate_frequency ?? 'as_presented',
              validUntil: row.mandate_valid_until ? new Date(row.mandate_valid_until) : null,
            }
          : null;
      return pages.sendPage(reply, 200, setupHandoverPage({ provider: row.gateway, method: row.method, url: row.redirect_url, mandate }));
    } catch (error) {
      return refused(reply, s, error);
    }
  });

  portal.get('/portal/payment-methods/setup/:setup_id/return', { schema: { hide: true } }, async (request, reply) => {
    const s = await pages.sessionOf(request);
    if (!s) return pages.redirect(reply, '/portal');
    try {
      const row = await ownSetup(s, idOf(request));
      if ((request.query as Record<string, unknown>).cancelled === '1' && row.status === 'open')
        return pages.redirect(reply, '/portal?notice=setup_cancelled#payment-methods');
      // The query (Razorpay's signature, Stripe's session id) is not read: the provider is asked.
      const outcome = await confirmSetup(env, kit.ctxOf(s), row.id, (work) =>
        kit.inTransaction(s, { action: 'payment_method.create', objectType: 'payment_setup', objectId: row.id }, work),
      );
      if (outcome.kind === 'failed') throw errors.conflict(`the payment method was not saved: ${outcome.message}`, 'payment_setup_failed');
      return pages.redirect(reply, `/portal?notice=${outcome.kind === 'complete' ? 'payment_method_added' : 'setup_pending'}#payment-methods`);
    } catch (error) {
      return refused(reply, s, error);
    }
  });
}

/** The form's fields as a setup request: an offered option, and for Razorpay the mandate's limits and the consent. */
async function setupRequestOf(kit: PortalKit, s: PortalSession, options: SetupOption[], field: (name: string) => string | undefined): Promise<SetupRequest> {
  const [provider, method] = (field('option') ?? '').split(':');
  const option = options.find((o) => o.provider === provider && o.method === method);
  if (!option) throw errors.invalidField('option', 'choose one of the offered payment methods');
  if (field('consent') !== 'yes') throw errors.invalidField('consent', 'tick the authorisation to save a payment method for future invoices');
  const env = { db: kit.deps.db, config: kit.deps.config, secrets: kit.deps.secrets, scope: kit.deps.scope };
  const connection = (await listConnections(kit.ctxOf(s), env)).find((c) => c.provider === option.provider);
  const currency = option.provider === 'razorpay' ? 'INR' : (connection?.currencies[0] ?? 'USD');
  if (option.provider === 'stripe') {
    return { provider: 'stripe', method: 'card', currency, mandate: null, consent: 'I authorise future invoices to be charged to this card as they fall due.' };
  }
  const rupees = Number(field('max_amount') ?? '');
  if (!Number.isInteger(rupees) || rupees < 1 || rupees > MAX_MANDATE_RUPEES)
    throw errors.invalidField('max_amount', `enter the most one debit may take, ₹1 to ₹${MAX_MANDATE_RUPEES.toLocaleString('en-IN')}`);
  const frequency = field('frequency') ?? 'as_presented';
  if (!(MANDATE_FREQUENCIES as readonly string[]).includes(frequency) || frequency === 'one_time') throw errors.invalidField('frequency', 'choose how often');
  const until = field('valid_until') ?? '';
  // A date is valid to the end of that day in India (the portal's time zone).
  const validUntil = until === '' ? null : new Date(`${until}T23:59:59+05:30`);
  if (validUntil && (Number.isNaN(validUntil.getTime()) || validUntil <= kit.now()))
    throw errors.invalidField('valid_until', 'the mandate must be valid after today');
  const mandate = { maxAmount: rupees * 100, validUntil, frequency: frequency as MandateFrequency };
  const what = option.method === 'upi_mandate' ? 'UPI AutoPay mandate' : 'card e-mandate';
  const consent =
    `I authorise debits under this ${what} of up to ₹${rupees.toLocaleString('en-IN')} each, ${frequency.replace(/_/g, ' ')}, ` +
    `${validUntil ? `until ${until}` : 'until I withdraw it'}, each announced at least 24 hours before.`;
  return { provider: 'razorpay', method: option.method, currency, mandate, consent };
}
