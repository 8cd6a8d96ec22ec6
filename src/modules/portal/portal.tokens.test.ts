import { describe, expect, it } from 'vitest';
import { csrfTokenFor, formatCredential, hashSecret, newSecret, parseCookies, parseCredential, sameToken } from './portal.tokens.js';

const tenant = '0195f0a0-0000-7000-8000-000000000001';

describe('portal credentials', () => {
  it('round-trips a credential and stores only a hash', () => {
    const secret = newSecret();
    expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(parseCredential(formatCredential(tenant, secret))).toEqual({ tenantId: tenant, secret });
    expect(hashSecret(secret)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashSecret(secret)).not.toContain(secret);
  });

  it.each([
    ['no dot', `${tenant}`],
    ['not a uuid', `tenant.${'a'.repeat(43)}`],
    ['a short secret', `${tenant}.${'a'.repeat(42)}`],
    ['a secret with other characters', `${tenant}.${'a'.repeat(42)}=`],
    ['empty', ''],
    ['too long', `${tenant}.${'a'.repeat(300)}`],
  ])('refuses %s', (_label, value) => {
    expect(parseCredential(value)).toBeNull();
  });

  it('derives a stable CSRF token per session that differs between sessions', () => {
    const a = newSecret();
    const b = newSecret();
    expect(csrfTokenFor(a)).toBe(csrfTokenFor(a));
    expect(csrfTokenFor(a)).not.toBe(csrfTokenFor(b));
    expect(sameToken(csrfTokenFor(a), csrfTokenFor(a))).toBe(true);
    expect(sameToken(csrfTokenFor(a), csrfTokenFor(b))).toBe(false);
    expect(sameToken(csrfTokenFor(a), undefined)).toBe(false);
    expect(sameToken(csrfTokenFor(a), '')).toBe(false);
  });

  it('parses a Cookie header', () => {
    const cookies = parseCookies('a=1; portal_session=x.y ; b = 2; a=3; junk');
    expect(cookies.get('a')).toBe('1');
    expect(cookies.get('portal_session')).toBe('x.y');
    expect(cookies.get('b')).toBe('2');
    expect(parseCookies(undefined).size).toBe(0);
  });
});
