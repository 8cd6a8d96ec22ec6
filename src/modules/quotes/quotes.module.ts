import type { KoshModule } from '../../app-deps.js';
import { expireDueQuotes } from './quotes.jobs.js';
import { registerQuoteRoutes } from './quotes.routes.js';

export const quotesModule: KoshModule = {
  name: 'quotes',
  registerRoutes: registerQuoteRoutes,
  jobs: { 'quotes.expire': expireDueQuotes },
  recurring: [{ kind: 'quotes.expire', everyMs: 15 * 60_000 }],
};
