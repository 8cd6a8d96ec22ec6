import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { countsChanged } from '../../platform/db/paginate.js';
import { jsonOrCsv, sendCsv, wantsCsv } from '../../platform/http/csv.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import {
  attachTenantBody,
  consolidatedMrrSchema,
  consolidatedQuery,
  createOrganizationBody,
  fxParams,
  fxRateBody,
  fxRateSchema,
  memberParams,
  organizationSchema,
  organizationTenantSchema,
} from '../../modules/organizations/index.js';
import {
  attachSelf,
  consolidatedMrr,
  createOrganization,
  detachSelf,
  getFxRates,
  getOrganization,
  listOrganizationTenants,
  listOwnOrganizations,
  rotateJoinCode,
  setFxRate,
} from '../../modules/organizations/index.js';

const tags = ['organizations'];

export function registerOrganizationRoutes(app: KoshApp, deps: AppDeps): void {
  // The member list is paginated by organization, which runAction's per-tenant reset does not reach.
  const membersChanged = (organizationId: string) => countsChanged(deps.db, organizationId);
  app.post(
    '/v1/organizations',
    {
      schema: {
        tags,
        summary: 'Create an organization; the calling tenant joins it (the join code is shown once)',
        body: createOrganizationBody,
        response: { 201: dataEnvelope(organizationSchema) },
      },
    },
    // The join code is shown once: a replay shows it again, stored sealed (DESIGN §21).
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 201, body: { data: await createOrganization(ctx, request.body) }, sealReplay: true })),
  );

  app.get(
    '/v1/organizations',
    { schema: { tags, summary: "The calling tenant's organization (a list of zero or one)", response: { 200: listEnvelope(organizationSchema) } } },
    async (request) => {
      const orgs = await listOwnOrganizations(readCtx(deps, request));
      return { data: orgs, object: 'list' as const, has_more: false, total_count: orgs.length };
    },
  );

  app.get(
    '/v1/organizations/:id',
    { schema: { tags, summary: 'Get an organization the calling tenant belongs to', params: idParams, response: { 200: dataEnvelope(organizationSchema) } } },
    async (request) => ({ data: await getOrganization(readCtx(deps, request), request.params.id) }),
  );

  app.post(
    '/v1/organizations/:id/join-code',
    { schema: { tags, summary: 'Replace the join code (the old one stops working)', params: idParams, response: { 200: dataEnvelope(organizationSchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await rotateJoinCode(ctx, request.params.id) }, sealReplay: true })),
  );

  app.post(
    '/v1/organizations/:id/tenants',
    {
      schema: {
        tags,
        summary: 'Attach the calling tenant (only itself) with the join code',
        params: idParams,
        body: attachTenantBody,
        response: { 201: dataEnvelope(organizationTenantSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: { data: await attachSelf(ctx, request.params.id, request.body.join_code) },
      })).finally(() => membersChanged(request.params.id)),
  );

  app.get(
    '/v1/organizations/:id/tenants',
    {
      schema: {
        tags,
        summary: 'List the tenants of an organization (SPEC 4.13)',
        params: idParams,
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(organizationTenantSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { tenants, total } = await listOrganizationTenants(readCtx(deps, request), request.params.id, page);
      return listResponse(tenants, total, page);
    },
  );

  app.delete(
    '/v1/organizations/:id/tenants/:tenant_id',
    {
      schema: {
        tags,
        summary: 'Leave the organization (a tenant can only detach itself)',
        params: memberParams,
        response: { 200: dataEnvelope(organizationTenantSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await detachSelf(ctx, request.params.id, request.params.tenant_id) },
      })).finally(() => membersChanged(request.params.id)),
  );

  app.put(
    '/v1/organizations/:id/fx-rates/:currency',
    {
      schema: {
        tags,
        summary: 'Set the rate of a currency into the reporting currency, in force from a date',
        params: fxParams,
        body: fxRateBody,
        response: { 200: dataEnvelope(fxRateSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await setFxRate(ctx, request.params.id, request.params.currency, request.body) },
      })),
  );

  app.get(
    '/v1/organizations/:id/fx-rates',
    { schema: { tags, summary: 'Every rate of the organization, newest first per currency', params: idParams, response: { 200: listEnvelope(fxRateSchema) } } },
    async (request) => {
      const rates = await getFxRates(readCtx(deps, request), request.params.id);
      return { data: rates, object: 'list' as const, has_more: false, total_count: rates.length };
    },
  );

  app.get(
    '/v1/organizations/:id/analytics/mrr',
    {
      schema: {
        tags,
        summary: 'Consolidated MRR in the reporting currency, per member tenant and in total (SPEC 4.16)',
        params: idParams,
        querystring: consolidatedQuery.extend({ format: z.enum(['json', 'csv']).optional() }),
        response: { 200: jsonOrCsv(dataEnvelope(consolidatedMrrSchema)) },
      },
    },
    async (request, reply) => {
      const report = await consolidatedMrr(readCtx(deps, request), request.params.id, request.query);
      if (wantsCsv(request)) {
        const rows = report.tenants.flatMap((t) =>
          t.currencies.map((c) => ({ tenant_id: t.tenant_id, tenant: t.name, reporting_currency: report.reporting_currency, date: report.date, ...c })),
        );
        return sendCsv(
          reply,
          `consolidated-mrr-${report.date}.csv`,
          ['date', 'tenant_id', 'tenant', 'currency', 'mrr', 'snapshot_date', 'rate', 'reporting_currency', 'mrr_reporting'],
          rows,
        );
      }
      return { data: report };
    },
  );
}
