import type { KoshModule } from '../../app-deps.js';
import { registerCreditNoteRoutes } from './credit-notes.routes.js';
import { expireDueCreditNotes } from './credit-notes.jobs.js';

export const creditNotesModule: KoshModule = {
  name: 'credit-notes',
  registerRoutes: registerCreditNoteRoutes,
  jobs: { 'credit_notes.expire': expireDueCreditNotes },
  recurring: [{ kind: 'credit_notes.expire', everyMs: 15 * 60_000 }],
};
