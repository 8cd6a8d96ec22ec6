/** The public face of prepaid credit grants (DESIGN §23): what the finalizing flows and routes use. */
export {
  createPromotionalGrant,
  customersHoldingGrants,
  drawPaidCredit,
  drawPromotionalCredit,
  getCreditGrantRow,
  insertPaidGrant,
  listCreditGrantMovements,
  listCreditGrants,
  paidCreditBalance,
  paidCreditBalances,
  recordPromotionalDraws,
  toCreditGrant,
  voidPromotionalGrant,
  autoTopUpsDue,
  claimAutoTopUpRow,
  getAutoTopUp,
  saveAutoTopUp,
  recordAutoTopUpInvoice,
  toAutoTopUp,
  topUpPaymentMethods,
  type DrawLine,
  type PromotionalDraws,
} from './credits.service.js';
export type { AutoTopUpRow, CreditGrantRow } from './credits.repository.js';
export { createCreditGrantBody, creditGrantListSchema, creditGrantSchema, type CreateCreditGrantBody, type CreditGrant } from './credits.schemas.js';
export { putAutoTopUpBody, autoTopUpSchema } from './credits.schemas.js';
export { EXPIRE_GRANTS_JOB } from './credits.jobs.js';
export { expirableGrantsInClockScope } from './credits.service.js';
