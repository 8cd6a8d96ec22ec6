import type { KoshModule } from '../../app-deps.js';
import { registerEntityRoutes } from './entities.routes.js';

export const entitiesModule: KoshModule = {
  name: 'entities',
  registerRoutes: registerEntityRoutes,
};
