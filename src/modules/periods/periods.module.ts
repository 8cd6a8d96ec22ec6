import type { KoshModule } from '../../app-deps.js';

export const periodsModule: KoshModule = {
  name: 'periods',
};
