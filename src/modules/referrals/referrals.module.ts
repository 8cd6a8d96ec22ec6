import type { KoshModule } from '../../app-deps.js';
import { onEvent } from '../../platform/events/events.js';
import { completeReferralOnPayment } from '../../flows/complete-referral.js';
import { expireDueReferrals } from './referrals.jobs.js';
import { registerReferralRoutes } from './referrals.routes.js';

export const referralsModule: KoshModule = {
  name: 'referrals',
  registerRoutes: registerReferralRoutes,
  jobs: { 'referrals.expire': expireDueReferrals },
  recurring: [{ kind: 'referrals.expire', everyMs: 15 * 60_000 }],
  // Completion runs inside the paying transaction (invoice.paid), so it commits with the payment.
  init: () => onEvent(completeReferralOnPayment),
};
