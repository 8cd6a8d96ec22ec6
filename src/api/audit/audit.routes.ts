import type { AppDeps } from '../../app-deps.js';
import { listAudit } from '../../platform/audit/audit.js';
import { listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { principalOf, type KoshApp } from '../../platform/http/server.js';
import { auditEntrySchema, auditQuery } from '../../modules/operators/index.js';

/** The audit log (DESIGN §17): every mutation by an API key or an operator, newest first. */
export function registerAuditRoutes(app: KoshApp, deps: AppDeps): void {
  app.get(
    '/v1/audit-log',
    {
      schema: {
        tags: ['operators'],
        summary: 'The audit log: who changed what, when and from where (filters: actor_id, object_type, object_id, action, from, to)',
        querystring: auditQuery.extend(paginationQuery()),
        response: { 200: listEnvelope(auditEntrySchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { entries, total } = await listAudit(deps.db, principalOf(request).tenantId, request.query, page);
      return listResponse(entries, total, page);
    },
  );
}
