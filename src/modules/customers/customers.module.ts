import type { KoshModule } from '../../app-deps.js';
import { registerCustomerRoutes } from './customers.routes.js';

export const customersModule: KoshModule = {
  name: 'customers',
  registerRoutes: registerCustomerRoutes,
};
