import type { FastifyReply } from 'fastify';
import type { AppDeps } from '../../app-deps.js';
import { dataEnvelope } from '../../platform/http/envelope.js';
import { reportCtx, type KoshApp } from '../../platform/http/server.js';
import { csvResponse, gstr1aQuery, gstr1aSchema, gstr1Schema, gstr3bSchema, returnQuery } from '../../modules/gst-returns/index.js';
import { getGstr1, getGstr1a, getGstr1Csv, getGstr3b, getGstr3bCsv } from '../../modules/gst-returns/index.js';

export function registerGstReturnRoutes(app: KoshApp, deps: AppDeps): void {
  const csv = (reply: unknown, name: string, body: string) =>
    (reply as FastifyReply).type('text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${name}.csv"`).send(body);
  app.get(
    '/v1/gst/gstr1',
    {
      schema: {
        tags: ['gst'],
        summary: "GSTR-1 of an entity for a return period (MMYYYY), as the GSTN offline tool's JSON or (format=csv) a CSV",
        querystring: returnQuery,
        errors: ['not_found', 'conflict'],
        response: {
          200: { description: 'GSTR-1', content: { 'application/json': { schema: dataEnvelope(gstr1Schema) }, 'text/csv': { schema: csvResponse } } },
        },
      },
    },
    async (request, reply) => {
      const { entity_id, period, format } = request.query;
      const ctx = reportCtx(deps, request);
      if (format === 'csv') return csv(reply, `GSTR1-${period}`, await getGstr1Csv(ctx, entity_id, period));
      return { data: await getGstr1(ctx, entity_id, period) };
    },
  );
  app.get(
    '/v1/gst/gstr3b',
    {
      schema: {
        tags: ['gst'],
        summary: 'GSTR-3B table 3.1 totals of an entity for a return period (MMYYYY)',
        querystring: returnQuery,
        errors: ['not_found', 'conflict'],
        response: {
          200: {
            description: 'GSTR-3B table 3.1',
            content: { 'application/json': { schema: dataEnvelope(gstr3bSchema) }, 'text/csv': { schema: csvResponse } },
          },
        },
      },
    },
    async (request, reply) => {
      const { entity_id, period, format } = request.query;
      const ctx = reportCtx(deps, request);
      if (format === 'csv') return csv(reply, `GSTR3B-${period}`, await getGstr3bCsv(ctx, entity_id, period));
      return { data: await getGstr3b(ctx, entity_id, period) };
    },
  );
  app.get(
    '/v1/gst/gstr1a',
    {
      schema: {
        tags: ['gst'],
        summary: 'GSTR-1A of an entity for a return period (MMYYYY): corrections after its GSTR-1 is marked filed, until its GSTR-3B is',
        querystring: gstr1aQuery,
        errors: ['not_found', 'conflict'],
        response: { 200: { description: 'GSTR-1A', content: { 'application/json': { schema: dataEnvelope(gstr1aSchema) } } } },
      },
    },
    async (request) => {
      const { entity_id, period } = request.query;
      return { data: await getGstr1a(reportCtx(deps, request), entity_id, period) };
    },
  );
}
