import type { KoshModule } from '../../app-deps.js';

export const paymentsModule: KoshModule = {
  name: 'payments',
};
