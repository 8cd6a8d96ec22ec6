import type { KoshModule } from '../../app-deps.js';

export const couponsModule: KoshModule = {
  name: 'coupons',
};
