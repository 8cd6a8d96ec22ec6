import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { gstinCheckCharacter } from '../tax/index.js';
import { customerCountry, customerStateCode, type BillingAddress } from './index.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant();
});
afterAll(() => t.close());

/** A GSTIN with a correct check character, for state `state` and a made-up PAN. */
function gstin(state: string, pan = 'AABCU9603R'): string {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
}
const karnatakaGstin = gstin('29');
const wrongCheckDigit = karnatakaGstin.slice(0, 14) + (karnatakaGstin[14] === 'A' ? 'B' : 'A');

async function eventsFor(tenantId: string, objectId: string) {
  return t.kosh.deps.db
    .selectFrom('events')
    .select(['type', 'payload'])
    .where('tenant_id', '=', tenantId)
    .where('object_id', '=', objectId)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

const fullAddress = { line1: '12 MG Road', line2: 'Floor 3', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' };

describe('customers', () => {
  describe('create', () => {
    it('creates a customer from an e-mail alone, with null optional fields and an empty metadata', async () => {
      const res = await acme.http.POST('/v1/customers', { body: { email: 'solo@example.com' } });
      expect(res.status).toBe(201);
      expect(res.body.data).toEqual({
        id: expect.any(String),
        tenant_id: acme.tenantId,
        email: 'solo@example.com',
        name: null,
        external_id: null,
        phone: null,
        gstin: null,
        billing_address: null,
        sez: false,
        metadata: {},
        test_clock_id: null,
        parent_customer_id: null,
        bill_to: 'self',
        created_at: '2026-04-01T00:00:00.000Z',
        updated_at: '2026-04-01T00:00:00.000Z',
      });
    });

    it('accepts every field, upper-cases the GSTIN and records customer.created with the API object', async () => {
      const res = await acme.http.POST('/v1/customers', {
        body: {
          email: 'Billing@Bengaluru.example',
          name: 'Bengaluru Bytes Pvt Ltd',
          external_id: 'cus_legacy_1',
          phone: '+91 80 4000 1234',
          gstin: karnatakaGstin.toLowerCase(),
          billing_address: fullAddress,
          metadata: { segment: 'smb', seats: 12 },
        },
      });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        email: 'Billing@Bengaluru.example',
        name: 'Bengaluru Bytes Pvt Ltd',
        external_id: 'cus_legacy_1',
        phone: '+91 80 4000 1234',
        gstin: karnatakaGstin,
        billing_address: fullAddress,
        metadata: { segment: 'smb', seats: 12 },
      });
      const events = await eventsFor(acme.tenantId, res.body.data.id);
      expect(events.map((e) => e.type)).toEqual(['customer.created']);
      expect((events[0]!.payload as { data: { object: unknown } }).data.object).toEqual(res.body.data);
    });

    it('defaults the billing country to IN and fills absent address parts with null', async () => {
      const res = await acme.http.POST('/v1/customers', { body: { email: 'addr@example.com', billing_address: { city: 'Pune', state_code: '27' } } });
      expect(res.status).toBe(201);
      expect(res.body.data.billing_address).toEqual({ line1: null, line2: null, city: 'Pune', state_code: '27', postal_code: null, country: 'IN' });
    });

    it('takes free-text state codes for customers outside India', async () => {
      const res = await acme.http.POST('/v1/customers', { body: { email: 'us@example.com', billing_address: { state_code: 'CA', country: 'us' } } });
      expect(res.status).toBe(201);
      expect(res.body.data.billing_address).toMatchObject({ state_code: 'CA', country: 'US' });
    });

    it('refuses an e-mail already used in the tenant, whatever its case, with 409', async () => {
      for (const email of ['solo@example.com', 'SOLO@Example.COM']) {
        const res = await acme.http.POST('/v1/customers', { body: { email } });
        expect(res.status).toBe(409);
        expect(res.error!).toMatchObject({ code: 'conflict', reason: 'customer_email_taken' });
      }
    });

    it('lets only one of several simultaneous creations with one e-mail succeed; the rest get 409', async () => {
      const results = await Promise.all(
        ['race@example.com', 'RACE@example.com', 'Race@Example.com', 'race@EXAMPLE.com'].map((email) => acme.http.POST('/v1/customers', { body: { email } })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
      for (const r of results.filter((x) => x.status === 409)) expect(r.error!.code).toBe('conflict');
      expect((await acme.http.GET('/v1/customers', { query: { email: 'race@example.com' } })).body.total_count).toBe(1);
    });

    it('lets another tenant use the same e-mail', async () => {
      const other = await t.registerTenant();
      expect((await other.http.POST('/v1/customers', { body: { email: 'solo@example.com' } })).status).toBe(201);
    });

    it.each([
      ['no e-mail', { name: 'x' }, 'email'],
      ['a null e-mail', { email: null }, 'email'],
      ['a malformed e-mail', { email: 'not-an-email' }, 'email'],
      ['an over-long e-mail', { email: `${'a'.repeat(250)}@x.io` }, 'email'],
      ['a non-string name', { email: 'v1@example.com', name: 42 }, 'name'],
      ['an over-long name', { email: 'v2@example.com', name: 'x'.repeat(201) }, 'name'],
      ['an over-long external_id', { email: 'v3@example.com', external_id: 'x'.repeat(256) }, 'external_id'],
      ['a phone with letters', { email: 'v4@example.com', phone: 'call me' }, 'phone'],
      ['a GSTIN with a wrong check character', { email: 'v5@example.com', gstin: wrongCheckDigit }, 'gstin'],
      ['a GSTIN with an unknown state', { email: 'v6@example.com', gstin: gstin('55') }, 'gstin'],
      ['a GSTIN of the wrong shape', { email: 'v7@example.com', gstin: '29ABCDE1234F1Z' }, 'gstin'],
      ['a three-letter country', { email: 'v8@example.com', billing_address: { country: 'IND' } }, 'billing_address.country'],
      ['an Indian state code that is not a GST code', { email: 'v9@example.com', billing_address: { state_code: 'KA' } }, 'billing_address.state_code'],
      [
        'a foreign state code over 10 characters',
        { email: 'va@example.com', billing_address: { state_code: 'California!', country: 'US' } },
        'billing_address.state_code',
      ],
      ['a GSTIN for a customer billed outside India', { email: 'vc@example.com', gstin: karnatakaGstin, billing_address: { country: 'US' } }, 'gstin'],
      ['nested metadata', { email: 'vd@example.com', metadata: { deep: { no: 1 } } }, 'metadata.deep'],
      ['an address that is not an object', { email: 've@example.com', billing_address: 'Bengaluru' }, 'billing_address'],
    ])('refuses %s with 400 validation_failed naming the field', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/customers', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('refuses a body that is not JSON with 400, not 500', async () => {
      const res = await t.call({
        method: 'POST',
        url: '/v1/customers',
        headers: { authorization: `Bearer ${acme.key}`, 'content-type': 'application/json' },
        payload: '{"email":',
      });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });
  });

  describe('list', () => {
    let shop: Tenant;
    const emails = ['asha@shop.test', 'bala@shop.test', 'chitra@other.test'];

    beforeAll(async () => {
      shop = await t.registerTenant();
      for (const [i, email] of emails.entries()) {
        t.clock.advanceSeconds(1);
        const res = await shop.http.POST('/v1/customers', { body: { email, name: ['Asha Rao', 'Bala Shop 100%', 'Chitra'][i] } });
        expect(res.status).toBe(201);
      }
    });

    it('lists the tenant’s customers newest first with totals', async () => {
      const res = await shop.http.GET('/v1/customers');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', has_more: false, total_count: 3 });
      expect(res.body.data.map((c: { email: string }) => c.email)).toEqual([...emails].reverse());
    });

    it('filters by q over name and e-mail, case-insensitively, treating % and _ literally', async () => {
      const byEmail = await shop.http.GET('/v1/customers', { query: { q: 'SHOP.TEST' } });
      expect(byEmail.body.data.map((c: { email: string }) => c.email)).toEqual(['bala@shop.test', 'asha@shop.test']);
      const byName = await shop.http.GET('/v1/customers', { query: { q: 'chitra' } });
      expect(byName.body.data.map((c: { email: string }) => c.email)).toEqual(['chitra@other.test']);
      const literal = await shop.api('GET', '/v1/customers?q=100%25');
      expect(literal.body.data.map((c: { email: string }) => c.email)).toEqual(['bala@shop.test']);
      const wildcard = await shop.http.GET('/v1/customers', { query: { q: '_' } });
      expect(wildcard.body.total_count).toBe(0);
    });

    it('filters by exact e-mail, case-insensitively, and never by a part of it', async () => {
      const exact = await shop.http.GET('/v1/customers', { query: { email: 'ASHA@Shop.Test' } });
      expect(exact.body).toMatchObject({ total_count: 1 });
      expect(exact.body.data[0]!.email).toBe('asha@shop.test');
      const partial = await shop.http.GET('/v1/customers', { query: { email: 'asha' } });
      expect(partial.body).toMatchObject({ total_count: 0, data: [] });
    });

    it('pages with limit and page', async () => {
      const first = await shop.http.GET('/v1/customers', { query: { limit: 2, page: 1 } });
      expect(first.body).toMatchObject({ has_more: true, total_count: 3 });
      expect(first.body.data.map((c: { email: string }) => c.email)).toEqual(['chitra@other.test', 'bala@shop.test']);
      const second = await shop.http.GET('/v1/customers', { query: { limit: 2, page: 2 } });
      expect(second.body).toMatchObject({ has_more: false, total_count: 3 });
      expect(second.body.data.map((c: { email: string }) => c.email)).toEqual(['asha@shop.test']);
    });

    it('never shows another tenant’s customers', async () => {
      const res = await acme.http.GET('/v1/customers', { query: { q: 'shop.test' } });
      expect(res.body).toMatchObject({ total_count: 0, data: [] });
    });

    it.each(['limit=0', 'limit=abc', 'page=0', `q=${'x'.repeat(201)}`])('refuses %s with 400', async (q) => {
      const res = await shop.api('GET', `/v1/customers?${q}`);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });
  });

  describe('get', () => {
    it('answers the customer by id', async () => {
      const created = await acme.http.POST('/v1/customers', { body: { email: 'get@example.com', name: 'Get Me' } });
      const res = await acme.http.GET('/v1/customers/{id}', { path: { id: created.body.data.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(created.body.data);
    });

    it('answers 404 for a missing id and 400 for a malformed one', async () => {
      const missing = await acme.http.GET('/v1/customers/{id}', { path: { id: '00000000-0000-7000-8000-000000000000' } });
      expect(missing.status).toBe(404);
      expect(missing.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'customer not found' } });
      const malformed = await acme.http.GET('/v1/customers/{id}', { path: { id: 'not-a-uuid' } });
      expect(malformed.status).toBe(400);
      expect(malformed.error!.details![0]!.field).toBe('params.id');
    });

    it("hides another tenant's customer exactly like a missing one", async () => {
      const other = await t.registerTenant();
      const created = await other.http.POST('/v1/customers', { body: { email: 'hidden@example.com' } });
      const res = await acme.http.GET('/v1/customers/{id}', { path: { id: created.body.data.id } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'customer not found' } });
    });

    it('answers 401 without an API key', async () => {
      const res = await t.api('GET', '/v1/customers');
      expect(res.status).toBe(401);
      expect(res.body.error.reason).toBe('invalid_api_key');
    });
  });

  describe('update (PUT)', () => {
    let id: string;
    const original = {
      email: 'put@example.com',
      name: 'Put Original',
      external_id: 'ext-1',
      phone: '+91 98450 00000',
      gstin: karnatakaGstin,
      billing_address: fullAddress,
      metadata: { plan: 'gold' },
    };

    beforeAll(async () => {
      const res = await acme.http.POST('/v1/customers', { body: original });
      expect(res.status).toBe(201);
      id = res.body.data.id;
    });

    it('changes only the fields given, moves updated_at and records customer.updated', async () => {
      t.clock.advanceSeconds(60);
      const res = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: { name: 'Put Renamed' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ ...original, name: 'Put Renamed' });
      expect(res.body.data.updated_at).toBe(t.clock.now().toISOString());
      expect(res.body.data.updated_at).not.toBe(res.body.data.created_at);
      const events = await eventsFor(acme.tenantId, id);
      expect(events.map((e) => e.type)).toEqual(['customer.created', 'customer.updated']);
      expect((events[1]!.payload as { data: { object: unknown } }).data.object).toEqual(res.body.data);
      expect((await acme.http.GET('/v1/customers/{id}', { path: { id } })).body.data).toEqual(res.body.data);
    });

    it('answers an empty body with the unchanged customer and records nothing', async () => {
      const before = (await acme.http.GET('/v1/customers/{id}', { path: { id } })).body.data;
      const res = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: {} });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(before);
      expect((await eventsFor(acme.tenantId, id)).map((e) => e.type)).toEqual(['customer.created', 'customer.updated']);
    });

    it('keeps the billing address when the GSTIN moves to another state (place of supply follows the GSTIN)', async () => {
      const res = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: { gstin: gstin('27') } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.gstin).toBe(gstin('27'));
    });

    it("accepts a billing state other than the GSTIN's (a branch address)", async () => {
      const res = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: { billing_address: { ...fullAddress, state_code: '33' } } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.billing_address!.state_code).toBe('33');
    });

    it('moves GSTIN and address to another state together', async () => {
      const res = await acme.http.PUT('/v1/customers/{id}', {
        path: { id },
        body: { gstin: gstin('27'), billing_address: { city: 'Mumbai', state_code: '27' } },
      });
      expect(res.status).toBe(200);
      expect(res.body.data.gstin).toBe(gstin('27'));
      // The address is replaced whole, not merged with the old one.
      expect(res.body.data.billing_address).toEqual({ line1: null, line2: null, city: 'Mumbai', state_code: '27', postal_code: null, country: 'IN' });
    });

    it('clears optional fields with null, metadata to an empty object', async () => {
      const res = await acme.http.PUT('/v1/customers/{id}', {
        path: { id },
        body: {
          name: null,
          external_id: null,
          phone: null,
          gstin: null,
          billing_address: null,
          metadata: null,
        },
      });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        email: original.email,
        name: null,
        external_id: null,
        phone: null,
        gstin: null,
        billing_address: null,
        metadata: {},
      });
    });

    it('changes the e-mail, and lets a customer change the case of its own e-mail', async () => {
      const renamed = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: { email: 'put-new@example.com' } });
      expect(renamed.status).toBe(200);
      const recased = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: { email: 'PUT-NEW@example.com' } });
      expect(recased.status).toBe(200);
      expect(recased.body.data.email).toBe('PUT-NEW@example.com');
      // The old address is free again.
      expect((await acme.http.POST('/v1/customers', { body: { email: 'put@example.com' } })).status).toBe(201);
    });

    it("refuses another customer's e-mail, in any case, with 409", async () => {
      const res = await acme.http.PUT('/v1/customers/{id}', { path: { id }, body: { email: 'SOLO@example.com' } });
      expect(res.status).toBe(409);
      expect(res.error!).toMatchObject({ code: 'conflict', reason: 'customer_email_taken' });
    });

    it.each([
      ['a null e-mail', { email: null }, 'email'],
      ['a malformed e-mail', { email: 'nope' }, 'email'],
      ['a bad GSTIN', { gstin: wrongCheckDigit }, 'gstin'],
      ['a bad Indian state code', { billing_address: { state_code: '00' } }, 'billing_address.state_code'],
      ['a bad phone', { phone: '12' }, 'phone'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await acme.api('PUT', `/v1/customers/${id}`, body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 404 for a missing id and for another tenant's customer, 400 for a malformed id", async () => {
      const other = await t.registerTenant();
      const theirs = await other.http.POST('/v1/customers', { body: { email: 'theirs@example.com' } });
      for (const target of ['00000000-0000-7000-8000-000000000000', theirs.body.data.id]) {
        const res = await acme.http.PUT('/v1/customers/{id}', { path: { id: target }, body: { name: 'hijack' } });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'customer not found' } });
      }
      expect((await other.http.GET('/v1/customers/{id}', { path: { id: theirs.body.data.id } })).body.data.name).toBeNull();
      expect((await acme.http.PUT('/v1/customers/{id}', { path: { id: '123' }, body: { name: 'x' } })).status).toBe(400);
    });
  });
});

describe('customer tax helpers', () => {
  const address = (country: string, state_code: string | null): BillingAddress => ({
    line1: null,
    line2: null,
    city: null,
    state_code,
    postal_code: null,
    country,
  });

  it.each([
    ['GSTIN only', { gstin: karnatakaGstin, billing_address: null }, '29', 'IN'],
    ['GSTIN wins over the address state', { gstin: karnatakaGstin, billing_address: address('IN', null) }, '29', 'IN'],
    ['Indian address', { gstin: null, billing_address: address('IN', '33') }, '33', 'IN'],
    ['Indian address without a state', { gstin: null, billing_address: address('IN', null) }, null, 'IN'],
    ['foreign address', { gstin: null, billing_address: address('US', 'CA') }, null, 'US'],
    ['nothing known', { gstin: null, billing_address: null }, null, 'IN'],
  ])('%s → state %s, country %s', (_label, customer, state, country) => {
    expect(customerStateCode(customer)).toBe(state);
    expect(customerCountry(customer)).toBe(country);
  });
});
