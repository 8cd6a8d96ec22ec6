import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';

/**
 * Secrets of third parties (gateway keys, OAuth tokens, IRP passwords) are stored sealed with
 * AES-256-GCM under KOSH_SECRET_KEY (DESIGN, round-2 preamble) and are never returned by the API.
 *
 * A sealed value is `v1.<iv>.<tag>.<ciphertext>` (base64url parts). The caller passes an
 * `aad` (associated data) that names what the secret belongs to — `tenant:<id>:gateway:<id>` —
 * so a ciphertext copied onto another row or tenant does not open.
 */
export type SecretBox = {
  seal(plaintext: string, aad: string): string;
  open(sealed: string, aad: string): string;
  /** Seals a JSON value (credentials objects). */
  sealJson(value: unknown, aad: string): string;
  openJson<T>(sealed: string, aad: string): T;
};

const KEY_BYTES = 32;
const IV_BYTES = 12;

export function createSecretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`KOSH_SECRET_KEY must be ${KEY_BYTES} bytes (base64), got ${key.length}`);
  const box: SecretBox = {
    seal(plaintext, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(aad, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ciphertext.toString('base64url')].join('.');
    },
    open(sealed, aad) {
      const [version, iv, tag, ciphertext] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || ciphertext === undefined) throw new Error('not a sealed secret');
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
    },
    sealJson: (value, aad) => box.seal(JSON.stringify(value), aad),
    openJson: <T>(sealed: string, aad: string) => JSON.parse(box.open(sealed, aad)) as T,
  };
  return box;
}

/**
 * The key, from KOSH_SECRET_KEY; in test mode without it, a key generated once into the data
 * directory (`secret.key`, mode 0600) so a restarted server still opens what it sealed; an
 * in-memory database gets a key for the life of the process. Live mode refuses to start without it.
 */
export function resolveSecretKey(config: Pick<Config, 'mode' | 'dataDir' | 'databaseUrl' | 'secretKey'>): Buffer {
  if (config.secretKey) {
    const key = Buffer.from(config.secretKey, 'base64');
    if (key.length !== KEY_BYTES) throw new Error(`KOSH_SECRET_KEY must be ${KEY_BYTES} bytes encoded in base64 (got ${key.length} bytes)`);
    return key;
  }
  if (config.mode === 'live') throw new Error('KOSH_SECRET_KEY is required in live mode (32 random bytes, base64: `openssl rand -base64 32`)');
  if (config.dataDir.startsWith('memory://')) return randomBytes(KEY_BYTES);
  const path = join(config.dataDir, 'secret.key');
  try {
    return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(config.dataDir, { recursive: true });
  try {
    writeFileSync(path, randomBytes(KEY_BYTES).toString('base64'), { flag: 'wx', mode: 0o600 });
  } catch (error) {
    // Another process wrote it first: use theirs.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
}
