import type { KoshModule } from '../../app-deps.js';

export const invoicesModule: KoshModule = {
  name: 'invoices',
};
