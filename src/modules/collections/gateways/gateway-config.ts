import type { Config } from '../../../platform/config.js';
import type { GatewayCallContext, GatewayCredentials, GatewayProvider } from './gateway.js';

/** Every gateway request is cut after this long unless the caller says otherwise (DESIGN §11). */
export const DEFAULT_GATEWAY_TIMEOUT_MS = 10_000;

/**
 * Base URL of a provider's REST API, from configuration (`KOSH_RAZORPAY_API_BASE`,
 * `KOSH_STRIPE_API_BASE`), so tests and staging aim the adapters at other servers. The `test`
 * gateway is built in and has none.
 */
export function gatewayApiBase(config: Pick<Config, 'razorpayApiBase' | 'stripeApiBase'>, provider: GatewayProvider): string {
  switch (provider) {
    case 'razorpay':
      return config.razorpayApiBase;
    case 'stripe':
      return config.stripeApiBase;
    case 'test':
      return '';
  }
}

/** The call context an adapter needs, with the 10 s cut unless `timeoutMs` is given. */
export function gatewayCallContext(input: {
  config: Pick<Config, 'razorpayApiBase' | 'stripeApiBase'>;
  provider: GatewayProvider;
  credentials: GatewayCredentials;
  now: Date;
  timeoutMs?: number;
}): GatewayCallContext {
  return {
    credentials: input.credentials,
    baseUrl: gatewayApiBase(input.config, input.provider),
    timeoutMs: input.timeoutMs ?? DEFAULT_GATEWAY_TIMEOUT_MS,
    now: input.now,
  };
}
