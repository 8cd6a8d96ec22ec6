import type { KoshModule } from '../../app-deps.js';

export const balancesModule: KoshModule = {
  name: 'balances',
};
