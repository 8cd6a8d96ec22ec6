import type { Kysely } from 'kysely';
import type { AppScope } from '../../platform/app-scope.js';
import type { Config } from '../../platform/config.js';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { DB } from '../../platform/db/schema.js';
import { errors } from '../../platform/errors.js';
import { newId } from '../../platform/ids.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { toIso, toIsoOrNull } from '../../platform/time.js';
import type { GatewayCallContext, GatewayCredentials, SavedPaymentMethod } from './gateways/gateway.js';
import { GATEWAY_TIMEOUT_MS, gatewayOf, gateways, type RegisteredGateway } from './gateways/registry.js';
import type { MandateFrequency } from './mandates.js';
import type { AttachPaymentMethodBody, CreateConnectionBody, GatewayConnection, PaymentAttempt, PaymentMethod } from './collections.schemas.js';
import {
  activePaymentMethods,
  attemptsOfInvoice,
  clearDefault,
  connectionForCurrency,
  connectionForProvider,
  defaultPaymentMethod,
  deleteConnectionRow,
  findConnection,
  findPaymentMethod,
  insertConnection,
  insertPaymentMethod,
  listConnectionRows,
  lockCustomerPaymentMethods,
  updatePaymentMethod,
  type AttemptRow,
  type ConnectionRow,
  type PaymentMethodRow,
} from './collections.repository.js';

/** What collections needs besides a transaction: configuration (mode, base URLs) and the secret box. */
export type CollectionsEnv = { db: Kysely<DB>; config: Config; secrets: SecretBox; scope: AppScope };

const aadOf = (tenantId: string, connectionId: string) => `tenant:${tenantId}:gateway:${connectionId}`;

export function toConnection(row: ConnectionRow, env: CollectionsEnv, credentialKeys: string[]): GatewayConnection {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    provider: row.provider as GatewayConnection['provider'],
    currencies: row.currencies,
    credential_keys: credentialKeys,
    webhook_url: `${env.config.publicUrl}/webhooks/gateways/${row.provider}/${row.id}`,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function openCredentials(env: CollectionsEnv, row: ConnectionRow): GatewayCredentials {
  return env.secrets.openJson<GatewayCredentials>(row.credentials_sealed, aadOf(row.tenant_id, row.id));
}

export async function createConnection(ctx: Ctx, env: CollectionsEnv, input: CreateConnectionBody): Promise<GatewayConnection> {
  const gateway = gatewayOf(input.provider);
  if (!gateway) throw errors.invalidField('provider', `the ${input.provider} gateway is not available in this build`);
  if (input.provider === 'test' && env.config.mode === 'live') throw errors.invalidField('provider', 'the test gateway is not available in live mode');
  for (const key of gateway.requiredCredentials) {
    if (!input.credentials[key]) throw errors.invalidField(`credentials.${key}`, `is required for ${input.provider}`);
  }
  const id = newId();
  const row: ConnectionRow = {
    tenant_id: ctx.tenantId,
    id,
    provider: input.provider,
    credentials_sealed: env.secrets.sealJson(input.credentials, aadOf(ctx.tenantId, id)),
    currencies: [...new Set(input.currencies)],
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertConnection(ctx.tx, { ...row, currencies: JSON.stringify(row.currencies) });
  return toConnection(row, env, Object.keys(input.credentials).sort());
}

export async function listConnections(ctx: ReadCtx, env: CollectionsEnv): Promise<GatewayConnection[]> {
  const rows = await listConnectionRows(ctx.tx, ctx.tenantId);
  return rows.map((row) => toConnection(row, env, Object.keys(openCredentials(env, row)).sort()));
}

export async function deleteConnection(ctx: Ctx, id: string): Promise<void> {
  if (!(await deleteConnectionRow(ctx.tx, ctx.tenantId, id))) throw errors.notFound('gateway connection');
}

/** A gateway resolved for one call: the adapter, the tenant's connection (null: built-in test) and its credentials. */
export type ResolvedGateway = { provider: string; gateway: RegisteredGateway; connectionId: string | null; credentials: GatewayCredentials };

function builtInTest(env: CollectionsEnv): ResolvedGateway | undefined {
  const test = gateways.test;
  if (env.config.mode !== 'test' || !test) return undefined;
  return { provider: 'test', gateway: test, connectionId: null, credentials: {} };
}

function resolvedFrom(env: CollectionsEnv, row: ConnectionRow): ResolvedGateway {
  const gateway = gatewayOf(row.provider);
  if (!gateway) throw errors.unavailable(`the ${row.provider} gateway is not available in this build`, 'gateway_unavailable');
  return { provider: row.provider, gateway, connectionId: row.id, credentials: openCredentials(env, row) };
}

/** DESIGN §11 routing: the currency's connection, else `test` in test mode, else 400 no_gateway_for_currency. */
export async function gatewayForCurrency(ctx: ReadCtx, env: CollectionsEnv, currency: string): Promise<ResolvedGateway> {
  const row = await connectionForCurrency(ctx.tx, ctx.tenantId, currency);
  if (row) return resolvedFrom(env, row);
  const test = builtInTest(env);
  if (test) return test;
  throw errors.validation(
    `no gateway connection takes ${currency}`,
    [{ field: 'currency', message: `no gateway connection takes ${currency}` }],
    'no_gateway_for_currency',
  );
}

/** The tenant's connection to a provider (the portal's hosted setup names it); none → 404. */
export async function gatewayForProvider(ctx: ReadCtx, env: CollectionsEnv, provider: string): Promise<ResolvedGateway> {
  const row = await connectionForProvider(ctx.tx, ctx.tenantId, provider);
  if (!row) throw errors.notFound('gateway connection');
  return resolvedFrom(env, row);
}

/** The gateway a saved payment method lives on (its connection, or the built-in test gateway). */
export async function gatewayOfPaymentMethod(
  ctx: ReadCtx,
  env: CollectionsEnv,
  pm: Pick<PaymentMethodRow, 'gateway' | 'connection_id'>,
): Promise<ResolvedGateway> {
  if (pm.connection_id) {
    const row = await findConnection(ctx.tx, ctx.tenantId, pm.connection_id);
    if (row) return resolvedFrom(env, row);
  }
  if (pm.gateway === 'test') {
    const test = builtInTest(env);
    if (test) return test;
  }
  throw errors.conflict("the payment method's gateway connection was removed", 'gateway_connection_removed');
}

/** The gateway a new token belongs to: a provider that owns its form and has a connection, else the test gateway in test mode. */
export async function gatewayForToken(ctx: ReadCtx, env: CollectionsEnv, token: string): Promise<ResolvedGateway> {
  for (const [provider, gateway] of Object.entries(gateways)) {
    if (provider === 'test' || !gateway.ownsToken(token)) continue;
    const row = await connectionForProvider(ctx.tx, ctx.tenantId, provider);
    if (row) return resolvedFrom(env, row);
  }
  const row = await connectionForProvider(ctx.tx, ctx.tenantId, 'test');
  if (row && gateways.test?.ownsToken(token)) return resolvedFrom(env, row);
  const test = builtInTest(env);
  if (test) return test;
  throw errors.notFound('payment method token');
}

export function callContext(env: CollectionsEnv, resolved: ResolvedGateway, now: Date): GatewayCallContext {
  return { credentials: resolved.credentials, baseUrl: resolved.gateway.baseUrl(env.config), timeoutMs: GATEWAY_TIMEOUT_MS, now, scope: env.scope };
}

// Payment methods

export function toPaymentMethod(row: PaymentMethodRow): PaymentMethod {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    customer_id: row.customer_id,
    type: row.type,
    brand: row.brand,
    last4: row.last4,
    gateway: row.gateway,
    is_default: row.is_default,
    mandate: row.requires_pre_debit_notice
      ? {
          reference: row.reference,
          max_amount: row.mandate_max_amount,
          valid_from: toIsoOrNull(row.mandate_valid_from),
          valid_until: toIsoOrNull(row.mandate_valid_until),
          frequency: row.mandate_frequency as MandateFrequency | null,
        }
      : null,
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export function savedPaymentMethod(row: PaymentMethodRow): SavedPaymentMethod {
  return {
    type: row.type,
    brand: row.brand,
    last4: row.last4,
    reference: row.reference,
    gatewayCustomerId: row.gateway_customer_id,
    requiresPreDebitNotice: row.requires_pre_debit_notice,
  };
}

/**
 * Stores a payment method the gateway has already attached (the adapter call happens before the
 * transaction). The first method of a customer is always the default; `set_default` makes a later
 * one the default. One default per customer (a unique index).
 */
export async function savePaymentMethod(
  ctx: Ctx,
  customerId: string,
  resolved: Pick<ResolvedGateway, 'provider' | 'connectionId'>,
  saved: SavedPaymentMethod,
  input: Pick<AttachPaymentMethodBody, 'set_default' | 'mandate'>,
): Promise<PaymentMethod> {
  if (input.mandate && !saved.requiresPreDebitNotice) throw errors.invalidField('mandate', 'the payment method is not an e-mandate');
  await lockCustomerPaymentMethods(ctx.tx, ctx.tenantId, customerId);
  const current = await defaultPaymentMethod(ctx.tx, ctx.tenantId, customerId);
  const makeDefault = input.set_default || !current;
  if (makeDefault && current) await clearDefault(ctx.tx, ctx.tenantId, customerId, ctx.now);
  const row: PaymentMethodRow = {
    tenant_id: ctx.tenantId,
    id: newId(),
    customer_id: customerId,
    type: saved.type,
    brand: saved.brand,
    last4: saved.last4,
    gateway: resolved.provider,
    connection_id: resolved.connectionId,
    reference: saved.reference,
    gateway_customer_id: saved.gatewayCustomerId,
    requires_pre_debit_notice: saved.requiresPreDebitNotice,
    mandate_max_amount: input.mandate?.max_amount ?? null,
    mandate_valid_from: input.mandate ? (input.mandate.valid_from ? new Date(input.mandate.valid_from) : ctx.now) : null,
    mandate_valid_until: input.mandate?.valid_until ? new Date(input.mandate.valid_until) : null,
    mandate_frequency: input.mandate?.frequency ?? null,
    is_default: makeDefault,
    status: 'active',
    created_at: ctx.now,
    updated_at: ctx.now,
  };
  await insertPaymentMethod(ctx.tx, row);
  return toPaymentMethod(row);
}

export async function listPaymentMethods(ctx: ReadCtx, customerId: string): Promise<PaymentMethod[]> {
  return (await activePaymentMethods(ctx.tx, ctx.tenantId, customerId)).map(toPaymentMethod);
}

/** A customer's active payment method; another customer's or tenant's is a 404. */
export async function getCustomerPaymentMethod(ctx: Ctx, customerId: string, id: string): Promise<PaymentMethodRow> {
  const row = await findPaymentMethod(ctx.tx, ctx.tenantId, id);
  if (!row || row.customer_id !== customerId || row.status !== 'active') throw errors.notFound('payment method');
  return row;
}

export async function detachPaymentMethod(ctx: Ctx, customerId: string, id: string): Promise<void> {
  await lockCustomerPaymentMethods(ctx.tx, ctx.tenantId, customerId);
  const row = await getCustomerPaymentMethod(ctx, customerId, id);
  await updatePaymentMethod(ctx.tx, ctx.tenantId, row.id, { status: 'detached', is_default: false, updated_at: ctx.now });
  if (row.is_default) {
    // The newest remaining method becomes the default, so automatic charging keeps working.
    const next = (await activePaymentMethods(ctx.tx, ctx.tenantId, customerId))[0];
    if (next) await updatePaymentMethod(ctx.tx, ctx.tenantId, next.id, { is_default: true, updated_at: ctx.now });
  }
}

export async function makeDefaultPaymentMethod(ctx: Ctx, customerId: string, id: string): Promise<PaymentMethod> {
  await lockCustomerPaymentMethods(ctx.tx, ctx.tenantId, customerId);
  const row = await getCustomerPaymentMethod(ctx, customerId, id);
  if (row.is_default) return toPaymentMethod(row);
  await clearDefault(ctx.tx, ctx.tenantId, customerId, ctx.now);
  return toPaymentMethod((await updatePaymentMethod(ctx.tx, ctx.tenantId, row.id, { is_default: true, updated_at: ctx.now }))!);
}

// Attempts and refunds (read side)

export function toAttempt(row: AttemptRow): PaymentAttempt {
  return {
    id: row.id,
    invoice_id: row.invoice_id,
    payment_method_id: row.payment_method_id,
    status: row.status,
    amount: row.amount,
    currency: row.currency,
    gateway: row.gateway,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    payment_id: row.payment_id,
    charge_after: toIsoOrNull(row.charge_after),
    created_at: toIso(row.created_at),
    updated_at: toIso(row.updated_at),
  };
}

export async function listAttempts(ctx: ReadCtx, invoiceId: string): Promise<PaymentAttempt[]> {
  return (await attemptsOfInvoice(ctx.tx, ctx.tenantId, invoiceId)).map(toAttempt);
}

/**
 * Reads and writes of this module's own tables that flows and other modules call; the repository
 * itself is private to the module (index.ts exports operations and types only).
 */
export {
  insertConnection,
  listConnectionRows,
  findConnection,
  findPaymentMethod,
  findPaymentMethodByReference,
  defaultPaymentMethod,
  clearDefault,
  updatePaymentMethod,
  insertAttempt,
  findAttempt,
  pendingAttemptOf,
  attemptByGatewayPaymentId,
  finishAttempt,
  claimNoticeAttempt,
  cancelNoticeAttempt,
  duePendingAttempts,
  pendingAttemptsInClockScope,
  insertCheckoutSessions,
  findCheckoutSession,
  lockCheckoutSession,
  completeCheckoutSession,
  insertSetupSession,
  findSetupSession,
  completeSetupSession,
  recordGatewayEvent,
  holdGatewayEventForReview,
  insertRefund,
  findRefund,
  refundByGatewayId,
  insertRefundSources,
  sourcesOfRefunds,
  succeededRefundRows,
  failedRefundRowsAmong,
  refundOfCreditNote,
  finishRefund,
  findConnectionById,
  insertAttempts,
  pendingAttemptsOfInvoices,
  findAttempts,
  defaultPaymentMethodsOf,
  finishAttempts,
  successfulChargesSince,
  lastFailureCodes,
  mandateStopsOf,
  failedAutopayAttemptsOf,
  skipNoticeAttempt,
} from './collections.repository.js';
