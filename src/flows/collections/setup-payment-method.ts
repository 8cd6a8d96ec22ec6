import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import { getCustomer } from '../../modules/customers/index.js';
import {
  callContext,
  completeSetupSession,
  findSetupSession,
  gatewayForProvider,
  gatewayOfPaymentMethod,
  insertSetupSession,
  savePaymentMethod,
  type CollectionsEnv,
  type MandateFrequency,
  type PaymentMethod,
  type ResolvedGateway,
  type SetupSessionRow,
} from '../../modules/collections/index.js';

/** How long the provider's setup page may be finished (Stripe Checkout Sessions expire after 24 hours). */
export const SETUP_TTL_MS = 24 * 60 * 60 * 1000;

/** What the customer chose on the portal: the provider, the method, and an e-mandate's terms with the consent they agreed to. */
export type SetupRequest = {
  provider: 'razorpay' | 'stripe';
  method: 'card' | 'upi_mandate';
  currency: string;
  mandate: { maxAmount: number; validUntil: Date | null; frequency: MandateFrequency } | null;
  consent: string | null;
};

export type PreparedSetup = { id: string; customerId: string; resolved: ResolvedGateway; request: SetupRequest; url: string; reference: string };

/**
 * Step 1 of saving a payment method on the provider's hosted page (docs/decisions/0730), outside
 * any transaction: the provider is asked for the page (Stripe Checkout in setup mode, a Razorpay
 * registration link), which sends the customer back to `returnUrl(id)`.
 */
export async function prepareSetup(
  read: ReadCtx,
  env: CollectionsEnv,
  customerId: string,
  request: SetupRequest,
  returnUrl: (setupId: string) => string,
): Promise<PreparedSetup> {
  const customer = await getCustomer(read, customerId);
  const resolved = await gatewayForProvider(read, env, request.provider);
  const adapter = resolved.gateway.adapter;
  if (!adapter.createSetup) throw errors.invalidField('provider', `the ${request.provider} gateway has no hosted setup page`);
  if (request.provider === 'stripe' && request.method !== 'card')
    throw errors.invalidField('method', 'Stripe saves cards here; UPI AutoPay is set up with Razorpay');
  if (request.method === 'upi_mandate' && !request.mandate) throw errors.invalidField('mandate', 'a UPI AutoPay mandate needs its limits');
  const id = newId();
  const back = returnUrl(id);
  const page = await adapter.createSetup(callContext(env, resolved, read.now), {
    idempotencyKey: `kosh_setup_${id}`,
    method: request.method,
    currency: request.currency,
    customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone },
    mandate: request.mandate,
    description: request.method === 'upi_mandate' ? 'UPI AutoPay mandate registration' : 'Save a card for future invoices',
    successUrl: back,
    cancelUrl: `${back}${back.includes('?') ? '&' : '?'}cancelled=1`,
    metadata: { tenant_id: read.tenantId, customer_id: customer.id, setup_session_id: id },
  });
  return { id, customerId: customer.id, resolved, request, url: page.url, reference: page.gatewayReference };
}

/** Step 2, in the action's transaction: the session row, with the mandate's terms and the consent as shown. */
export async function createSetupSession(ctx: Ctx, prepared: PreparedSetup): Promise<SetupSessionRow> {
  const { request } = prepared;
  const row: SetupSessionRow = {
    tenant_id: ctx.tenantId,
    id: prepared.id,
    customer_id: prepared.customerId,
    gateway: prepared.resolved.provider,
    connection_id: prepared.resolved.connectionId!,
    method: request.method,
    status: 'open',
    gateway_reference: prepared.reference,
    redirect_url: prepared.url,
    mandate_max_amount: request.mandate?.maxAmount ?? null,
    mandate_valid_until: request.mandate?.validUntil ?? null,
    mandate_frequency: request.mandate?.frequency ?? null,
    consent_text: request.consent,
    consented_at: request.consent ? ctx.now : null,
    payment_method_id: null,
    expires_at: new Date(ctx.now.getTime() + SETUP_TTL_MS),
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertSetupSession(ctx.tx, row);
  return row;
}

/** `saved`: this call saved the payment method (false: an earlier return or event had). */
export type SetupOutcome = { kind: 'complete'; paymentMethodId: string; saved: boolean } | { kind: 'open' } | { kind: 'failed'; message: string };

/**
 * Completes a hosted setup once, from the return page or the signed webhook, whichever comes
 * first: the provider is asked server-to-server what it saved (the return address's query is
 * never believed), then `commit` runs the write (the caller's audited transaction): the session
 * row is locked, and only an open one saves the payment method and names it — a second return or
 * a redelivered event finds it complete and saves nothing.
 */
export async function confirmSetup(
  env: CollectionsEnv,
  read: ReadCtx,
  setupId: string,
  commit: (work: (ctx: Ctx) => Promise<SetupOutcome>) => Promise<SetupOutcome>,
): Promise<SetupOutcome> {
  const row = await findSetupSession(read.tx, read.tenantId, setupId);
  if (!row) throw errors.notFound('payment setup');
  if (row.status === 'complete' && row.payment_method_id) return { kind: 'complete', paymentMethodId: row.payment_method_id, saved: false };
  const resolved = await gatewayOfPaymentMethod(read, env, { gateway: row.gateway, connection_id: row.connection_id });
  const lookup = await resolved.gateway.adapter.lookupSetup?.(callContext(env, resolved, read.now), row.gateway_reference);
  if (!lookup) throw errors.invalidField('provider', `the ${row.gateway} gateway has no hosted setup page`);
  if (lookup.status !== 'complete') return lookup.status === 'open' ? { kind: 'open' } : { kind: 'failed', message: lookup.message };
  return commit(async (ctx) => {
    const locked = await findSetupSession(ctx.tx, ctx.tenantId, setupId, true);
    if (!locked) throw errors.notFound('payment setup');
    if (locked.status === 'complete' && locked.payment_method_id) return { kind: 'complete', paymentMethodId: locked.payment_method_id, saved: false };
    const mandate =
      lookup.saved.requiresPreDebitNotice && locked.mandate_max_amount !== null && locked.mandate_frequency !== null
        ? {
            max_amount: locked.mandate_max_amount,
            valid_from: ctx.now.toISOString(),
            valid_until: locked.mandate_valid_until ? new Date(locked.mandate_valid_until).toISOString() : null,
            frequency: locked.mandate_frequency as MandateFrequency,
          }
        : undefined;
    const saved: PaymentMethod = await savePaymentMethod(ctx, locked.customer_id, resolved, lookup.saved, { set_default: true, mandate });
    await completeSetupSession(ctx.tx, ctx.tenantId, setupId, saved.id, ctx.now);
    return { kind: 'complete', paymentMethodId: saved.id, saved: true };
  });
}
