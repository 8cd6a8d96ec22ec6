import type { Ctx, ReadCtx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { getCustomer } from '../../modules/customers/index.js';
import {
  callContext,
  gatewayForToken,
  GatewayTokenNotFoundError,
  savePaymentMethod,
  type CollectionsEnv,
  type MandateTermsInput,
  type PaymentMethod,
  type ResolvedGateway,
  type SavedPaymentMethod,
} from '../../modules/collections/index.js';

export type PreparedPaymentMethod = { customerId: string; resolved: ResolvedGateway; saved: SavedPaymentMethod };

/**
 * Step 1 of saving a payment method (the API and the portal), outside any transaction: the token's
 * gateway attaches it (a network call for real providers). An unknown token → 404.
 */
export async function preparePaymentMethod(read: ReadCtx, env: CollectionsEnv, customerId: string, token: string): Promise<PreparedPaymentMethod> {
  const customer = await getCustomer(read, customerId);
  const resolved = await gatewayForToken(read, env, token);
  try {
    const saved = await resolved.gateway.adapter.attachPaymentMethod(callContext(env, resolved, read.now), {
      token,
      customer: { id: customer.id, email: customer.email, name: customer.name, phone: customer.phone },
      gatewayCustomerId: null,
    });
    return { customerId: customer.id, resolved, saved };
  } catch (error) {
    if (error instanceof GatewayTokenNotFoundError) throw errors.notFound('payment method token');
    throw error;
  }
}

/** Step 2, in the action's transaction; `mandate`: an e-mandate's terms as the customer agreed them at registration. */
export async function storePaymentMethod(ctx: Ctx, prepared: PreparedPaymentMethod, setDefault: boolean, mandate?: MandateTermsInput): Promise<PaymentMethod> {
  return savePaymentMethod(ctx, prepared.customerId, prepared.resolved, prepared.saved, { set_default: setDefault, mandate });
}
