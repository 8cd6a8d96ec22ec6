import type { KoshModule } from '../../app-deps.js';

export const customersModule: KoshModule = {
  name: 'customers',
};
