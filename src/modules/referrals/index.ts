/** The public face of referrals: what the completion flow uses. */
export { markReferralCompleted, recordReferralReward, toReferral } from './referrals.service.js';
export type { ReferralRow } from './referrals.repository.js';
export { referralSchema, type Referral } from './referrals.schemas.js';
