import type { KoshModule } from '../../app-deps.js';
import { registerOrganizationRoutes } from './organizations.routes.js';

export const organizationsModule: KoshModule = {
  name: 'organizations',
  registerRoutes: registerOrganizationRoutes,
};
