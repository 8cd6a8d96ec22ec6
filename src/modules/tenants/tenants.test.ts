import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { gstinCheckCharacter } from '../tax/index.js';

let t: TestKosh;

beforeAll(async () => {
  t = await startTestKosh();
});
afterAll(() => t.close());

const gstin = (state: string, pan = 'AABCK1234M') => {
  const first14 = `${state}${pan}1Z`;
  return first14 + gstinCheckCharacter(first14);
};
const KEY_SHAPE = /^sk_test_[A-Za-z0-9]{32}$/;
const ADMIN_TOKEN = 'kosh-admin-token-for-tests-0123456789';

/** Calls /v1 with an arbitrary Authorization header (or none). */
const withAuth = (authorization: string | undefined, url = '/v1/settings') =>
  t.api('GET', url, undefined, authorization === undefined ? {} : { authorization });

const asKey =
  (key: string): Tenant['api'] =>
  (method, url, body, headers = {}) =>
    t.api(method, url, body, { authorization: `Bearer ${key}`, ...headers });

describe('tenants', () => {
  describe('register', () => {
    it('answers 201 with the tenant and its first key, shown once', async () => {
      const res = await t.api('POST', '/auth/register', { name: 'Acme Software', email: 'founder@acme.test' });
      expect(res.status).toBe(201);
      expect(res.body.data.tenant).toEqual({
        id: expect.any(String),
        name: 'Acme Software',
        email: 'founder@acme.test',
        data_region: 'in',
        base_currency: 'INR',
        country_code: 'IN',
        organization_id: null,
        created_at: '2026-04-01T00:00:00.000Z',
        updated_at: '2026-04-01T00:00:00.000Z',
      });
      const apiKey = res.body.data.api_key;
      expect(apiKey).toEqual({
        id: expect.any(String),
        name: 'default',
        mode: 'test',
        role: 'owner',
        prefix: apiKey.key.slice(0, 12),
        key: expect.stringMatching(KEY_SHAPE),
        created_at: '2026-04-01T00:00:00.000Z',
        last_used_at: null,
        revoked_at: null,
      });

      const acme = asKey(apiKey.key);
      const entities = await acme('GET', '/v1/entities');
      expect(entities.body.total_count).toBe(1);
      expect(entities.body.data[0]).toMatchObject({
        tenant_id: res.body.data.tenant.id,
        name: 'Acme Software',
        legal_name: 'Acme Software',
        is_primary: true,
        tb_ledger_id: 1,
        invoice_prefix: 'INV-',
        country_code: 'IN',
        state_code: null,
        gstin: null,
      });
    });

    it('takes the optional fields onto the tenant, its settings and its primary entity', async () => {
      const res = await t.api('POST', '/auth/register', {
        name: 'Bengaluru Labs',
        email: 'ops@blr.test',
        base_currency: 'usd',
        data_region: 'in-south',
        state_code: '29',
        gstin: gstin('29').toLowerCase(),
        sac_code: '998313',
        invoice_prefix: 'BLR/',
      });
      expect(res.status).toBe(201);
      expect(res.body.data.tenant).toMatchObject({ base_currency: 'USD', data_region: 'in-south' });
      const blr = asKey(res.body.data.api_key.key);
      const settings = await blr('GET', '/v1/settings');
      expect(settings.body.data).toMatchObject({ sac_code: '998313', state_code: '29', gstin: gstin('29') });
      const entity = (await blr('GET', '/v1/entities')).body.data[0];
      expect(entity).toMatchObject({ tb_ledger_id: 1, is_primary: true, invoice_prefix: 'BLR/', state_code: '29', gstin: gstin('29') });
    });

    it('derives the primary entity’s state from a GSTIN given alone', async () => {
      const res = await t.api('POST', '/auth/register', { name: 'Chennai Co', email: 'a@chennai.test', gstin: gstin('33') });
      expect(res.status).toBe(201);
      const settings = await asKey(res.body.data.api_key.key)('GET', '/v1/settings');
      expect(settings.body.data).toMatchObject({ state_code: '33', gstin: gstin('33') });
    });

    it.each([
      ['no name', { email: 'x@y.test' }, 'name'],
      ['a blank name', { name: '   ', email: 'x@y.test' }, 'name'],
      ['no e-mail', { name: 'X' }, 'email'],
      ['a malformed e-mail', { name: 'X', email: 'x-at-y' }, 'email'],
      ['a bad currency', { name: 'X', email: 'x@y.test', base_currency: 'RUPEES' }, 'base_currency'],
      ['a bad country', { name: 'X', email: 'x@y.test', country_code: 'IND' }, 'country_code'],
      ['a bad data region', { name: 'X', email: 'x@y.test', data_region: 'India!' }, 'data_region'],
      ['a bad state code', { name: 'X', email: 'x@y.test', state_code: '00' }, 'state_code'],
      ['a GSTIN with a wrong check digit', { name: 'X', email: 'x@y.test', gstin: gstin('29').slice(0, 14) + (gstin('29')[14] === '0' ? '1' : '0') }, 'gstin'],
      ['a malformed GSTIN', { name: 'X', email: 'x@y.test', gstin: '29ABC' }, 'gstin'],
      ['a bad SAC code', { name: 'X', email: 'x@y.test', sac_code: '99' }, 'sac_code'],
      ['a lower-case invoice prefix', { name: 'X', email: 'x@y.test', invoice_prefix: 'inv-' }, 'invoice_prefix'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await t.api('POST', '/auth/register', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it.each([
      ['a GSTIN from another state than state_code', { state_code: '27', gstin: gstin('29') }, 'state_code'],
      ['a GSTIN outside India', { country_code: 'US', gstin: gstin('29') }, 'gstin'],
    ])('refuses %s with 400 and leaves no tenant behind', async (_label, extra, field) => {
      const email = `rollback-${field}@tenant.test`;
      const res = await t.api('POST', '/auth/register', { name: 'Half Made', email, ...extra });
      expect(res.status).toBe(400);
      expect(res.body.error.details[0].field).toBe(field);
      // The tenant row is written before the entity check fails: the transaction must undo it.
      const rows = await t.kosh.deps.db.selectFrom('tenants').select('id').where('email', '=', email).execute();
      expect(rows).toEqual([]);
    });
  });

  describe('register with KOSH_REGISTRATION=admin', () => {
    let admin: TestKosh;
    beforeAll(async () => {
      admin = await startTestKosh({ env: { KOSH_REGISTRATION: 'admin', KOSH_ADMIN_TOKEN: ADMIN_TOKEN } });
    });
    afterAll(() => admin.close());
    const body = { name: 'Gated', email: 'gated@tenant.test' };

    it.each([
      ['no token', {}],
      ['a wrong token', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, -1)}N` }],
      ['a token prefix', { authorization: `Bearer ${ADMIN_TOKEN.slice(0, 12)}` }],
      ['the token without the Bearer scheme', { authorization: ADMIN_TOKEN }],
    ])('refuses %s with 401', async (_label, headers: Record<string, string>) => {
      const res = await admin.api('POST', '/auth/register', body, headers);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'invalid_admin_token' });
    });

    it('registers with the admin token', async () => {
      const res = await admin.api('POST', '/auth/register', body, { authorization: `Bearer ${ADMIN_TOKEN}` });
      expect(res.status).toBe(201);
      expect(res.body.data.api_key.key).toMatch(KEY_SHAPE);
    });
  });

  describe('register with KOSH_REGISTRATION=admin and no admin token configured', () => {
    it('refuses every registration with 403 registration_closed', async () => {
      const closed = await startTestKosh({ env: { KOSH_REGISTRATION: 'admin' } });
      try {
        const res = await closed.api('POST', '/auth/register', { name: 'Nobody', email: 'n@tenant.test' }, { authorization: 'Bearer anything' });
        expect(res.status).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'registration_closed' });
      } finally {
        await closed.close();
      }
    });
  });

  describe('API keys', () => {
    let acme: Tenant;
    let created: { id: string; key: string };

    beforeAll(async () => {
      acme = await t.registerTenant();
    });

    it('creates a key (201) whose secret is shown once and which works at once', async () => {
      t.clock.advanceSeconds(5);
      const res = await acme.http.POST('/v1/developer/keys', { body: { name: 'ci' } });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ name: 'ci', mode: 'test', key: expect.stringMatching(KEY_SHAPE), revoked_at: null });
      expect(res.body.data.prefix).toBe(res.body.data.key.slice(0, 12));
      expect(res.body.data.key).not.toBe(acme.key);
      created = res.body.data;
      const settings = await asKey(created.key)('GET', '/v1/settings');
      expect(settings.status).toBe(200);
      expect(settings.body.data.tenant_id).toBe(acme.tenantId);
    });

    it('creates a key with no body at all', async () => {
      const res = await t.call({ method: 'POST', url: '/v1/developer/keys', headers: { authorization: `Bearer ${acme.key}` } });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({ name: '', mode: 'test' });
    });

    it('lists keys newest first without any secret or hash', async () => {
      const res = await acme.http.GET('/v1/developer/keys');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ object: 'list', total_count: 3, has_more: false });
      expect(res.body.data.map((k: { name: string }) => k.name)).toEqual(['', 'ci', 'default']);
      for (const k of res.body.data) {
        expect(Object.keys(k).sort()).toEqual(['created_at', 'id', 'last_used_at', 'mode', 'name', 'prefix', 'revoked_at', 'role']);
      }
      expect(res.text).not.toContain(created.key);
      expect(res.text).not.toContain(acme.key);
      expect(res.text).not.toMatch(/[0-9a-f]{64}/); // no SHA-256 hash either
    });

    it('never lists another tenant’s keys', async () => {
      const other = await t.registerTenant();
      const res = await other.http.GET('/v1/developer/keys');
      expect(res.body.data.map((k: { id: string }) => k.id)).not.toContain(created.id);
      expect(res.body.total_count).toBe(1);
    });

    it('revokes a key; the revoked key then gets 401 invalid_api_key and the others still work', async () => {
      t.clock.advanceSeconds(5);
      const revokedAt = t.clock.now().toISOString();
      const res = await acme.http.DELETE('/v1/developer/keys/{id}', { path: { id: created.id } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ id: created.id, revoked_at: revokedAt });
      expect((res.body.data as { key?: string }).key).toBeUndefined();

      const refused = await asKey(created.key)('GET', '/v1/settings');
      expect(refused.status).toBe(401);
      expect(refused.body.error).toMatchObject({ code: 'unauthorized', reason: 'invalid_api_key' });
      expect((await acme.http.GET('/v1/settings')).status).toBe(200);

      // Revoking again keeps the first revocation time.
      t.clock.advanceSeconds(5);
      const again = await acme.http.DELETE('/v1/developer/keys/{id}', { path: { id: created.id } });
      expect(again.status).toBe(200);
      expect(again.body.data.revoked_at).toBe(revokedAt);
    });

    it("answers 404 for revoking a missing key or another tenant's key, and leaves that key working", async () => {
      const other = await t.registerTenant();
      const theirs = (await other.http.GET('/v1/developer/keys')).body.data[0];
      for (const id of [theirs!.id, '00000000-0000-7000-8000-000000000000']) {
        const res = await acme.http.DELETE('/v1/developer/keys/{id}', { path: { id } });
        expect(res.status).toBe(404);
        expect(res.error!.code).toBe('not_found');
      }
      expect((await other.http.GET('/v1/settings')).status).toBe(200);
      expect((await acme.http.DELETE('/v1/developer/keys/{id}', { path: { id: 'not-a-uuid' } })).status).toBe(400);
    });

    it("refuses a live-mode key for this test-mode tenant (a key is of its tenant's mode)", async () => {
      const res = await acme.http.POST('/v1/developer/keys', { body: { name: 'prod', mode: 'live' } });
      expect(res.status).toBe(400);
      expect(res.error!.details).toEqual([{ field: 'mode', message: expect.stringContaining('test-mode tenant') }]);
    });

    it.each([
      ['a bad mode', { mode: 'staging' }, 'mode'],
      ['an over-long name', { name: 'n'.repeat(101) }, 'name'],
    ])('refuses %s with 400', async (_label, body, field) => {
      const res = await acme.api('POST', '/v1/developer/keys', body);
      expect(res.status).toBe(400);
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });
  });

  describe('authentication', () => {
    it.each([
      ['no Authorization header', undefined],
      ['an empty header', ''],
      ['garbage', 'Bearer garbage'],
      ['a Basic credential', 'Basic dXNlcjpwYXNz'],
      ['a well-formed key nobody issued', `Bearer sk_test_${'A'.repeat(32)}`],
      ['a key one character short', `Bearer sk_test_${'A'.repeat(31)}`],
    ])('answers %s with 401 invalid_api_key', async (_label, authorization) => {
      const res = await withAuth(authorization);
      expect(res.status).toBe(401);
      expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'invalid_api_key' });
    });

    it('guards every /v1 route, writes included, before validating the body', async () => {
      const res = await t.api('POST', '/v1/developer/keys', { mode: 'nonsense' });
      expect(res.status).toBe(401);
    });
  });

  describe('settings', () => {
    let acme: Tenant;
    beforeAll(async () => {
      acme = await t.registerTenant();
    });

    it('starts with the defaults', async () => {
      const res = await acme.http.GET('/v1/settings');
      expect(res.status).toBe(200);
      expect(res.body.data).toEqual({
        tenant_id: acme.tenantId,
        // The business's name as registered (the dashboard's top bar shows it).
        tenant_name: expect.stringMatching(/^Tenant \d+$/),
        sac_code: null,
        state_code: null,
        gstin: null,
        credit_note_approval_required: false,
        referral_window_days: 30,
        referral_reward_amount: 0,
        invoice_due_days: 30,
        // What customers may do in the portal (decision 0500): cancel at period end, update billing details.
        portal_cancellation: 'at_period_end',
        portal_plan_change: false,
        portal_quantity_change: false,
        portal_billing_details: true,
        created_at: expect.any(String),
        updated_at: expect.any(String),
      });
    });

    it('updates the given settings only, and keeps them', async () => {
      t.clock.advanceSeconds(30);
      const res = await acme.http.PATCH('/v1/settings', { body: { sac_code: '998314', credit_note_approval_required: true, referral_window_days: 45 } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({
        sac_code: '998314',
        credit_note_approval_required: true,
        referral_window_days: 45,
        referral_reward_amount: 0,
        invoice_due_days: 30,
        updated_at: t.clock.now().toISOString(),
      });
      expect((await acme.http.GET('/v1/settings')).body.data).toEqual(res.body.data);
      const cleared = await acme.http.PATCH('/v1/settings', { body: { sac_code: null } });
      expect(cleared.body.data).toMatchObject({ sac_code: null, credit_note_approval_required: true, referral_window_days: 45 });
    });

    it('keeps the GST identity on the primary entity', async () => {
      const res = await acme.http.PATCH('/v1/settings', { body: { gstin: gstin('07'), state_code: '07' } });
      expect(res.status).toBe(200);
      expect(res.body.data).toMatchObject({ gstin: gstin('07'), state_code: '07' });
      const primary = (await acme.http.GET('/v1/entities')).body.data.find((e: { is_primary: boolean }) => e.is_primary);
      const entity = await acme.http.GET('/v1/entities/{id}', { path: { id: primary!.id } });
      expect(entity.body.data).toMatchObject({ gstin: gstin('07'), state_code: '07', tb_ledger_id: 1 });

      // A new GSTIN alone moves the state with it.
      const moved = await acme.http.PATCH('/v1/settings', { body: { gstin: gstin('29') } });
      expect(moved.body.data).toMatchObject({ gstin: gstin('29'), state_code: '29' });
      expect((await acme.http.GET('/v1/entities/{id}', { path: { id: primary!.id } })).body.data).toMatchObject({ gstin: gstin('29'), state_code: '29' });
    });

    it('refuses a state that contradicts the GSTIN, and changes nothing', async () => {
      const res = await acme.http.PATCH('/v1/settings', { body: { state_code: '27', referral_window_days: 90 } });
      expect(res.status).toBe(400);
      expect(res.error!.details![0]!.field).toBe('state_code');
      expect((await acme.http.GET('/v1/settings')).body.data).toMatchObject({ state_code: '29', referral_window_days: 45 });
    });

    it.each([
      ['a short SAC code', { sac_code: '12' }, 'sac_code'],
      ['a non-boolean approval flag', { credit_note_approval_required: 'yes' }, 'credit_note_approval_required'],
      ['a zero referral window', { referral_window_days: 0 }, 'referral_window_days'],
      ['a referral window over ten years', { referral_window_days: 3651 }, 'referral_window_days'],
      ['a fractional referral window', { referral_window_days: 1.5 }, 'referral_window_days'],
      ['a referral window given as text', { referral_window_days: '30' }, 'referral_window_days'],
      ['a negative reward', { referral_reward_amount: -1 }, 'referral_reward_amount'],
      ['an unsafe reward', { referral_reward_amount: 2 ** 60 }, 'referral_reward_amount'],
      ['due days over a year', { invoice_due_days: 366 }, 'invoice_due_days'],
      ['an unknown state code', { state_code: '00' }, 'state_code'],
      ['a GSTIN with a wrong check digit', { gstin: '27AAPFU0939F1ZA' }, 'gstin'],
    ])('refuses %s with 400 naming the field', async (_label, body, field) => {
      const res = await acme.api('PATCH', '/v1/settings', body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
      expect(res.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    });

    it('refuses a GSTIN for a tenant whose primary entity is outside India', async () => {
      const abroad = await t.registerTenant({ country_code: 'US' });
      const res = await abroad.http.PATCH('/v1/settings', { body: { gstin: gstin('29') } });
      expect(res.status).toBe(400);
      expect(res.error!.details![0]!.field).toBe('gstin');
    });
  });
  describe('API key bookkeeping', () => {
    let acme: Tenant;
    beforeAll(async () => {
      acme = await t.registerTenant();
    });

    it('never keeps the secret for an Idempotency-Key replay, in the answer or in the database', async () => {
      const first = await acme.http.POST('/v1/developer/keys', { body: { name: 'replayed' }, headers: { 'idempotency-key': 'key-create-1' } });
      expect(first.body.data.key).toMatch(KEY_SHAPE);
      const replay = await acme.http.POST('/v1/developer/keys', { body: { name: 'replayed' }, headers: { 'idempotency-key': 'key-create-1' } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.body.data.id).toBe(first.body.data.id);
      expect(replay.body.data.key).not.toContain(first.body.data.key);
      const stored = await t.database.db.selectFrom('idempotency_keys').select('response').where('key', '=', 'key-create-1').executeTakeFirstOrThrow();
      expect(JSON.stringify(stored.response)).not.toContain(first.body.data.key);
    });

    it('records when a key was last used, to the hour', async () => {
      const before = (await acme.http.GET('/v1/developer/keys')).body.data.find((k: { name: string }) => k.name === 'default');
      expect(before!.last_used_at).not.toBeNull();
      t.clock.advance(2 * 3_600_000);
      await acme.http.GET('/v1/settings');
      const after = (await acme.http.GET('/v1/developer/keys')).body.data.find((k: { name: string }) => k.name === 'default');
      expect(new Date(after!.last_used_at!).getTime()).toBeGreaterThan(new Date(before!.last_used_at!).getTime());
    });
  });
});

describe('API keys verified recently (KOSH_API_KEY_CACHE_SECONDS, default 10)', () => {
  it('are trusted for at most the cache time, then looked up again (a revocation no notification announced is seen then)', async () => {
    const owner = await t.registerTenant();
    const key = (await owner.http.POST('/v1/developer/keys', { body: { name: 'elsewhere' } })).body.data;
    expect((await asKey(key.key)('GET', '/v1/settings')).status).toBe(200); // verified and remembered

    // Revoked with the notification trigger out of the way: only the cache's age ends the trust.
    await sql`ALTER TABLE api_keys DISABLE TRIGGER api_keys_notify`.execute(t.database.db);
    try {
      await t.database.db.updateTable('api_keys').set({ revoked_at: t.clock.now() }).where('id', '=', key.id).execute();
    } finally {
      await sql`ALTER TABLE api_keys ENABLE TRIGGER api_keys_notify`.execute(t.database.db);
    }
    t.clock.advanceSeconds(9);
    expect((await asKey(key.key)('GET', '/v1/settings')).status).toBe(200);
    t.clock.advanceSeconds(1);
    const refused = await asKey(key.key)('GET', '/v1/settings');
    expect(refused.status).toBe(401);
    expect(refused.body.error.reason).toBe('invalid_api_key');
  });

  it('forget a key another process revoked as soon as its notification arrives', async () => {
    const owner = await t.registerTenant();
    const key = (await owner.http.POST('/v1/developer/keys', { body: { name: 'notified' } })).body.data;
    expect((await asKey(key.key)('GET', '/v1/settings')).status).toBe(200);
    await t.database.db.updateTable('api_keys').set({ revoked_at: t.clock.now() }).where('id', '=', key.id).execute();
    const start = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - start < 1_000) {
      status = (await asKey(key.key)('GET', '/v1/settings')).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe(401);
  });

  it('are looked up on every request when the cache is off', async () => {
    const uncached = await startTestKosh({ env: { KOSH_API_KEY_CACHE_SECONDS: '0' } });
    try {
      const owner = await uncached.registerTenant();
      expect((await owner.http.GET('/v1/settings')).status).toBe(200);
      await uncached.database.db.updateTable('api_keys').set({ revoked_at: uncached.clock.now() }).where('tenant_id', '=', owner.tenantId).execute();
      expect((await owner.http.GET('/v1/settings')).status).toBe(401);
    } finally {
      await uncached.close();
    }
  });
});
