import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope, idParams } from '../../platform/http/envelope.js';
import { readCtx, type KoshApp } from '../../platform/http/server.js';
import { journalEntrySchema } from '../../modules/ledger/index.js';
import { getJournalEntry } from '../../modules/ledger/index.js';

export function registerLedgerRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/ledger/journal-entries/:id',
    { schema: { tags: ['ledger'], summary: 'Get a journal entry with its lines', params: idParams, response: { 200: dataEnvelope(journalEntrySchema) } } },
    async (request) => ({ data: await getJournalEntry(readCtx(deps, request), request.params.id) }),
  );
}
