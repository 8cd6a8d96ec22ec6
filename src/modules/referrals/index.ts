/** The public face of referrals: what the completion flow uses. */
export { markReferralCompleted, recordReferralReward, toReferral } from './referrals.service.js';
export type { ReferralRow } from './referrals.repository.js';

export { referralSchema, type Referral } from './referrals.schemas.js';
export { createReferralBody, listReferralsQuery, referralListEnvelope } from './referrals.schemas.js';
export { cancelReferral, createReferral, getReferral, listReferrals } from './referrals.service.js';
export { referredWithPendingReferral } from './referrals.service.js';
