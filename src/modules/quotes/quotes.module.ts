import type { KoshModule } from '../../app-deps.js';
import { expireDueQuotes } from './quotes.jobs.js';

export const quotesModule: KoshModule = {
  name: 'quotes',
  jobs: { 'quotes.expire': expireDueQuotes },
  recurring: [{ kind: 'quotes.expire', everyMs: 15 * 60_000 }],
};
