import type { KoshModule } from '../../app-deps.js';

export const giftsModule: KoshModule = {
  name: 'gifts',
};
