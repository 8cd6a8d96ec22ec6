import type { KoshModule } from '../../app-deps.js';

export const advancesModule: KoshModule = {
  name: 'advances',
};
