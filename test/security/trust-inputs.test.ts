import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Small refusals of round 3 (DESIGN §21): bodies nested too deep, names that would break every
 * e-mail header they reach.
 */
let t: TestKosh;
let acme: Tenant;
beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
});
afterAll(() => t.close());

/** `{"name":"x", "extra": [[[…]]]}` nested `levels` deep, as raw JSON text. */
function nestedBody(levels: number): string {
  return `{"name":"Deep","email":"deep@example.in","extra":${'['.repeat(levels)}${']'.repeat(levels)}}`;
}

describe('request bodies', () => {
  it.each([
    ['POST', '/v1/customers'],
    ['POST', '/v1/coupons'],
  ] as const)('answers JSON nested 5 000 levels deep on %s %s with 400 json_too_deep', async (method, url) => {
    const res = await t.call({
      method,
      url,
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json', 'idempotency-key': `deep-${url}` },
      payload: nestedBody(5_000),
    });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', reason: 'json_too_deep' });
  });

  it('still takes a body of ordinary depth', async () => {
    const res = await t.call({
      method: 'POST',
      url: '/v1/customers',
      headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
      payload: nestedBody(20),
    });
    expect(res.status, res.text).toBe(201);
  });
});

describe('names that reach e-mail headers', () => {
  const broken = ['Acme\r\nBcc: victim@example.in', 'Acme\nLtd', 'Acme\tLtd', 'Acme\u0085Ltd', 'Acme\u2028Ltd'];

  it.each(broken)('refuses a tenant name with control characters at registration (%j)', async (name) => {
    const res = await t.api('POST', '/auth/register', { name, email: 'crlf@tenant.test' });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.details).toEqual([{ field: 'name', message: 'must be one line without control characters' }]);
  });

  it.each(broken)('refuses an entity name or legal name with control characters on create and update (%j)', async (name) => {
    const created = await acme.api('POST', '/v1/entities', { name, invoice_prefix: 'CR-' });
    expect(created.status, created.text).toBe(400);
    const entities = await acme.api('GET', '/v1/entities');
    const id = entities.body.data[0].id;
    for (const field of ['name', 'legal_name']) {
      const updated = await acme.api('PATCH', `/v1/entities/${id}`, { [field]: name });
      expect(updated.status, updated.text).toBe(400);
      expect(updated.body.error.details[0].field).toBe(field);
    }
  });

  it('still takes names in any script, with punctuation', async () => {
    const res = await t.api('POST', '/auth/register', { name: 'कोष सॉफ़्टवेयर Pvt. Ltd. (Bengaluru) — “Acme”', email: 'unicode@tenant.test' });
    expect(res.status, res.text).toBe(201);
  });
});
