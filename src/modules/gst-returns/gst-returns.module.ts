import type { KoshModule } from '../../app-deps.js';
import { registerGstReturnRoutes } from './gst-returns.routes.js';

export const gstReturnsModule: KoshModule = { name: 'gst-returns', registerRoutes: registerGstReturnRoutes };
