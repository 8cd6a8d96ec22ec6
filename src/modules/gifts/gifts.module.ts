import type { KoshModule } from '../../app-deps.js';
import { registerGiftRoutes } from './gifts.routes.js';

export const giftsModule: KoshModule = {
  name: 'gifts',
  registerRoutes: registerGiftRoutes,
};
