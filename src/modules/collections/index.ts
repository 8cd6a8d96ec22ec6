/** The public face of collections (DESIGN §11): what flows and other modules use. */
export * from './collections.service.js';
export * from './collections.repository.js';
export * from './collections.schemas.js';
export type { AttemptStatus, CollectionMethod, GatewayEventReview, PendingReason } from './collections.tables.js';
export { gateways, gatewayOf, GATEWAY_TIMEOUT_MS } from './gateways/registry.js';
export { testCardToken, testGatewayJournal, signTestWebhook, TEST_SIGNATURE_HEADER } from './gateways/test.js';
export {
  GatewayTokenNotFoundError,
  GatewayWebhookSignatureError,
  type ChargeOutcome,
  type GatewayCustomer,
  type GatewayWebhookEvent,
  type RefundOutcome,
  type SavedPaymentMethod,
} from './gateways/gateway.js';
export { checkoutGonePage, checkoutPage, gatewayName } from './checkout.pages.js';
export { getRefund, listRefunds, renderRefund, toRefund } from './refunds.service.js';
