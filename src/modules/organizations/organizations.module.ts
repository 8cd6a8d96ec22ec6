import type { KoshModule } from '../../app-deps.js';

export const organizationsModule: KoshModule = {
  name: 'organizations',
};
