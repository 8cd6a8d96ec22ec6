/** The public face of coupons: what routes and the invoicing flows use. */
export { applyDiscounts, type DiscountAllocation, type DiscountableLine, type DiscountRule } from './apply-discounts.js';
export {
  createCoupon,
  discountCovers,
  discountLines,
  removeSubscriptionDiscount,
  discountRule,
  getCoupon,
  listCoupons,
  recordInvoiceDiscounts,
  redeemCoupon,
  subscriptionDiscounts,
  toCoupon,
  toDiscount,
  updateCoupon,
  type DiscountInForce,
  type RedemptionTarget,
} from './coupons.service.js';
export type { CouponRow, DiscountRow } from './coupons.repository.js';
export {
  applyDiscountBody,
  couponReference,
  couponSchema,
  createCouponBody,
  discountSchema,
  listCouponsQuery,
  updateCouponBody,
  type ApplyDiscountBody,
  type Coupon,
  type Discount,
} from './coupons.schemas.js';
export { findCoupon } from './coupons.service.js';
export {
  createRetentionOffer,
  getRetentionOffer,
  listRetentionOffers,
  recordRetentionAcceptance,
  retentionEligibility,
  toPortalRetentionOffer,
  updateRetentionOffer,
  type RetentionEligibility,
  type RetentionTarget,
} from './retention-offers.js';
export {
  createRetentionOfferBody,
  listRetentionOffersQuery,
  portalRetentionOfferSchema,
  retentionOfferSchema,
  updateRetentionOfferBody,
  type PortalRetentionOffer,
  type RetentionOffer,
} from './retention-offers.schemas.js';
