import type { KoshModule } from '../../app-deps.js';
import { registerInvoiceRoutes } from './invoices.routes.js';

export const invoicesModule: KoshModule = {
  name: 'invoices',
  registerRoutes: registerInvoiceRoutes,
};
