import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { AppDeps } from '../../app-deps.js';
import { errors, isKoshError } from '../../platform/errors.js';
import { dataEnvelope, idParams, listEnvelope, listResponse, paginationQuery, toPage } from '../../platform/http/envelope.js';
import { limiter, RATE_LIMIT_ABUSE_WINDOW_MS } from '../../platform/http/rate-limits.js';
import { principalOf, readCtx, runAction, type KoshApp } from '../../platform/http/server.js';
import { CSRF_COOKIE, SESSION_ABSOLUTE_MS, SESSION_COOKIE } from '../../platform/auth/sessions.js';
import { isMailConfigured } from '../../platform/mail/index.js';
import {
  acceptInvitation,
  acceptInvitationBody,
  confirmPasswordReset,
  deleteUser,
  disableTotp,
  enableTotp,
  getUser,
  invitationSchema,
  inviteBody,
  inviteUser,
  listInvitations,
  listUsers,
  me,
  passwordResetBody,
  passwordResetConfirmBody,
  recoveryCodesSchema,
  requestPasswordReset,
  revokeInvitation,
  setUpTotp,
  signedInSchema,
  signIn,
  signInBody,
  signOut,
  signOutEverywhere,
  totpDisableBody,
  totpEnableBody,
  totpSetupSchema,
  updateUser,
  updateUserBody,
  userSchema,
  type RequestMeta,
  type SessionStart,
} from '../../modules/operators/index.js';

const tags = ['operators'];
const noContent = z.null().describe('No content');

/**
 * Operators (DESIGN §17, docs/decisions/0120-operators.md): sign-in and the session cookie,
 * TOTP, password reset, invitations, and the team. Sign-in, invitation acceptance and password
 * reset are public (`security: []`): they authenticate by password or by a single-use e-mailed
 * token. The rest needs an operator's session (or, for the team routes, an API key).
 */
export function registerOperatorRoutes(app: KoshApp, deps: AppDeps): void {
  const secure = deps.config.mode === 'live';
  const now = () => deps.clock.now();
  const maxAge = SESSION_ABSOLUTE_MS / 1000;
  const cookiesFor = (start: SessionStart) => [
    `${SESSION_COOKIE}=${start.cookie}; Path=/; Max-Age=${maxAge}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
    `${CSRF_COOKIE}=${start.signedIn.csrf_token}; Path=/; Max-Age=${maxAge}; SameSite=Lax${secure ? '; Secure' : ''}`,
  ];
  const clearedCookies = [
    `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
    `${CSRF_COOKIE}=; Path=/; Max-Age=0; SameSite=Lax${secure ? '; Secure' : ''}`,
  ];
  const metaOf = (request: FastifyRequest): RequestMeta => ({
    ip: request.ip ?? null,
    userAgent: typeof request.headers['user-agent'] === 'string' ? request.headers['user-agent'] : null,
    requestId: request.id,
  });
  /** The OpenAPI security of the routes that act on the signed-in operator: the session cookie only. */
  const operatorOnly = [{ operatorSession: [] }];
  /** The signed-in operator; an API key has no session to act on. */
  const operatorOf = (request: FastifyRequest) => {
    const actor = principalOf(request).actor;
    if (actor.type !== 'user')
      throw errors.forbidden('this route acts on a signed-in operator; call it with the dashboard session, not an API key', 'session_required');
    return actor;
  };

  const publicRequests = limiter(app, {
    max: deps.config.rateLimits.portalLogin,
    windowMs: RATE_LIMIT_ABUSE_WINDOW_MS,
    what: 'sign-in requests from this address',
  });
  const emailOf = (request: FastifyRequest) => String((request.body as { email?: unknown } | undefined)?.email ?? '').toLowerCase();
  const failures = limiter(app, {
    max: deps.config.rateLimits.signInFailures,
    windowMs: RATE_LIMIT_ABUSE_WINDOW_MS,
    what: 'failed sign-ins for this e-mail',
    key: (request) => `signin:${emailOf(request)}:${request.ip}`,
  });
  // The same e-mail guessed from many addresses (decision 0222): a budget per account, however many
  // addresses the guesses come from — larger, since reaching it also locks the operator out.
  const accountFailures = limiter(app, {
    max: deps.config.rateLimits.signInFailuresPerEmail,
    windowMs: RATE_LIMIT_ABUSE_WINDOW_MS,
    what: 'failed sign-ins for this e-mail',
    key: (request) => `signin-account:${emailOf(request)}`,
  });

  app.post(
    '/v1/auth/sign-in',
    {
      config: { public: true, audit: false },
      schema: {
        errors: ['unauthorized'],
        tags,
        summary: 'Sign in with e-mail and password (and TOTP code); sets the kosh_session and kosh_csrf cookies',
        security: [],
        body: signInBody,
        response: { 200: dataEnvelope(signedInSchema) },
      },
    },
    async (request, reply) => {
      await publicRequests.hit(request, reply);
      await failures.assertOpen(request, reply);
      await accountFailures.assertOpen(request, reply);
      try {
        const start = await signIn(deps.db, now(), deps.secrets, request.body, metaOf(request));
        return reply.header('set-cookie', cookiesFor(start)).send({ data: start.signedIn });
      } catch (error) {
        if (isKoshError(error) && error.reason === 'invalid_credentials') {
          await failures.fail(request);
          await accountFailures.fail(request);
        }
        throw error;
      }
    },
  );

  app.post(
    '/v1/auth/invitations/accept',
    {
      config: { public: true, audit: false },
      schema: {
        errors: ['gone', 'conflict'],
        tags,
        summary: 'Accept an invitation: creates the operator and signs in (410 when expired or used)',
        security: [],
        body: acceptInvitationBody,
        response: { 201: dataEnvelope(signedInSchema) },
      },
    },
    async (request, reply) => {
      await publicRequests.hit(request, reply);
      const start = await acceptInvitation(deps.db, now(), request.body, metaOf(request));
      return reply.code(201).header('set-cookie', cookiesFor(start)).send({ data: start.signedIn });
    },
  );

  app.post(
    '/v1/auth/password-reset',
    {
      config: { public: true, audit: false },
      schema: {
        tags,
        summary: 'E-mail a password reset link (valid 1 h; at most 5 an hour per operator); always 202, the same work either way',
        security: [],
        body: passwordResetBody,
        response: { 202: dataEnvelope(z.object({ message: z.string() })) },
      },
    },
    async (request, reply) => {
      await publicRequests.hit(request, reply);
      await requestPasswordReset(deps.db, now(), deps.config.mode, request.body);
      return reply.code(202).send({ data: { message: 'If that address belongs to an operator, a reset link is on its way.' } });
    },
  );

  app.post(
    '/v1/auth/password-reset/confirm',
    {
      config: { public: true, audit: false },
      schema: {
        errors: ['gone'],
        tags,
        summary: 'Set a new password with the e-mailed token; signs out every session (410 when expired or used)',
        security: [],
        body: passwordResetConfirmBody,
        response: { 204: noContent },
      },
    },
    async (request, reply) => {
      await publicRequests.hit(request, reply);
      await confirmPasswordReset(deps.db, now(), request.body, metaOf(request));
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/v1/auth/me',
    {
      schema: {
        security: operatorOnly,
        tags,
        summary: 'The signed-in operator, their tenant and the CSRF token',
        response: { 200: dataEnvelope(signedInSchema) },
      },
    },
    async (request) => {
      const operator = operatorOf(request);
      return { data: await me(readCtx(deps, request), operator.id, operator.csrfToken) };
    },
  );

  app.post(
    '/v1/auth/sign-out',
    {
      config: { audit: { action: 'user.sign_out', objectType: 'user' } },
      schema: { security: operatorOnly, tags, summary: 'End this session', response: { 204: noContent } },
    },
    (request, reply) => {
      const operator = operatorOf(request);
      reply.header('set-cookie', clearedCookies);
      return runAction(deps, request, reply, async (ctx) => {
        await signOut(ctx, operator.sessionId);
        return { status: 204, body: null };
      });
    },
  );

  app.post(
    '/v1/auth/sign-out-everywhere',
    {
      config: { audit: { action: 'user.sign_out_everywhere', objectType: 'user' } },
      schema: { security: operatorOnly, tags, summary: 'End every session of the signed-in operator', response: { 204: noContent } },
    },
    (request, reply) => {
      const operator = operatorOf(request);
      reply.header('set-cookie', clearedCookies);
      return runAction(deps, request, reply, async (ctx) => {
        await signOutEverywhere(ctx, operator.id);
        return { status: 204, body: null };
      });
    },
  );

  app.post(
    '/v1/auth/totp/setup',
    {
      config: { audit: { action: 'user.totp_setup', objectType: 'user' } },
      schema: {
        security: operatorOnly,
        tags,
        summary: 'Start TOTP: a new secret, its otpauth:// URL and QR code (SVG)',
        response: { 200: dataEnvelope(totpSetupSchema) },
      },
    },
    (request, reply) => {
      const operator = operatorOf(request);
      return runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await setUpTotp(ctx, deps.secrets, operator.id) },
        replayBody: { data: { secret: '(shown only once)', otpauth_url: '(shown only once)', qr_svg: '' } },
      }));
    },
  );

  app.post(
    '/v1/auth/totp/enable',
    {
      config: { audit: { action: 'user.totp_enable', objectType: 'user' } },
      schema: {
        security: operatorOnly,
        tags,
        summary: 'Turn TOTP on with a code from the app; answers 10 single-use recovery codes (shown once)',
        body: totpEnableBody,
        response: { 200: dataEnvelope(recoveryCodesSchema) },
      },
    },
    (request, reply) => {
      const operator = operatorOf(request);
      return runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await enableTotp(ctx, deps.secrets, operator.id, request.body.code) },
        replayBody: { data: { recovery_codes: [] } },
      }));
    },
  );

  app.post(
    '/v1/auth/totp/disable',
    {
      config: { audit: { action: 'user.totp_disable', objectType: 'user' } },
      schema: { security: operatorOnly, tags, summary: 'Turn TOTP off (needs the password)', body: totpDisableBody, response: { 204: noContent } },
    },
    (request, reply) => {
      const operator = operatorOf(request);
      return runAction(deps, request, reply, async (ctx) => {
        await disableTotp(ctx, operator.id, request.body.password);
        return { status: 204, body: null };
      });
    },
  );

  // ---- the team -------------------------------------------------------------------------------

  app.post(
    '/v1/users/invitations',
    {
      config: { audit: { action: 'invitation.create', objectType: 'invitation' } },
      schema: {
        tags,
        summary: 'Invite an operator by e-mail (link valid 7 days, single use)',
        body: inviteBody,
        response: { 201: dataEnvelope(invitationSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 201,
        body: {
          data: await inviteUser(ctx, principalOf(request).actor, request.body, deps.config.publicUrl, {
            showLink: deps.config.mode === 'test' && !isMailConfigured(deps.config),
          }),
        },
      })),
  );

  app.get(
    '/v1/users/invitations',
    {
      schema: { tags, summary: 'List invitations, newest first', querystring: z.object(paginationQuery()), response: { 200: listEnvelope(invitationSchema) } },
    },
    async (request) => {
      const page = toPage(request.query);
      const { invitations, total } = await listInvitations(readCtx(deps, request), page);
      return listResponse(invitations, total, page);
    },
  );

  app.delete(
    '/v1/users/invitations/:id',
    {
      config: { audit: { action: 'invitation.revoke', objectType: 'invitation' } },
      schema: { tags, summary: 'Revoke a pending invitation', params: idParams, response: { 200: dataEnvelope(invitationSchema) } },
    },
    (request, reply) => runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await revokeInvitation(ctx, request.params.id) } })),
  );

  app.get(
    '/v1/users',
    {
      schema: {
        tags,
        summary: 'List the operators of the tenant, oldest first',
        querystring: z.object(paginationQuery()),
        response: { 200: listEnvelope(userSchema) },
      },
    },
    async (request) => {
      const page = toPage(request.query);
      const { users, total } = await listUsers(readCtx(deps, request), page);
      return listResponse(users, total, page);
    },
  );

  app.get(
    '/v1/users/:id',
    { schema: { tags, summary: 'Get an operator', params: idParams, response: { 200: dataEnvelope(userSchema) } } },
    async (request) => ({ data: await getUser(readCtx(deps, request), request.params.id) }),
  );

  app.patch(
    '/v1/users/:id',
    {
      schema: {
        tags,
        summary: "Change an operator's role or name (the last owner cannot be demoted: 409)",
        params: idParams,
        body: updateUserBody,
        response: { 200: dataEnvelope(userSchema) },
      },
    },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({
        status: 200,
        body: { data: await updateUser(ctx, principalOf(request).actor, request.params.id, request.body) },
      })),
  );

  app.delete(
    '/v1/users/:id',
    { schema: { tags, summary: 'Remove an operator (the last owner cannot be removed: 409)', params: idParams, response: { 200: dataEnvelope(userSchema) } } },
    (request, reply) =>
      runAction(deps, request, reply, async (ctx) => ({ status: 200, body: { data: await deleteUser(ctx, principalOf(request).actor, request.params.id) } })),
  );
}
