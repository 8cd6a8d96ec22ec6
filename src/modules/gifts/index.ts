/** The public face of gifts: what the purchase, cancel and redeem flows use. */
export {
  getGift,
  getGiftRow,
  giftPrice,
  insertPurchasedGift,
  lockRedeemableGift,
  markGiftCanceled,
  markGiftRedeemed,
  toGift,
  GIFT_VALIDITY_DAYS,
} from './gifts.service.js';
export type { GiftRow } from './gifts.repository.js';
export { createGiftBody, giftSchema, type CreateGiftBody, type Gift } from './gifts.schemas.js';
export { cancelGiftResponse, listGiftsQuery } from './gifts.schemas.js';
export { listGifts } from './gifts.service.js';
