import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';
import { ROLES } from '../../platform/auth/actor.js';
import { MIN_PASSWORD_LENGTH } from './password-policy.js';

export const roleField = z.enum(ROLES as unknown as ['viewer', 'support', 'finance', 'admin', 'owner']);
const email = z
  .email()
  .max(254)
  .transform((v) => v.toLowerCase());
/** At least 12 characters (NIST SP 800-63B: length, not composition rules), at most 200; the rest of the policy is password-policy.ts. */
export const passwordField = z.string().min(MIN_PASSWORD_LENGTH, `must be at least ${MIN_PASSWORD_LENGTH} characters`).max(200);

export const userSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    name: z.string(),
    role: roleField,
    totp_enabled: z.boolean(),
    last_sign_in_at: fields.timestamp().nullable(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'User' });
export type User = z.infer<typeof userSchema>;

export const sessionTenantSchema = z.object({ id: z.uuid(), name: z.string() });

export const signedInSchema = z.object({ user: userSchema, tenant: sessionTenantSchema, csrf_token: z.string() }).meta({ id: 'SignedIn' });
export type SignedIn = z.infer<typeof signedInSchema>;

export const invitationSchema = z
  .object({
    id: z.uuid(),
    email: z.string(),
    role: roleField,
    status: z.enum(['pending', 'accepted', 'revoked', 'expired']),
    expires_at: fields.timestamp(),
    created_at: fields.timestamp(),
    accept_url: z
      .string()
      .optional()
      .describe('only in the create answer, in test mode with no SMTP server: the invitation link, for the inviter to hand over (no e-mail can go out)'),
  })
  .meta({ id: 'Invitation' });
export type Invitation = z.infer<typeof invitationSchema>;

export const signInBody = z.object({
  email,
  password: z.string().max(200),
  totp_code: z.string().max(20).optional(),
  recovery_code: z.string().max(40).optional(),
  tenant_id: z.uuid().optional().describe('The tenant to sign in to, when the e-mail is an operator of several; default: the most recently used'),
});
export type SignInBody = z.infer<typeof signInBody>;

export const inviteBody = z.object({ email, role: roleField });
export const acceptInvitationBody = z.object({ token: z.string().min(1).max(300), name: fields.requiredText(200), password: passwordField });
export const ownerBody = z.object({ email, password: passwordField, name: fields.requiredText(200) });
export type OwnerInput = z.infer<typeof ownerBody>;
export const totpSetupSchema = z.object({ secret: z.string(), otpauth_url: z.string(), qr_svg: z.string() });
export const totpEnableBody = z.object({ code: z.string().min(1).max(20) });
export const recoveryCodesSchema = z.object({ recovery_codes: z.array(z.string()) });
export const totpDisableBody = z.object({ password: z.string().max(200) });
export const passwordResetBody = z.object({ email, tenant_id: z.uuid().optional() });
export const passwordResetConfirmBody = z.object({ token: z.string().min(1).max(300), password: passwordField });
export const updateUserBody = z.object({ role: roleField.optional(), name: fields.requiredText(200).optional() });
export type UpdateUserBody = z.infer<typeof updateUserBody>;

export const auditEntrySchema = z
  .object({
    id: z.uuid(),
    actor: z.object({ type: z.enum(['api_key', 'user', 'system', 'customer']), id: z.string().nullable(), label: z.string().nullable() }),
    action: z.string(),
    object_type: z.string().nullable(),
    object_id: z.string().nullable(),
    changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })),
    ip: z.string().nullable(),
    request_id: z.string().nullable(),
    created_at: fields.timestamp(),
  })
  .meta({ id: 'AuditEntry' });

export const auditQuery = z.object({
  actor_id: z.string().max(100).optional(),
  object_type: z.string().max(100).optional(),
  object_id: z.string().max(100).optional(),
  action: z.string().max(200).optional(),
  from: fields.instant().optional(),
  to: fields.instant().optional(),
});
