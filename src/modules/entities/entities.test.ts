import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { onPostgresServer } from '../../../test/support/database.js';
import { gstinCheckCharacter } from '../tax/index.js';

let t: TestKosh;
let acme: Tenant;

beforeAll(async () => {
  t = await startTestKosh();
  acme = await t.registerTenant({ state_code: '29' });
});
afterAll(() => t.close());

const gstin = (state: string, pan = 'AAECK4321L') => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};

const ledgerIdsOf = (res: { body: { data: { tb_ledger_id: number }[] } }) => res.body.data.map((e) => e.tb_ledger_id);

describe('entities', () => {
  describe('create', () => {
    it('answers 201 with the next ledger id, 2 then 3, never primary', async () => {
      const mumbai = await acme.http.POST('/v1/entities', { body: { name: 'Acme Mumbai', invoice_prefix: 'MUM-', gstin: gstin('27') } });
      expect(mumbai.status).toBe(201);
      expect(mumbai.body.data).toEqual({
        id: expect.any(String),
        tenant_id: acme.tenantId,
        name: 'Acme Mumbai',
        legal_name: 'Acme Mumbai',
        is_primary: false,
        tb_ledger_id: 2,
        invoice_prefix: 'MUM-',
        country_code: 'IN',
        // The state comes from the GSTIN when none is given.
        state_code: '27',
        gstin: gstin('27'),
        address: null,
        lut: true,
        export_refund_claim: false,
        lut_missing: 'charge_igst',
        time_zone: 'Asia/Kolkata',
        functional_currency: 'INR',
        aato_band: 'up_to_5_crore',
        number_series_reset: 'never',
        fx_revaluation: 'monthly',
        // RBI e-mandate framework: ₹15 000 without the customer's authentication for a standard merchant (decision 0520).
        emandate: { category: 'standard', afa_limit: null, afa_free_limit: 15_000_00, grievance_contact: null },
        einvoicing: { enabled: false, provider: null, credentials_set: false },
        created_at: '2026-04-01T00:00:00.000Z',
        updated_at: '2026-04-01T00:00:00.000Z',
      });

      const europe = await acme.http.POST('/v1/entities', {
        body: {
          name: 'Acme Europe',
          legal_name: 'Acme Europe GmbH',
          invoice_prefix: 'EU/26-',
          country_code: 'de',
          address: { line1: 'Hauptstr. 1', city: 'Berlin', postal_code: '10115', country: 'DE' },
        },
      });
      expect(europe.status).toBe(201);
      expect(europe.body.data).toMatchObject({
        legal_name: 'Acme Europe GmbH',
        tb_ledger_id: 3,
        country_code: 'DE',
        state_code: null,
        gstin: null,
        address: { line1: 'Hauptstr. 1', city: 'Berlin', postal_code: '10115', country: 'DE' },
      });
    });

    it.each([
      ['a lower-case prefix', { invoice_prefix: 'inv-' }, 'invoice_prefix'],
      // Rule 46(b): 16 characters with at least 2 sequence digits (decision 0364; 10 are fine: INV/25-26/).
      ['a prefix over 14 characters', { invoice_prefix: 'ABCDEFGHIJKLMNO' }, 'invoice_prefix'],
      ['a lowercase prefix (numbers are case-insensitive)', { invoice_prefix: 'inv-' }, 'invoice_prefix'],
      ['a prefix with an underscore', { invoice_prefix: 'INV_' }, 'invoice_prefix'],
      ['a prefix with a space', { invoice_prefix: 'IN V' }, 'invoice_prefix'],
      ['an empty prefix', { invoice_prefix: '' }, 'invoice_prefix'],
      ['no prefix', { invoice_prefix: undefined }, 'invoice_prefix'],
      ['no name', { name: undefined }, 'name'],
      ['a blank name', { name: '  ' }, 'name'],
      ['a three-letter country', { country_code: 'IND' }, 'country_code'],
      ['an unknown state code', { state_code: '00' }, 'state_code'],
      ['a GSTIN with a wrong check digit', { gstin: gstin('29').slice(0, 14) + (gstin('29')[14] === '0' ? '1' : '0') }, 'gstin'],
      ['a GSTIN from another state than state_code', { state_code: '29', gstin: gstin('27') }, 'state_code'],
      ['a GSTIN for an entity outside India', { country_code: 'SG', gstin: gstin('29') }, 'gstin'],
      ['a GST state code for an entity outside India', { country_code: 'SG', state_code: '29' }, 'state_code'],
    ])('refuses %s with 400 naming the field', async (_label, override, field) => {
      const res = await acme.api('POST', '/v1/entities', { name: 'Bad', invoice_prefix: 'BAD-', ...override });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("refuses a prefix another of the tenant's entities uses with 409, and does not spend a ledger id", async () => {
      const res = await acme.http.POST('/v1/entities', { body: { name: 'Copycat', invoice_prefix: 'INV-' } });
      expect(res.status).toBe(409);
      expect(res.error!).toMatchObject({ code: 'conflict', reason: 'invoice_prefix_taken' });
      const next = await acme.http.POST('/v1/entities', { body: { name: 'Acme Chennai', invoice_prefix: 'MAA-', state_code: '33' } });
      expect(next.body.data.tb_ledger_id).toBe(4);
    });

    it('lets another tenant use the same prefix; its ledger ids start again at 2', async () => {
      const other = await t.registerTenant();
      const res = await other.http.POST('/v1/entities', { body: { name: 'Other Mumbai', invoice_prefix: 'MUM-' } });
      expect(res.status).toBe(201);
      expect(res.body.data.tb_ledger_id).toBe(2);
    });
  });

  describe('list and get', () => {
    it('lists the entities in ledger order with totals and pages', async () => {
      const all = await acme.http.GET('/v1/entities');
      expect(all.status).toBe(200);
      expect(all.body).toMatchObject({ object: 'list', has_more: false, total_count: 4 });
      expect(ledgerIdsOf(all)).toEqual([1, 2, 3, 4]);
      expect(all.body.data.filter((e: { is_primary: boolean }) => e.is_primary)).toHaveLength(1);

      const page2 = await acme.http.GET('/v1/entities', { query: { limit: 3, page: 2 } });
      expect(page2.body).toMatchObject({ has_more: false, total_count: 4 });
      expect(ledgerIdsOf(page2)).toEqual([4]);
      expect((await acme.http.GET('/v1/entities', { query: { limit: 0 } })).status).toBe(400);
    });

    it('gets one entity by id', async () => {
      const [primary] = (await acme.http.GET('/v1/entities')).body.data;
      const res = await acme.http.GET('/v1/entities/{id}', { path: { id: primary!.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual(primary);
      expect(res.body.data).toMatchObject({ is_primary: true, tb_ledger_id: 1, state_code: '29' });
    });

    it("answers 404 for a missing or another tenant's entity, 400 for a malformed id", async () => {
      const other = await t.registerTenant();
      const theirs = (await other.http.GET('/v1/entities')).body.data[0];
      for (const id of [theirs!.id, '00000000-0000-7000-8000-000000000000']) {
        const res = await acme.http.GET('/v1/entities/{id}', { path: { id } });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'entity not found' } });
      }
      const bad = await acme.http.GET('/v1/entities/{id}', { path: { id: '42' } });
      expect(bad.status).toBe(400);
      expect(bad.error!.details![0]!.field).toBe('params.id');
    });
  });

  describe('update (PATCH)', () => {
    let mumbaiId: string;
    let europeId: string;
    beforeAll(async () => {
      const list = (await acme.http.GET('/v1/entities')).body.data;
      mumbaiId = list.find((e: { invoice_prefix: string }) => e.invoice_prefix === 'MUM-')!.id;
      europeId = list.find((e: { invoice_prefix: string }) => e.invoice_prefix === 'EU/26-')!.id;
    });

    it('changes only what is given and moves updated_at', async () => {
      t.clock.advanceSeconds(60);
      const res = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { legal_name: 'Acme Mumbai Pvt Ltd', invoice_prefix: 'BOM-' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        name: 'Acme Mumbai',
        legal_name: 'Acme Mumbai Pvt Ltd',
        invoice_prefix: 'BOM-',
        tb_ledger_id: 2,
        state_code: '27',
        gstin: gstin('27'),
        created_at: '2026-04-01T00:00:00.000Z',
        updated_at: t.clock.now().toISOString(),
      });
      expect((await acme.http.GET('/v1/entities/{id}', { path: { id: mumbaiId } })).body.data).toEqual(res.body.data);
      // Keeping its own prefix is not a conflict.
      expect((await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { invoice_prefix: 'BOM-' } })).status).toBe(200);
    });

    it('moves the state with a new GSTIN, and refuses a state that contradicts it', async () => {
      const moved = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { gstin: gstin('24') } });
      expect(moved.status).toBe(200);
      expect(moved.body.data).toMatchObject({ gstin: gstin('24'), state_code: '24' });
      const contradicted = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { state_code: '27' } });
      expect(contradicted.status).toBe(400);
      expect(contradicted.error!.details![0]!.field).toBe('state_code');
      const cleared = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { gstin: null, state_code: '27' } });
      expect(cleared.body.data).toMatchObject({ gstin: null, state_code: '27' });
    });

    it('refuses a GSTIN or GST state for an entity outside India', async () => {
      for (const [body, field] of [
        [{ gstin: gstin('29') }, 'gstin'],
        [{ state_code: '29' }, 'state_code'],
      ] as const) {
        const res = await acme.http.PATCH('/v1/entities/{id}', { path: { id: europeId }, body });
        expect(res.status).toBe(400);
        expect(res.error!.details![0]!.field).toBe(field);
      }
    });

    it('sets and clears the address', async () => {
      const set = await acme.http.PATCH('/v1/entities/{id}', {
        path: { id: mumbaiId },
        body: { address: { line1: 'Nariman Point', city: 'Mumbai', state_code: '27', country: 'IN' } },
      });
      expect(set.body.data.address).toEqual({ line1: 'Nariman Point', city: 'Mumbai', state_code: '27', country: 'IN' });
      const cleared = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { address: null } });
      expect(cleared.body.data.address).toBeNull();
    });

    it('refuses a prefix used by another entity with 409', async () => {
      const res = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body: { invoice_prefix: 'INV-' } });
      expect(res.status).toBe(409);
      expect(res.error!.reason).toBe('invoice_prefix_taken');
    });

    it.each([
      ['a bad prefix', { invoice_prefix: 'bom' }, 'invoice_prefix'],
      ['a blank name', { name: '' }, 'name'],
      ['a bad GSTIN', { gstin: '24AAECK4321L1ZZ' }, 'gstin'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await acme.http.PATCH('/v1/entities/{id}', { path: { id: mumbaiId }, body });
      expect(res.status).toBe(400);
      expect(res.error!.details!.map((d: { field: string }) => d.field)).toContain(field);
    });

    it("answers 404 for another tenant's entity and leaves it untouched", async () => {
      const other = await t.registerTenant();
      const theirs = (await other.http.GET('/v1/entities')).body.data[0];
      const res = await acme.http.PATCH('/v1/entities/{id}', { path: { id: theirs!.id }, body: { name: 'Hijacked' } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: { request_id: expect.any(String), code: 'not_found', message: 'entity not found' } });
      expect((await other.http.GET('/v1/entities/{id}', { path: { id: theirs!.id } })).body.data.name).toBe(theirs!.name);
      expect((await acme.http.PATCH('/v1/entities/{id}', { path: { id: '00000000-0000-7000-8000-000000000000' }, body: { name: 'x' } })).status).toBe(404);
    });
  });

  // On PGlite the single connection serializes these anyway; on the server they truly race.
  describe(`concurrent creation${onPostgresServer ? ' (PostgreSQL server)' : ' (PGlite, serialized)'}`, () => {
    it('gives 10 simultaneous creations distinct, contiguous ledger ids', async () => {
      const fresh = await t.registerTenant();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) => fresh.http.POST('/v1/entities', { body: { name: `Branch ${i}`, invoice_prefix: `BR${i}-` } })),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(201));
      const ids = results.map((r) => r.body.data.tb_ledger_id as number).sort((a, b) => a - b);
      expect(ids).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      const listed = await fresh.http.GET('/v1/entities');
      expect(ledgerIdsOf(listed)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    });

    it('lets exactly one of simultaneous creations with one prefix win; the rest get 409', async () => {
      const fresh = await t.registerTenant();
      const results = await Promise.all(
        Array.from({ length: 5 }, (_, i) => fresh.http.POST('/v1/entities', { body: { name: `Twin ${i}`, invoice_prefix: 'TWIN-' } })),
      );
      expect(results.map((r) => r.status).sort()).toEqual([201, 409, 409, 409, 409]);
      expect(results.find((r) => r.status === 201)!.body.data.tb_ledger_id).toBe(2);
    });
  });
});
