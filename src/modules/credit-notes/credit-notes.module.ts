import type { KoshModule } from '../../app-deps.js';
import { expireDueCreditNotes } from './credit-notes.jobs.js';

export const creditNotesModule: KoshModule = {
  name: 'credit-notes',
  jobs: { 'credit_notes.expire': expireDueCreditNotes },
  recurring: [{ kind: 'credit_notes.expire', everyMs: 15 * 60_000 }],
};
