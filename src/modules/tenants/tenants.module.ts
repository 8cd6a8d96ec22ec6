import type { KoshModule } from '../../app-deps.js';
import { registerTenantRoutes } from './tenants.routes.js';

export const tenantsModule: KoshModule = {
  name: 'tenants',
  registerRoutes: registerTenantRoutes,
};
