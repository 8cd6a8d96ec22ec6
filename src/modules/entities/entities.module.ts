import type { KoshModule } from '../../app-deps.js';

export const entitiesModule: KoshModule = {
  name: 'entities',
};
