import type { KoshModule } from '../../app-deps.js';
import { registerLedgerRoutes } from './ledger.routes.js';

export const ledgerModule: KoshModule = {
  name: 'ledger',
  registerRoutes: registerLedgerRoutes,
};
