import type { KoshModule } from '../../app-deps.js';
import { registerPaymentRoutes } from './payments.routes.js';

export const paymentsModule: KoshModule = {
  name: 'payments',
  registerRoutes: registerPaymentRoutes,
};
