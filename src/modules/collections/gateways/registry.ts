import type { Config } from '../../../platform/config.js';
import type { GatewayAdapter, GatewayProvider } from './gateway.js';
import { razorpayAdapter } from './razorpay.js';
import { stripeAdapter } from './stripe.js';
import { testGateway } from './test.js';

export type RegisteredGateway = {
  adapter: GatewayAdapter;
  /** The provider's API base URL from configuration (tests aim adapters at local servers). */
  baseUrl: (config: Config) => string;
  /** Credentials a connection to it must carry (checked when the connection is created). */
  requiredCredentials: string[];
  /** Whether a saved-payment-method token belongs to this provider (`pm_…` Stripe, `token_…` Razorpay). */
  ownsToken: (token: string) => boolean;
};

/**
 * Every gateway Kosh can reach, by provider. The collections service finds adapters only here and
 * speaks to them only through the GatewayAdapter interface; adding a provider is one entry.
 */
export const gateways: Partial<Record<GatewayProvider, RegisteredGateway>> = {
  test: {
    adapter: testGateway,
    baseUrl: (config) => (config.testGatewayJournal ? `file:${config.testGatewayJournal}` : 'memory:'),
    requiredCredentials: [],
    ownsToken: (token) => token.startsWith('tok_'),
  },
  // INR: cards, UPI and UPI AutoPay mandates (docs/decisions/0050).
  razorpay: {
    adapter: razorpayAdapter,
    baseUrl: (config) => config.razorpayApiBase,
    requiredCredentials: ['key_id', 'key_secret', 'webhook_secret'],
    ownsToken: (token) => token.startsWith('token_'),
  },
  // Other currencies: PaymentIntents on saved PaymentMethods.
  stripe: {
    adapter: stripeAdapter,
    baseUrl: (config) => config.stripeApiBase,
    requiredCredentials: ['secret_key', 'webhook_secret'],
    ownsToken: (token) => token.startsWith('pm_'),
  },
};

export const GATEWAY_PROVIDERS = ['test', 'razorpay', 'stripe'] as const satisfies readonly GatewayProvider[];

/** DESIGN §11 and the issue: a gateway call is cut at 10 s. */
export const GATEWAY_TIMEOUT_MS = 10_000;

export function gatewayOf(provider: string): RegisteredGateway | undefined {
  return gateways[provider as GatewayProvider];
}
