import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AppDeps } from '../../app-deps.js';
import { bearerToken } from '../../platform/auth/api-keys.js';
import { errors } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse } from '../../platform/http/envelope.js';
import { principalOf, readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { registerTenant } from '../../flows/tenants/register-tenant.js';
import {
  apiKeySchema,
  createKeyBody,
  newApiKeySchema,
  registerBody,
  registerResponse,
  settingsSchema,
  updateSettingsBody,
} from '../../modules/tenants/index.js';
import { forgetApiKey } from '../../platform/auth/api-keys.js';
import { sameSecret } from '../../platform/auth/secrets-compare.js';
import { limiter, RATE_LIMIT_ABUSE_WINDOW_MS, type Limiter } from '../../platform/http/rate-limits.js';
import { ownerBody, userSchema } from '../../modules/operators/index.js';
import { getSettings, issueApiKey, listApiKeys, revokeApiKey, updateSettings } from '../../modules/tenants/index.js';

/**
 * KOSH_REGISTRATION=admin: registering a tenant needs `Authorization: Bearer $KOSH_ADMIN_TOKEN`.
 * Wrong tokens are counted per client address; past the budget even the right one waits.
 */
async function assertMayRegister(deps: AppDeps, failures: Limiter, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  if (deps.config.registration === 'open') return;
  if (!deps.config.adminToken) {
    throw errors.forbidden('registration is closed on this deployment (KOSH_REGISTRATION=admin and no KOSH_ADMIN_TOKEN is set)', 'registration_closed');
  }
  await failures.assertOpen(request, reply);
  const token = bearerToken(request.headers.authorization);
  if (!token || !sameSecret(token, deps.config.adminToken)) {
    await failures.fail(request);
    throw errors.unauthorized('invalid_admin_token', 'registration requires the admin token (Authorization: Bearer <KOSH_ADMIN_TOKEN>)');
  }
}

export function registerTenantRoutes(app: KoshApp, deps: AppDeps): void {
  const adminFailures = limiter(app, { max: deps.config.rateLimits.adminFailures, windowMs: RATE_LIMIT_ABUSE_WINDOW_MS, what: 'failed admin-token attempts' });

  app.post(
    '/auth/register',
    {
      schema: {
        tags: ['tenants'],
        summary: 'Register a tenant; answers its first API key (shown only here)',
        security: [],
        errors: ['unauthorized', 'forbidden'],
        body: registerBody.extend({
          owner: ownerBody.optional().describe("The tenant's first operator (role owner), who can then sign in to the dashboard"),
        }),
        response: { 201: registerResponse.extend({ data: registerResponse.shape.data.extend({ owner: userSchema.optional() }) }) },
      },
    },
    async (request, reply) => {
      await assertMayRegister(deps, adminFailures, request, reply);
      const result = await registerTenant(deps.db, deps.clock.now(), request.body, deps.config.mode);
      return reply.code(201).send({ data: result });
    },
  );

  // The body is optional; Fastify hands a bodiless POST to the validator as null, not undefined.
  app.post(
    '/v1/developer/keys',
    {
      schema: {
        tags: ['tenants'],
        summary: 'Create an API key (the secret is shown once)',
        body: createKeyBody.nullish(),
        response: { 201: dataEnvelope(newApiKeySchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => {
        // A key is always of its tenant's mode (a tenant lives in one mode; see decision 0030).
        const created = await issueApiKey(ctx, principalOf(request).actor, { name: request.body?.name, mode: request.body?.mode, role: request.body?.role });
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
      const sent = await runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await revokeApiKey(ctx, principalOf(request).actor, request.params.id) },
      }));
      forgetApiKey(deps.scope, request.params.id); // committed: no request of this app trusts the key any more
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
