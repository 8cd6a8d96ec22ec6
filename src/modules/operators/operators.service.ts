import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { hash as argonHash, verify as argonVerify } from '@node-rs/argon2';
import * as OTPAuth from 'otpauth';
import QRCode from 'qrcode';
import type { Ctx, ReadCtx } from '../../platform/context.js';
import type { DB, Tx, WriteTx } from '../../platform/db/schema.js';
import type { SecretBox } from '../../platform/secrets/secrets.js';
import { assertMayGrant, type Actor, type Role } from '../../platform/auth/actor.js';
import type { UsersTable } from '../../platform/auth/auth.tables.js';
import { hashToken, newSecret, parseTenantCredential, revokeSession, revokeUserSessions, startSession } from '../../platform/auth/sessions.js';
import { appendAudit } from '../../platform/audit/audit.js';
import { errors } from '../../platform/errors.js';
import type { Page } from '../../platform/http/envelope.js';
import { newId } from '../../platform/ids.js';
import { enqueueMail } from '../../platform/mail/index.js';
import { enqueueJob } from '../../platform/jobs/jobs.js';
import { getTenant } from '../tenants/index.js';
import type { Invitation, OwnerInput, SignedIn, SignInBody, UpdateUserBody, User } from './operators.schemas.js';
import './operators.tables.js';
import { invitationsPage, usersPage } from './operators.repository.js';
import { assertAcceptablePassword } from './password-policy.js';

export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const RESET_TTL_MS = 60 * 60 * 1000;
export const RECOVERY_CODE_COUNT = 10;
/** The one answer to every wrong e-mail, password, TOTP or recovery code. */
export const INVALID_CREDENTIALS = 'the e-mail, password or code is not correct';

// argon2id (the library's default algorithm; the hash starts `$argon2id$`) with OWASP's minimum
// parameters (19 MiB, 2 passes, 1 lane): tens of milliseconds on a small machine.
const ARGON = { memoryCost: 19_456, timeCost: 2, parallelism: 1 };

export function hashPassword(password: string): Promise<string> {
  return argonHash(password, ARGON);
}

/** A hash of nothing anyone knows, verified when the e-mail is unknown so both answers take as long. */
let decoy: Promise<string> | undefined;
async function verifyPassword(hash: string | undefined, password: string): Promise<boolean> {
  decoy ??= hashPassword(randomBytes(16).toString('hex'));
  try {
    return await argonVerify(hash ?? (await decoy), password);
  } catch {
    return false;
  }
}

type UserRow = UsersTable;

export function toUser(row: UserRow): User {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    totp_enabled: row.totp_enabled_at !== null,
    last_sign_in_at: row.last_sign_in_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

async function findUser(tx: Tx, tenantId: string, id: string): Promise<UserRow | undefined> {
  return tx.selectFrom('users').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id).executeTakeFirst();
}

async function insertUser(tx: Tx, now: Date, tenantId: string, input: { email: string; name: string; role: Role; password: string }): Promise<UserRow> {
  const taken = await tx.selectFrom('users').select('id').where('tenant_id', '=', tenantId).where('email', '=', input.email).executeTakeFirst();
  if (taken) throw errors.conflict('an operator with this e-mail already exists in this tenant', 'user_email_taken');
  const row: UserRow = {
    tenant_id: tenantId,
    id: newId(),
    email: input.email,
    name: input.name,
    role: input.role,
    password_hash: await hashPassword(input.password),
    totp_secret: null,
    totp_pending_secret: null,
    totp_enabled_at: null,
    totp_last_step: null,
    last_sign_in_at: null,
    created_at: now,
    updated_at: now,
  };
  await tx.insertInto('users').values(row).execute();
  return row;
}

/** The tenant's first owner, made at registration (POST /auth/register `owner`). */
export async function createOwner(ctx: Ctx, input: OwnerInput): Promise<User> {
  assertAcceptablePassword(input.password, input);
  return toUser(await insertUser(ctx.tx, ctx.now, ctx.tenantId, { ...input, role: 'owner' }));
}

/** `<tenant id>.<secret>`: the tenant finds the row, only the secret's hash is stored. */
function newTenantToken(tenantId: string): { token: string; hash: string } {
  const secret = newSecret();
  return { token: `${tenantId}.${secret}`, hash: hashToken(secret) };
}

function invitationStatus(row: { accepted_at: Date | null; revoked_at: Date | null; expires_at: Date }, now: Date): Invitation['status'] {
  if (row.accepted_at) return 'accepted';
  if (row.revoked_at) return 'revoked';
  return row.expires_at <= now ? 'expired' : 'pending';
}

type InvitationRow = { id: string; email: string; role: Role; expires_at: Date; accepted_at: Date | null; revoked_at: Date | null; created_at: Date };

function toInvitation(row: InvitationRow, now: Date): Invitation {
  return {
    id: row.id,
    email: row.email,
    role: row.role,
    status: invitationStatus(row, now),
    expires_at: row.expires_at.toISOString(),
    created_at: row.created_at.toISOString(),
  };
}

/**
 * `showLink`: test mode with no SMTP server — the answer carries the link (decision 0490), since
 * the e-mail cannot go out and the inviter would otherwise have no way to hand it over.
 */
export async function inviteUser(
  ctx: Ctx,
  actor: Actor,
  input: { email: string; role: Role },
  publicUrl: string,
  { showLink = false }: { showLink?: boolean } = {},
): Promise<Invitation> {
  assertMayGrant(actor, input.role);
  const existing = await ctx.tx.selectFrom('users').select('id').where('tenant_id', '=', ctx.tenantId).where('email', '=', input.email).executeTakeFirst();
  if (existing) throw errors.conflict('an operator with this e-mail already exists in this tenant', 'user_email_taken');
  const tenant = await getTenant(ctx);
  const { token, hash } = newTenantToken(ctx.tenantId);
  const row = {
    tenant_id: ctx.tenantId,
    id: newId(),
    email: input.email,
    role: input.role,
    token_hash: hash,
    invited_by_type: actor.type,
    invited_by_id: actor.id,
    expires_at: new Date(ctx.now.getTime() + INVITATION_TTL_MS),
    accepted_at: null,
    revoked_at: null,
    created_at: ctx.now,
  };
  await ctx.tx.insertInto('user_invitations').values(row).execute();
  const link = `${publicUrl.replace(/\/$/, '')}/dashboard/accept-invitation?token=${encodeURIComponent(token)}`;
  await enqueueMail(ctx.tx, ctx.now, {
    tenantId: ctx.tenantId,
    to: input.email,
    fromName: tenant.name.replace(/[\r\n]/g, ' ').slice(0, 200),
    subject: `You are invited to ${tenant.name} on Kosh`.replace(/[\r\n]/g, ' ').slice(0, 500),
    text:
      `${actor.type === 'user' ? actor.label : tenant.name} invited you to run billing for ${tenant.name} on Kosh as ${input.role}.\n\n` +
      `Accept the invitation (valid 7 days, single use):\n${link}\n\nIf you did not expect this, ignore this e-mail.`,
  });
  return { ...toInvitation(row, ctx.now), ...(showLink ? { accept_url: link } : {}) };
}

export async function listInvitations(ctx: ReadCtx, page: Page): Promise<{ invitations: Invitation[]; total: number }> {
  const { rows, total } = await invitationsPage(ctx.tx, ctx.tenantId, page);
  return { invitations: rows.map((r) => toInvitation(r, ctx.now)), total };
}

export async function revokeInvitation(ctx: Ctx, id: string): Promise<Invitation> {
  const row = await ctx.tx
    .updateTable('user_invitations')
    .set({ revoked_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
  if (row) return toInvitation(row, ctx.now);
  const found = await ctx.tx.selectFrom('user_invitations').selectAll().where('tenant_id', '=', ctx.tenantId).where('id', '=', id).executeTakeFirst();
  if (!found) throw errors.notFound('invitation');
  return toInvitation(found, ctx.now); // already accepted or revoked: nothing to do
}

export type RequestMeta = { ip: string | null; userAgent: string | null; requestId: string };
export type SessionStart = { signedIn: SignedIn; cookie: string; expiresAt: Date };

async function openSession(tx: WriteTx, now: Date, user: UserRow, meta: RequestMeta, action: string): Promise<SessionStart> {
  const session = await startSession(tx, { tenantId: user.tenant_id, userId: user.id, now, ip: meta.ip, userAgent: meta.userAgent });
  await tx.updateTable('users').set({ last_sign_in_at: now }).where('tenant_id', '=', user.tenant_id).where('id', '=', user.id).execute();
  await appendAudit(tx, {
    tenantId: user.tenant_id,
    actor: { type: 'user', id: user.id, label: user.email, role: user.role, sessionId: session.sessionId, csrfToken: '' },
    action,
    objectType: 'user',
    objectId: user.id,
    changes: {},
    ip: meta.ip,
    requestId: meta.requestId,
    at: now,
  });
  const tenant = await getTenant({ tx, tenantId: user.tenant_id, now });
  return {
    signedIn: { user: toUser({ ...user, last_sign_in_at: now }), tenant: { id: tenant.id, name: tenant.name }, csrf_token: session.csrfToken },
    cookie: session.cookie,
    expiresAt: session.expiresAt,
  };
}

/** Accepts an invitation: the operator exists from now, signed in. Expired, used or unknown → 410. */
export async function acceptInvitation(
  db: Kysely<DB>,
  now: Date,
  input: { token: string; name: string; password: string },
  meta: RequestMeta,
): Promise<SessionStart> {
  const credential = parseTenantCredential(input.token);
  const expired = () => errors.gone('this invitation has expired or was already used; ask for a new one', 'invitation_expired');
  if (!credential) throw expired();
  const passwordHash = await hashPassword(input.password);
  return db.transaction().execute(async (tx) => {
    const invitation = await tx
      .selectFrom('user_invitations')
      .selectAll()
      .where('tenant_id', '=', credential.tenantId)
      .where('token_hash', '=', hashToken(credential.secret))
      .forUpdate()
      .executeTakeFirst();
    if (!invitation || invitationStatus(invitation, now) !== 'pending') throw expired();
    assertAcceptablePassword(input.password, { email: invitation.email, name: input.name });
    await tx.updateTable('user_invitations').set({ accepted_at: now }).where('tenant_id', '=', invitation.tenant_id).where('id', '=', invitation.id).execute();
    const taken = await tx
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', invitation.tenant_id)
      .where('email', '=', invitation.email)
      .executeTakeFirst();
    if (taken) throw errors.conflict('an operator with this e-mail already exists in this tenant', 'user_email_taken');
    const user: UserRow = {
      tenant_id: invitation.tenant_id,
      id: newId(),
      email: invitation.email,
      name: input.name,
      role: invitation.role,
      password_hash: passwordHash,
      totp_secret: null,
      totp_pending_secret: null,
      totp_enabled_at: null,
      totp_last_step: null,
      last_sign_in_at: null,
      created_at: now,
      updated_at: now,
    };
    await tx.insertInto('users').values(user).execute();
    return openSession(tx, now, user, meta, 'user.invitation_accepted');
  });
}

const normalizeCode = (code: string) => code.replace(/[\s-]/g, '').toLowerCase();
const hashRecoveryCode = (code: string) =>
  createHash('sha256')
    .update(`kosh-recovery:${normalizeCode(code)}`)
    .digest('hex');

function totpOf(secretBase32: string, email: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({ issuer: 'Kosh', label: email, algorithm: 'SHA1', digits: 6, period: 30, secret: OTPAuth.Secret.fromBase32(secretBase32) });
}

const totpAad = (user: { tenant_id: string; id: string }) => `tenant:${user.tenant_id}:user:${user.id}:totp`;

const TOTP_PERIOD_MS = 30_000;

/** The time step of the code when it matches (±1 step), else null. */
function totpStep(secrets: SecretBox, user: UserRow, sealed: string, code: string, now: Date): number | null {
  const secret = secrets.open(sealed, totpAad(user));
  const delta = totpOf(secret, user.email).validate({ token: code.replace(/\s/g, ''), timestamp: now.getTime(), window: 1 });
  return delta === null ? null : Math.floor(now.getTime() / TOTP_PERIOD_MS) + delta;
}

/**
 * Spends a time step: a code is accepted once (RFC 6238 §5.2), so a code seen over a shoulder or
 * in a log cannot be used again. False when this or a later step was already used.
 */
async function spendTotpStep(tx: Tx, user: UserRow, step: number): Promise<boolean> {
  const spent = await tx
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('tenant_id', '=', user.tenant_id)
    .where('id', '=', user.id)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return spent !== undefined;
}

/**
 * Sign-in: e-mail + password, then the TOTP code or a recovery code when TOTP is on. Every wrong
 * answer is the same 401 `invalid_credentials` (the caller counts it against the rate limit);
 * a right password without a code, when TOTP is on, is 401 `totp_required`.
 */
export async function signIn(db: Kysely<DB>, now: Date, secrets: SecretBox, input: SignInBody, meta: RequestMeta): Promise<SessionStart> {
  let query = db.selectFrom('users').innerJoin('tenants', 'tenants.id', 'users.tenant_id').selectAll('users').where('users.email', '=', input.email);
  if (input.tenant_id) query = query.where('users.tenant_id', '=', input.tenant_id);
  const candidates = await query
    .orderBy('users.last_sign_in_at', (ob) => ob.desc().nullsLast())
    .orderBy('users.created_at', 'desc')
    .limit(1)
    .execute();
  const user = candidates[0];
  const passwordOk = await verifyPassword(user?.password_hash, input.password);
  if (!user || !passwordOk) throw errors.unauthorized('invalid_credentials', INVALID_CREDENTIALS);
  return db.transaction().execute(async (tx) => {
    if (user.totp_enabled_at && user.totp_secret) {
      if (input.totp_code) {
        const step = totpStep(secrets, user, user.totp_secret, input.totp_code, now);
        if (step === null || !(await spendTotpStep(tx, user, step))) throw errors.unauthorized('invalid_credentials', INVALID_CREDENTIALS);
      } else if (input.recovery_code) {
        const used = await tx
          .updateTable('user_recovery_codes')
          .set({ used_at: now })
          .where('tenant_id', '=', user.tenant_id)
          .where('user_id', '=', user.id)
          .where('code_hash', '=', hashRecoveryCode(input.recovery_code))
          .where('used_at', 'is', null)
          .returning('id')
          .executeTakeFirst();
        if (!used) throw errors.unauthorized('invalid_credentials', INVALID_CREDENTIALS);
      } else {
        throw errors.unauthorized('totp_required', 'enter the code from your authenticator app (or a recovery code)');
      }
    }
    return openSession(tx, now, user, meta, input.recovery_code && user.totp_enabled_at ? 'user.sign_in_recovery_code' : 'user.sign_in');
  });
}

export async function signOut(ctx: Ctx, sessionId: string): Promise<void> {
  await revokeSession(ctx.tx, ctx.tenantId, sessionId, ctx.now);
}

export async function signOutEverywhere(ctx: Ctx, userId: string): Promise<void> {
  await revokeUserSessions(ctx.tx, ctx.tenantId, userId, ctx.now);
}

export async function me(ctx: ReadCtx, userId: string, csrfToken: string): Promise<SignedIn> {
  const user = await findUser(ctx.tx, ctx.tenantId, userId);
  if (!user) throw errors.unauthorized('invalid_session');
  const tenant = await getTenant(ctx);
  return { user: toUser(user), tenant: { id: tenant.id, name: tenant.name }, csrf_token: csrfToken };
}

async function userForUpdate(ctx: Ctx, userId: string): Promise<UserRow> {
  const user = await ctx.tx.selectFrom('users').selectAll().where('tenant_id', '=', ctx.tenantId).where('id', '=', userId).forUpdate().executeTakeFirst();
  if (!user) throw errors.unauthorized('invalid_session');
  return user;
}

/** A new pending secret; TOTP is on only once `enableTotp` sees a code made from it. */
export async function setUpTotp(ctx: Ctx, secrets: SecretBox, userId: string): Promise<{ secret: string; otpauth_url: string; qr_svg: string }> {
  const user = await userForUpdate(ctx, userId);
  if (user.totp_enabled_at) throw errors.conflict('TOTP is already on; turn it off first to set up a new authenticator', 'totp_already_enabled');
  const secret = new OTPAuth.Secret({ size: 20 }).base32;
  await ctx.tx
    .updateTable('users')
    .set({ totp_pending_secret: secrets.seal(secret, totpAad(user)), updated_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', userId)
    .execute();
  const url = totpOf(secret, user.email).toString();
  const svg = await QRCode.toString(url, { type: 'svg', margin: 1 });
  return { secret, otpauth_url: url, qr_svg: svg };
}

export async function enableTotp(ctx: Ctx, secrets: SecretBox, userId: string, code: string): Promise<{ recovery_codes: string[] }> {
  const user = await userForUpdate(ctx, userId);
  if (user.totp_enabled_at) throw errors.conflict('TOTP is already on', 'totp_already_enabled');
  if (!user.totp_pending_secret) throw errors.conflict('set up TOTP first (POST /v1/auth/totp/setup)', 'totp_not_set_up');
  const step = totpStep(secrets, user, user.totp_pending_secret, code, ctx.now);
  if (step === null) throw errors.unauthorized('invalid_credentials', INVALID_CREDENTIALS);
  await ctx.tx
    .updateTable('users')
    .set({ totp_secret: user.totp_pending_secret, totp_pending_secret: null, totp_enabled_at: ctx.now, totp_last_step: step, updated_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', userId)
    .execute();
  await ctx.tx.deleteFrom('user_recovery_codes').where('tenant_id', '=', ctx.tenantId).where('user_id', '=', userId).execute();
  const codes: string[] = [];
  for (let i = 0; i < RECOVERY_CODE_COUNT; i++) {
    const raw = randomBytes(8).toString('hex'); // 64 bits
    codes.push(`${raw.slice(0, 4)}-${raw.slice(4, 8)}-${raw.slice(8, 12)}-${raw.slice(12)}`);
  }
  await ctx.tx
    .insertInto('user_recovery_codes')
    .values(codes.map((c) => ({ tenant_id: ctx.tenantId, id: newId(), user_id: userId, code_hash: hashRecoveryCode(c), used_at: null, created_at: ctx.now })))
    .execute();
  return { recovery_codes: codes };
}

export async function disableTotp(ctx: Ctx, userId: string, password: string): Promise<void> {
  const user = await userForUpdate(ctx, userId);
  if (!(await verifyPassword(user.password_hash, password))) throw errors.unauthorized('invalid_credentials', INVALID_CREDENTIALS);
  await ctx.tx
    .updateTable('users')
    .set({ totp_secret: null, totp_pending_secret: null, totp_enabled_at: null, totp_last_step: null, updated_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', userId)
    .execute();
  await ctx.tx.deleteFrom('user_recovery_codes').where('tenant_id', '=', ctx.tenantId).where('user_id', '=', userId).execute();
}

/** Reset e-mails per operator per hour, whoever asks (decision 0223). */
export const RESETS_PER_HOUR = 5;
export const PASSWORD_RESET_JOB = 'operators.password_reset';

/**
 * A password reset request: the same one deferred INSERT (a job) whether or not the address is an
 * operator's, so neither the answer nor its timing tells which (decision 0223). The job looks the
 * address up and sends the link.
 */
export async function requestPasswordReset(
  db: Kysely<DB>,
  now: Date,
  mode: 'test' | 'live',
  input: { email: string; tenant_id?: string | undefined },
): Promise<void> {
  await enqueueJob(db, now, {
    kind: PASSWORD_RESET_JOB,
    mode,
    maxAttempts: 3,
    payload: { email: input.email, ...(input.tenant_id ? { tenant_id: input.tenant_id } : {}) },
  });
}

/**
 * The job: when the address is an operator's (of a tenant of this deployment's mode), a single-use
 * link valid 1 hour, unless the operator already had RESETS_PER_HOUR links in the last hour. The
 * operator's row is locked while counting, so two jobs cannot both take the last one.
 */
export async function sendPasswordReset(
  db: Kysely<DB>,
  now: Date,
  mode: 'test' | 'live',
  input: { email: string; tenant_id?: string | undefined },
  publicUrl: string,
): Promise<void> {
  let query = db
    .selectFrom('users')
    .innerJoin('tenants', 'tenants.id', 'users.tenant_id')
    .selectAll('users')
    .where('users.email', '=', input.email)
    .where('tenants.mode', '=', mode);
  if (input.tenant_id) query = query.where('users.tenant_id', '=', input.tenant_id);
  const user = (
    await query
      .orderBy('users.last_sign_in_at', (ob) => ob.desc().nullsLast())
      .orderBy('users.created_at', 'desc')
      .limit(1)
      .execute()
  )[0];
  if (!user) return;
  await db.transaction().execute(async (tx) => {
    await tx.selectFrom('users').select('id').where('tenant_id', '=', user.tenant_id).where('id', '=', user.id).forUpdate().execute();
    const recent = await tx
      .selectFrom('user_password_resets')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('tenant_id', '=', user.tenant_id)
      .where('user_id', '=', user.id)
      .where('created_at', '>', new Date(now.getTime() - RESET_TTL_MS))
      .executeTakeFirstOrThrow();
    if (Number(recent.n) >= RESETS_PER_HOUR) return;
    const { token, hash } = newTenantToken(user.tenant_id);
    await tx
      .insertInto('user_password_resets')
      .values({
        tenant_id: user.tenant_id,
        id: newId(),
        user_id: user.id,
        token_hash: hash,
        expires_at: new Date(now.getTime() + RESET_TTL_MS),
        used_at: null,
        created_at: now,
      })
      .execute();
    const tenant = await getTenant({ tx, tenantId: user.tenant_id, now });
    const link = `${publicUrl.replace(/\/$/, '')}/dashboard/reset-password?token=${encodeURIComponent(token)}`;
    await enqueueMail(tx, now, {
      tenantId: user.tenant_id,
      to: user.email,
      subject: `Reset your Kosh password for ${tenant.name}`.replace(/[\r\n]/g, ' ').slice(0, 500),
      text: `Someone asked to reset the password of ${user.email} for ${tenant.name}.\n\nChoose a new password (link valid 1 hour, single use):\n${link}\n\nIf it was not you, ignore this e-mail; your password stays as it is.`,
    });
  });
}

/** Sets the new password and ends every session of the user. Expired, used or unknown → 410. */
export async function confirmPasswordReset(db: Kysely<DB>, now: Date, input: { token: string; password: string }, meta: RequestMeta): Promise<void> {
  const credential = parseTenantCredential(input.token);
  const expired = () => errors.gone('this password reset link has expired or was already used; ask for a new one', 'reset_token_expired');
  if (!credential) throw expired();
  const passwordHash = await hashPassword(input.password);
  await db.transaction().execute(async (tx) => {
    const reset = await tx
      .selectFrom('user_password_resets')
      .selectAll()
      .where('tenant_id', '=', credential.tenantId)
      .where('token_hash', '=', hashToken(credential.secret))
      .forUpdate()
      .executeTakeFirst();
    if (!reset || reset.used_at || reset.expires_at <= now) throw expired();
    await tx.updateTable('user_password_resets').set({ used_at: now }).where('tenant_id', '=', reset.tenant_id).where('id', '=', reset.id).execute();
    const user = await findUser(tx, reset.tenant_id, reset.user_id);
    if (!user) throw expired();
    assertAcceptablePassword(input.password, user);
    await tx
      .updateTable('users')
      .set({ password_hash: passwordHash, updated_at: now })
      .where('tenant_id', '=', user.tenant_id)
      .where('id', '=', user.id)
      .execute();
    await revokeUserSessions(tx, user.tenant_id, user.id, now);
    await appendAudit(tx, {
      tenantId: user.tenant_id,
      actor: { type: 'user', id: user.id, label: user.email, role: user.role, sessionId: '', csrfToken: '' },
      action: 'user.password_reset',
      objectType: 'user',
      objectId: user.id,
      changes: {},
      ip: meta.ip,
      requestId: meta.requestId,
      at: now,
    });
  });
}

export async function listUsers(ctx: ReadCtx, page: Page): Promise<{ users: User[]; total: number }> {
  const { rows, total } = await usersPage(ctx.tx, ctx.tenantId, page);
  return { users: rows.map(toUser), total };
}

export async function getUser(ctx: ReadCtx, id: string): Promise<User> {
  const row = await findUser(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('user');
  return toUser(row);
}

/** Locks the tenant's owners: two requests cannot each remove "the other" last owner. */
async function ownersLocked(ctx: Ctx): Promise<string[]> {
  const rows = await ctx.tx.selectFrom('users').select('id').where('tenant_id', '=', ctx.tenantId).where('role', '=', 'owner').forUpdate().execute();
  return rows.map((r) => r.id);
}

const lastOwner = () => errors.conflict('the last owner of a tenant cannot be demoted or removed; make another owner first', 'last_owner');

export async function updateUser(ctx: Ctx, actor: Actor, id: string, input: UpdateUserBody): Promise<User> {
  const owners = await ownersLocked(ctx);
  const row = await findUser(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('user');
  if (input.role !== undefined && input.role !== row.role) {
    assertMayGrant(actor, input.role);
    assertMayGrant(actor, row.role);
    if (row.role === 'owner' && owners.length <= 1) throw lastOwner();
  }
  const changes = { ...(input.role !== undefined ? { role: input.role } : {}), ...(input.name !== undefined ? { name: input.name } : {}) };
  if (Object.keys(changes).length === 0) return toUser(row);
  const updated = await ctx.tx
    .updateTable('users')
    .set({ ...changes, updated_at: ctx.now })
    .where('tenant_id', '=', ctx.tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  return toUser(updated);
}

export async function deleteUser(ctx: Ctx, actor: Actor, id: string): Promise<User> {
  const owners = await ownersLocked(ctx);
  const row = await findUser(ctx.tx, ctx.tenantId, id);
  if (!row) throw errors.notFound('user');
  assertMayGrant(actor, row.role);
  if (row.role === 'owner' && owners.length <= 1) throw lastOwner();
  await ctx.tx.deleteFrom('users').where('tenant_id', '=', ctx.tenantId).where('id', '=', id).execute();
  return toUser(row);
}
