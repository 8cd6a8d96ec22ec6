import type { KoshModule } from '../../app-deps.js';
import { registerPlanRoutes } from './plans.routes.js';

export const plansModule: KoshModule = {
  name: 'plans',
  registerRoutes: registerPlanRoutes,
};
