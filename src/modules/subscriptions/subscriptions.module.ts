import type { KoshModule } from '../../app-deps.js';

export const subscriptionsModule: KoshModule = {
  name: 'subscriptions',
};
