import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createSecretBox, resolveSecretKey } from './secrets.js';

describe('secrets', () => {
  const box = createSecretBox(randomBytes(32));

  describe('seal and open', () => {
    it('opens what it sealed, and never stores the plaintext', () => {
      const sealed = box.seal('rzp_test_key_secret', 'tenant:a:gateway:1');
      expect(sealed).toMatch(/^v1\./);
      expect(sealed).not.toContain('rzp_test_key_secret');
      expect(box.open(sealed, 'tenant:a:gateway:1')).toBe('rzp_test_key_secret');
    });

    it('refuses a ciphertext moved to another owner (associated data differs)', () => {
      const sealed = box.seal('secret', 'tenant:a:gateway:1');
      expect(() => box.open(sealed, 'tenant:b:gateway:1')).toThrow();
    });

    it('refuses a tampered ciphertext', () => {
      const sealed = box.seal('secret', 'x');
      const parts = sealed.split('.');
      const bytes = Buffer.from(parts[3]!, 'base64url');
      bytes[0] = bytes[0]! ^ 1;
      parts[3] = bytes.toString('base64url');
      expect(() => box.open(parts.join('.'), 'x')).toThrow();
    });

    it('refuses another key', () => {
      const other = createSecretBox(randomBytes(32));
      expect(() => other.open(box.seal('secret', 'x'), 'x')).toThrow();
    });

    it('round-trips JSON credentials', () => {
      expect(box.openJson(box.sealJson({ key_id: 'k', key_secret: 's' }, 'x'), 'x')).toEqual({ key_id: 'k', key_secret: 's' });
    });
  });

  describe('resolveSecretKey', () => {
    it('takes KOSH_SECRET_KEY when given, and refuses a key of the wrong size', () => {
      const key = randomBytes(32);
      expect(resolveSecretKey({ mode: 'live', dataDir: './x', databaseUrl: undefined, secretKey: key.toString('base64') })).toEqual(key);
      expect(() => resolveSecretKey({ mode: 'test', dataDir: './x', databaseUrl: undefined, secretKey: randomBytes(16).toString('base64') })).toThrow(
        /32 bytes/,
      );
    });

    it('refuses to start in live mode without a key', () => {
      expect(() => resolveSecretKey({ mode: 'live', dataDir: './x', databaseUrl: undefined, secretKey: undefined })).toThrow(/required in live mode/);
    });

    it('generates a key once into the data directory in test mode and reuses it', () => {
      const dir = mkdtempSync(join(tmpdir(), 'kosh-secret-'));
      const first = resolveSecretKey({ mode: 'test', dataDir: dir, databaseUrl: undefined, secretKey: undefined });
      const second = resolveSecretKey({ mode: 'test', dataDir: dir, databaseUrl: undefined, secretKey: undefined });
      expect(first).toHaveLength(32);
      expect(second).toEqual(first);
      expect(Buffer.from(readFileSync(join(dir, 'secret.key'), 'utf8'), 'base64')).toEqual(first);
      expect(statSync(join(dir, 'secret.key')).mode & 0o777).toBe(0o600);
    });
  });
});
