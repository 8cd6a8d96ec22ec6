import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLoggedKosh } from '../support/log-capture.js';

/**
 * What a Kosh writes to its log and answers outside its routes. Targets the router itself refuses (bad percent-encoding, a path parameter over 100 characters)
 * are answered like every other mistake: the envelope with the request id, the security headers,
 * a log line, and — under /v1 — only after the API key.
 */
let t: Awaited<ReturnType<typeof startLoggedKosh>>; // test mode, open registration (the default)
let key: string;
beforeAll(async () => {
  t = await startLoggedKosh();
  const registered = await t.api('POST', '/auth/register', { name: 'Envelope Co', email: 'owner@envelope.test' });
  key = registered.body.data.api_key.key;
});
afterAll(async () => {
  await t?.close();
});

describe('targets the router refuses', () => {
  const cases = [
    ['a path parameter over 100 characters', `/v1/customers/${'a'.repeat(120)}`, 'path_parameter_too_long'],
    ['malformed percent-encoding', '/v1/customers/%zz', 'malformed_url'],
  ] as const;

  it.each(cases)('answers %s with 400 in the envelope, its request id, the security headers and a log line', async (_what, url, reason) => {
    const res = await t.api('GET', url, undefined, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', reason });
    expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(t.lines.some((line) => line.reqId === res.body.error.request_id && line.msg === 'request refused')).toBe(true);
  });

  it.each(cases)('asks for the API key first on %s under /v1', async (_what, url) => {
    const res = await t.api('GET', url);
    expect(res.status).toBe(401);
    expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'invalid_api_key' });
    expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('answers a malformed target outside /v1 with the envelope too', async () => {
    const res = await t.api('GET', '/healthz/%zz');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', reason: 'malformed_url' });
    expect(res.headers['x-frame-options']).toBeDefined();
  });

  it('still routes well-formed targets as before', async () => {
    const res = await t.api('GET', '/v1/customers/%61', undefined, { authorization: `Bearer ${key}` });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'params.id', message: 'must be a UUID' }]);
    expect((await t.api('GET', '/healthz')).status).toBe(200);
  });
});

describe('start-up', () => {
  it('warns that a test deployment with open registration reaches any address; a closed one does not', async () => {
    const warnings = (lines: Record<string, unknown>[]) => lines.filter((l) => l.level === 40 && String(l.msg).includes('KOSH_REGISTRATION=open'));
    expect(warnings(t.lines)).toHaveLength(1);
    expect(String(warnings(t.lines)[0]!.msg)).toContain('any address');
    const closed = await startLoggedKosh({ KOSH_REGISTRATION: 'admin', KOSH_ADMIN_TOKEN: 'a'.repeat(32) });
    await closed.close();
    expect(warnings(closed.lines)).toHaveLength(0);
  });
});
