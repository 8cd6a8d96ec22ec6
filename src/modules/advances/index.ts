/** The public face of customer advances (receipt and refund vouchers) and the customer balance. */
export {
  receiveAdvance,
  applyAdvances,
  refundAdvance,
  refundVoucherOfRefund,
  getAdvance,
  listAdvances,
  customersWithOpenAdvances,
  toAdvance,
} from './advances.service.js';
export { taxOfPrepayment, receivePrepayment, prepaymentsOfGrant, adjustPrepayment, type PrepaymentReceipt } from './advances.service.js';
export { taxOfAdvance } from './advance-tax.js';
export { advanceSchema, listAdvancesQuery, refundAdvanceBody, type Advance, type RefundAdvanceBody } from './advances.schemas.js';
