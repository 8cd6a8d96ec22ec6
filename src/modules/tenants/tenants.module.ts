import type { KoshModule } from '../../app-deps.js';

export const tenantsModule: KoshModule = {
  name: 'tenants',
};
