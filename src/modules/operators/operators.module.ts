import type { KoshModule } from '../../app-deps.js';

export const operatorsModule: KoshModule = {
  name: 'operators',
};
