import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope } from '../../platform/http/envelope.js';
import { readCtx, type KoshApp } from '../../platform/http/server.js';
import { compareImport } from '../../modules/importer/index.js';
import { documentSource } from '../../modules/importer/index.js';
import { compareBody, compareReportSchema } from '../../modules/importer/index.js';

export function registerImporterRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/v1/imports/compare',
    {
      schema: {
        tags: ['imports'],
        summary: 'Compare a source export with the live records (the import compare gate)',
        description:
          'The body is an import document `{ plans, customers, subscriptions }` (as for `kosh import`). Read-only. ' +
          '`ready` is true only when there are no issues. `kosh import compare` gives the same report for files of any size.',
        body: compareBody,
        response: { 200: dataEnvelope(compareReportSchema) },
      },
    },
    async (request) => ({ data: await compareImport(readCtx(deps, request), documentSource(request.body)) }),
  );
}
