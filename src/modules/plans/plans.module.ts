import type { KoshModule } from '../../app-deps.js';

export const plansModule: KoshModule = {
  name: 'plans',
};
