import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../../app-deps.js';
import { bearerToken } from '../../platform/auth/api-keys.js';
import { errors } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse } from '../../platform/http/envelope.js';
import { readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { registerTenant } from '../../flows/register-tenant.js';
import { apiKeySchema, createKeyBody, newApiKeySchema, registerBody, registerResponse, settingsSchema, updateSettingsBody } from './tenants.schemas.js';
import { forgetApiKey } from '../../platform/auth/api-keys.js';
import { getSettings, issueApiKey, listApiKeys, revokeApiKey, updateSettings } from './tenants.service.js';

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** KOSH_REGISTRATION=admin: registering a tenant needs `Authorization: Bearer $KOSH_ADMIN_TOKEN`. */
function assertMayRegister(deps: AppDeps, request: FastifyRequest): void {
  if (deps.config.registration === 'open') return;
  if (!deps.config.adminToken) {
    throw errors.forbidden('registration is closed on this deployment (KOSH_REGISTRATION=admin and no KOSH_ADMIN_TOKEN is set)', 'registration_closed');
  }
  const token = bearerToken(request.headers.authorization);
  if (!token || !sameSecret(token, deps.config.adminToken)) {
    throw errors.unauthorized('invalid_admin_token', 'registration requires the admin token (Authorization: Bearer <KOSH_ADMIN_TOKEN>)');
  }
}

export function registerTenantRoutes(app: KoshApp, deps: AppDeps): void {
  app.post(
    '/auth/register',
    {
      schema: {
        tags: ['tenants'],
        summary: 'Register a tenant; answers its first API key (shown only here)',
        security: [],
        body: registerBody,
        response: { 201: registerResponse },
      },
    },
    async (request, reply) => {
      assertMayRegister(deps, request);
      const result = await registerTenant(deps.db, deps.clock.now(), request.body, deps.config.mode);
      return reply.code(201).send({ data: result });
    },
  );

  // The body is optional; Fastify hands a bodiless POST to the validator as null, not undefined.
  app.post(
    '/v1/developer/keys',
    { schema: { tags: ['tenants'], summary: 'Create an API key (the secret is shown once)', body: createKeyBody.nullish(), response: { 201: dataEnvelope(newApiKeySchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        const created = await issueApiKey(ctx, { name: request.body?.name, mode: request.body?.mode ?? deps.config.mode });
        // The secret is shown once: a replay of this request answers the key without it.
        return { status: 201, body: { data: created }, replayBody: { data: { ...created, key: `${created.prefix}… (shown only once)` } } };
      }),
  );
  app.get(
    '/v1/developer/keys',
    { schema: { tags: ['tenants'], summary: 'List API keys (never their secrets)', response: { 200: listEnvelope(apiKeySchema) } } },
    async (request) => {
      const keys = await listApiKeys(readCtx(deps, request));
      return listResponse(keys, keys.length, { limit: keys.length, page: 1, offset: 0 });
    },
  );
  app.delete(
    '/v1/developer/keys/:id',
    { schema: { tags: ['tenants'], summary: 'Revoke an API key', params: idParams, response: { 200: dataEnvelope(apiKeySchema) } } },
    async (request, reply) => {
      const sent = await runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await revokeApiKey(ctx, request.params.id) } }));
      forgetApiKey(request.params.id); // committed: no request of this process trusts the key any more
      return sent;
    },
  );

  app.get(
    '/v1/settings',
    { schema: { tags: ['tenants'], summary: 'Get tenant settings', response: { 200: dataEnvelope(settingsSchema) } } },
    async (request) => ({ data: await getSettings(readCtx(deps, request)) }),
  );
  app.patch(
    '/v1/settings',
    { schema: { tags: ['tenants'], summary: 'Update tenant settings', body: updateSettingsBody, response: { 200: dataEnvelope(settingsSchema) } } },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await updateSettings(ctx, request.body) } })),
  );
}

