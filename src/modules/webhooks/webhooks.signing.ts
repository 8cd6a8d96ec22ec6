import { createHmac, randomBytes } from 'node:crypto';
import type { SecretBox } from '../../platform/secrets/secrets.js';

/**
 * Standard Webhooks signing (https://www.standardwebhooks.com): the signed content is
 * `${msgId}.${timestampSeconds}.${body}`, the key is the base64-decoded part of the secret after
 * `whsec_`, and the header value is `v1,<base64 HMAC-SHA256>` — several of them, space-separated,
 * while an old secret is still honoured after a rotation.
 */
export const SECRET_PREFIX = 'whsec_';

/** 32 random bytes: above the 24-byte minimum the spec recommends. */
export function newSigningSecret(): string {
  return `${SECRET_PREFIX}${randomBytes(32).toString('base64')}`;
}

export function sign(secret: string, msgId: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${msgId}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The `webhook-signature` (and `X-Service-Signature`) value: one signature per live secret. */
export function signatureHeader(secrets: string[], msgId: string, timestampSeconds: number, body: string): string {
  return secrets.map((secret) => sign(secret, msgId, timestampSeconds, body)).join(' ');
}

/**
 * Signing secrets are stored sealed (DESIGN §21): they must stay readable to sign, so they are
 * sealed under KOSH_SECRET_KEY, bound to their endpoint. A secret stored before sealing (plain
 * `whsec_…`) is still read as it is.
 */
const secretAad = (tenantId: string, endpointId: string) => `tenant:${tenantId}:webhook_endpoint:${endpointId}`;

export function sealSigningSecret(box: SecretBox, tenantId: string, endpointId: string, secret: string): string {
  return box.seal(secret, secretAad(tenantId, endpointId));
}

export function openSigningSecret(box: SecretBox, tenantId: string, endpointId: string, stored: string): string {
  return stored.startsWith(SECRET_PREFIX) ? stored : box.open(stored, secretAad(tenantId, endpointId));
}
