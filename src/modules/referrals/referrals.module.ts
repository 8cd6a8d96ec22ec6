import type { KoshModule } from '../../app-deps.js';
import { expireDueReferrals } from './referrals.jobs.js';

export const referralsModule: KoshModule = {
  name: 'referrals',
  jobs: { 'referrals.expire': expireDueReferrals },
  recurring: [{ kind: 'referrals.expire', everyMs: 15 * 60_000 }],
};
