import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh, withoutRequestId } from '../../../test/support/harness.js';
import { startMailSink, type MailSink } from '../../../test/support/mail-sink.js';

let t: TestKosh;
let sink: MailSink;
let acme: Tenant;
let buyer: string;
let recipient: string;
let planId: string;
let counter = 0;

async function customer(tenant: Tenant = acme, body: Record<string, unknown> = {}): Promise<string> {
  counter += 1;
  const res = await tenant.http.POST('/v1/customers', { body: { email: `portal${counter}@example.in`, name: `Portal ${counter}`, ...body } });
  expect(res.status, res.text).toBe(201);
  return res.body.data.id;
}

async function giftFor(tenant: Tenant = acme, options: { pay?: boolean; plan?: string; buyerId?: string } = {}) {
  const res = await tenant.http.POST('/v1/gifts', {
    body: {
      plan_id: options.plan ?? planId,
      buyer_customer_id: options.buyerId ?? buyer,
      recipient_email: 'friend@example.in',
      duration_months: 3,
    },
  });
  expect(res.status, res.text).toBe(201);
  const gift = res.body.data;
  if (options.pay ?? true) {
    const invoice = (await tenant.http.GET('/v1/invoices/{id}', { path: { id: gift.invoice_id! } })).body.data;
    const paid = await tenant.http.POST('/v1/payments/offline', {
      body: {
        customer_id: invoice.customer_id,
        invoice_id: invoice.id,
        payment_type: 'cash',
        amount: invoice.amount_due,
      },
    });
    expect(paid.status, paid.text).toBe(201);
  }
  return gift;
}

/** Opens a sign-in link the API made; answers the cookie header and the CSRF token of the new session. */
async function signInAs(customerId: string, tenant: Tenant = acme): Promise<{ cookie: string; csrf: string }> {
  const link = await tenant.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: customerId } });
  expect(link.status, link.text).toBe(201);
  const opened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
  expect(opened.status).toBe(303);
  const cookie = sessionCookieOf(opened);
  const me = await portalApi('GET', '/portal/api/me', cookie);
  expect(me.status).toBe(200);
  return { cookie, csrf: me.body.data.csrf_token };
}

function sessionCookieOf(res: ApiResponse): string {
  const header = res.headers['set-cookie'];
  const value = String(Array.isArray(header) ? header[0] : header);
  return value.split(';')[0]!;
}

function portalApi(method: 'GET' | 'POST', url: string, cookie?: string, body?: unknown, headers: Record<string, string> = {}) {
  return t.call({
    method,
    url,
    headers: { ...(cookie ? { cookie } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
    ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
  });
}

function form(url: string, cookie: string | undefined, fields: Record<string, string>) {
  return t.call({
    method: 'POST',
    url,
    headers: { ...(cookie ? { cookie } : {}), 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(fields).toString(),
  });
}

const redeem = (s: { cookie: string; csrf: string }, code: string) => portalApi('POST', '/portal/api/redeem', s.cookie, { code }, { 'x-csrf-token': s.csrf });

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in' } });
  acme = await t.registerTenant({ name: 'Acme Cloud' });
  buyer = await customer();
  recipient = await customer(acme, { name: 'Riya <b>R</b>' });
  const plan = await acme.http.POST('/v1/plans', { body: { name: 'Pro', code: 'pro', interval_unit: 'month', amount: 49_900, currency: 'INR' } });
  planId = plan.body.data.id;
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('portal', () => {
  describe('POST /v1/customers/{id}/portal-sessions', () => {
    it('makes a one-time sign-in link valid for 15 minutes', async () => {
      const res = await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: buyer } });
      expect(res.status).toBe(201);
      const { url, token, expires_at } = res.body.data;
      expect(token).toMatch(new RegExp(`^${acme.tenantId}\\.[A-Za-z0-9_-]{43}$`));
      expect(url).toBe(`https://billing.example.in/portal/login?token=${encodeURIComponent(token)}`);
      expect(expires_at).toBe(new Date(t.clock.now().getTime() + 15 * 60_000).toISOString());
      const stored = await t.kosh.deps.db.selectFrom('portal_login_tokens').selectAll().where('tenant_id', '=', acme.tenantId).execute();
      expect(JSON.stringify(stored)).not.toContain(token.split('.')[1]);
    });

    it("answers 404 for another tenant's customer and 400 for a malformed id", async () => {
      const other = await t.registerTenant();
      expect((await other.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: buyer } })).status).toBe(404);
      expect((await acme.api('POST', '/v1/customers/x/portal-sessions')).status).toBe(400);
      expect((await t.api('POST', `/v1/customers/${buyer}/portal-sessions`)).status).toBe(401);
    });
  });

  describe('GET /portal/login', () => {
    it('sets an HttpOnly, SameSite=Lax session cookie for 7 days, stored only as a hash, and redirects to /portal', async () => {
      const link = await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: buyer } });
      const res = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
      expect(res.status).toBe(303);
      expect(res.headers.location).toBe('/portal');
      expect(res.headers['referrer-policy']).toBe('no-referrer');
      const setCookie = String(res.headers['set-cookie']);
      expect(setCookie).toMatch(/^portal_session=[0-9a-f-]{36}\.[A-Za-z0-9_-]{43}; /);
      expect(setCookie).toContain('HttpOnly');
      expect(setCookie).toContain('SameSite=Lax');
      expect(setCookie).toContain('Path=/portal');
      expect(setCookie).toContain(`Max-Age=${7 * 86_400}`);
      expect(setCookie).not.toContain('Secure'); // test mode; see the live-mode test
      const secret = setCookie.split(';')[0]!.split('.')[1]!;
      const sessions = await t.kosh.deps.db.selectFrom('portal_sessions').selectAll().where('tenant_id', '=', acme.tenantId).execute();
      expect(sessions.length).toBeGreaterThan(0);
      expect(JSON.stringify(sessions)).not.toContain(secret);
    });

    it('refuses a used, expired, unknown or malformed link with a page offering a new one', async () => {
      const link = await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: buyer } });
      const url = `/portal/login?token=${encodeURIComponent(link.body.data.token)}`;
      expect((await t.call({ method: 'GET', url })).status).toBe(303);
      const again = await t.call({ method: 'GET', url });
      expect(again.status).toBe(400);
      expect(again.headers['set-cookie']).toBeUndefined();
      expect(again.text).toContain('invalid, expired or already used');
      expect(again.text).toContain(`value="${acme.tenantId}"`);

      const late = await acme.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: buyer } });
      t.clock.advance(15 * 60_000);
      expect((await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(late.body.data.token)}` })).status).toBe(400);
      for (const token of ['', 'nope', `${acme.tenantId}.${'A'.repeat(43)}`]) {
        expect((await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(token)}` })).status).toBe(400);
      }
      expect((await t.call({ method: 'GET', url: '/portal/login' })).status).toBe(400);
    });

    it('marks the cookie Secure in live mode', async () => {
      const live = await startTestKosh({ env: { KOSH_MODE: 'live', KOSH_REGISTRATION: 'open' } });
      try {
        const tenant = await live.registerTenant();
        const c = await tenant.http.POST('/v1/customers', { body: { email: 'live@example.in' } });
        const link = await tenant.http.POST('/v1/customers/{id}/portal-sessions', { path: { id: c.body.data.id } });
        const res = await live.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
        expect(res.status).toBe(303);
        expect(String(res.headers['set-cookie'])).toMatch(/; Secure/);
      } finally {
        await live.close();
      }
    });
  });

  describe('POST /portal/api/login', () => {
    it('e-mails a working sign-in link, and answers the same for unknown addresses and tenants', async () => {
      const known = await portalApi('POST', '/portal/api/login', undefined, { tenant_id: acme.tenantId, email: `PORTAL1@example.in` });
      const unknown = await portalApi('POST', '/portal/api/login', undefined, { tenant_id: acme.tenantId, email: 'nobody@example.in' });
      const otherTenant = await portalApi('POST', '/portal/api/login', undefined, {
        tenant_id: '00000000-0000-7000-8000-000000000000',
        email: 'portal1@example.in',
      });
      for (const res of [known, unknown, otherTenant]) {
        expect(res.status).toBe(200);
        expect(withoutRequestId(res.text)).toBe(withoutRequestId(known.text));
      }
      const before = sink.messages.length;
      await t.kosh.worker.drain();
      const sent = sink.messages.slice(before);
      expect(sent.map((m) => m.envelope.to)).toEqual([['portal1@example.in']]);
      expect(sent[0]!.subject).toBe('Your sign-in link for Acme Cloud');
      const url = /https:\/\/billing\.example\.in(\/portal\/login\?token=\S+)/.exec(sent[0]!.text ?? '')?.[1];
      expect(url).toBeDefined();
      const opened = await t.call({ method: 'GET', url: url! });
      expect(opened.status).toBe(303);
      const me = await portalApi('GET', '/portal/api/me', sessionCookieOf(opened));
      expect(me.body.data.customer).toMatchObject({ id: buyer, email: 'portal1@example.in' });
    });

    it('e-mails at most 5 links an hour to one customer, answering every request alike', async () => {
      await customer(acme, { email: 'often@example.in' });
      await t.kosh.worker.drain();
      const before = sink.messages.length;
      const answers = [];
      for (let i = 0; i < 7; i++)
        answers.push(await portalApi('POST', '/portal/api/login', undefined, { tenant_id: acme.tenantId, email: 'often@example.in' }));
      for (const res of answers) expect([res.status, res.text]).toEqual([200, answers[0]!.text]);
      await t.kosh.worker.drain();
      expect(sink.messages.slice(before).filter((m) => m.envelope.to?.includes('often@example.in'))).toHaveLength(5);

      t.clock.advanceSeconds(3_601);
      await portalApi('POST', '/portal/api/login', undefined, { tenant_id: acme.tenantId, email: 'often@example.in' });
      await t.kosh.worker.drain();
      expect(sink.messages.slice(before).filter((m) => m.envelope.to?.includes('often@example.in'))).toHaveLength(6);
    });

    it.each([
      ['a malformed tenant id', { tenant_id: 'x', email: 'a@example.in' }],
      ['a malformed e-mail', { tenant_id: '00000000-0000-7000-8000-000000000000', email: 'nope' }],
      ['no e-mail', { tenant_id: '00000000-0000-7000-8000-000000000000' }],
    ])('refuses %s with 400', async (_label, body) => {
      const res = await portalApi('POST', '/portal/api/login', undefined, body);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });
  });

  describe('session', () => {
    it('answers 401 with the envelope without a session, with a forged one, and after 7 days', async () => {
      for (const cookie of [undefined, 'portal_session=garbage', `portal_session=${acme.tenantId}.${'A'.repeat(43)}`]) {
        const res = await portalApi('GET', '/portal/api/me', cookie);
        expect(res.status).toBe(401);
        expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'invalid_session' });
      }
      const s = await signInAs(buyer);
      t.clock.advanceDays(7);
      expect((await portalApi('GET', '/portal/api/me', s.cookie)).status).toBe(401);
      expect((await portalApi('GET', '/portal/api/invoices', s.cookie)).status).toBe(401);
    });

    it('refuses a wrong CSRF token on logout, and the session is then dead', async () => {
      const s = await signInAs(buyer);
      const forged = await portalApi('POST', '/portal/api/logout', s.cookie, undefined, { 'x-csrf-token': 'wrong' });
      expect(forged.status).toBe(403);
      expect(forged.body.error.reason).toBe('csrf_token_invalid');
      const res = await portalApi('POST', '/portal/api/logout', s.cookie, undefined, { 'x-csrf-token': s.csrf });
      expect(res.status).toBe(200);
      expect(String(res.headers['set-cookie'])).toContain('Max-Age=0');
      expect((await portalApi('GET', '/portal/api/me', s.cookie)).status).toBe(401);
    });
  });

  describe('subscriptions, invoices and PDFs', () => {
    it("shows only the signed-in customer's records, without drafts", async () => {
      const mine = await acme.http.POST('/v1/invoices', {
        body: { customer_id: recipient, currency: 'INR', lines: [{ description: 'Setup', unit_amount: 10_000 }] },
      });
      const draft = await acme.http.POST('/v1/invoices', {
        body: {
          customer_id: recipient,
          currency: 'INR',
          auto_finalize: false,
          lines: [{ description: 'Later', unit_amount: 5_000 }],
        },
      });
      const theirs = await acme.http.POST('/v1/invoices', {
        body: { customer_id: buyer, currency: 'INR', lines: [{ description: 'Theirs', unit_amount: 7_000 }] },
      });
      const s = await signInAs(recipient);
      const invoices = await portalApi('GET', '/portal/api/invoices', s.cookie);
      expect(invoices.status).toBe(200);
      expect(invoices.body.data.map((i: { id: string }) => i.id)).toEqual([mine.body.data.id]);
      expect(invoices.body).toMatchObject({ object: 'list', total_count: 1 });

      const pdf = await portalApi('GET', `/portal/api/invoices/${mine.body.data.id}/pdf`, s.cookie);
      expect(pdf.status).toBe(200);
      expect(pdf.headers['content-type']).toBe('application/pdf');
      expect(pdf.text.startsWith('%PDF')).toBe(true);
      for (const id of [theirs.body.data.id, draft.body.data.id, '00000000-0000-7000-8000-000000000000']) {
        const res = await portalApi('GET', `/portal/api/invoices/${id}/pdf`, s.cookie);
        expect(res.status).toBe(404);
        expect(res.body.error.message).toBe('invoice not found');
      }
      expect((await portalApi('GET', '/portal/api/invoices/x/pdf', s.cookie)).status).toBe(400);
      expect((await portalApi('GET', `/portal/api/invoices/${mine.body.data.id}/pdf`)).status).toBe(401);
      expect((await portalApi('GET', '/portal/api/subscriptions', s.cookie)).body.data).toEqual([]);
    });
  });

  describe('POST /portal/api/redeem (SPEC 4.9)', () => {
    it("makes the gift's subscription for the signed-in customer: active, ending after the gifted months", async () => {
      const gift = await giftFor();
      const s = await signInAs(recipient);
      const res = await redeem(s, gift.code.toLowerCase().replace(/-/g, ' '));
      expect(res.status, res.text).toBe(201);
      const start = t.clock.now();
      const end = new Date(start);
      end.setUTCMonth(end.getUTCMonth() + 3);
      expect(res.body.data).toMatchObject({
        customer_id: recipient,
        plan_id: planId,
        status: 'active',
        gift_code: gift.code,
        gifted_by: buyer,
        cancel_at_period_end: true,
        current_period_start: start.toISOString(),
        current_period_end: end.toISOString(),
      });
      const after = (await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data;
      expect(after).toMatchObject({
        status: 'redeemed',
        redeemed_by_customer_id: recipient,
        redeemed_at: start.toISOString(),
        subscription_id: res.body.data.id,
      });
      const subs = await portalApi('GET', '/portal/api/subscriptions', s.cookie);
      expect(subs.body.data).toEqual([expect.objectContaining({ id: res.body.data.id, plan_name: 'Pro' })]);
      const events = await t.kosh.deps.db.selectFrom('events').select('type').where('object_id', '=', gift.id).orderBy('id').execute();
      expect(events.map((e) => e.type)).toEqual(['gift.purchased', 'gift.redeemed']);

      const used = await redeem(s, gift.code);
      expect(used.status).toBe(422);
      expect(used.body.error).toEqual({
        request_id: expect.any(String),
        code: 'validation_failed',
        message: 'this gift code has already been used',
        reason: 'gift_code_used',
      });
      const cancel = await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: gift.id } });
      expect(cancel.status).toBe(409);
    });

    it('refuses an unpaid code and an expired one with 422', async () => {
      const s = await signInAs(await customer());
      const unpaid = await giftFor(acme, { pay: false });
      const res = await redeem(s, unpaid.code);
      expect(res.status).toBe(422);
      expect(res.body.error.reason).toBe('gift_code_unpaid');
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: unpaid.id } })).body.data.status).toBe('purchased');

      const lapsing = await giftFor();
      t.clock.set(lapsing.expires_at);
      const fresh = await signInAs(await customer());
      const expired = await redeem(fresh, lapsing.code);
      expect(expired.status).toBe(422);
      expect(expired.body.error.reason).toBe('gift_code_expired');
    });

    it("answers a wrong, malformed, canceled or another tenant's code identically, revealing nothing", async () => {
      const s = await signInAs(await customer());
      const canceled = await giftFor();
      expect((await acme.http.POST('/v1/gifts/{id}/cancel', { path: { id: canceled.id } })).status).toBe(200);
      const other = await t.registerTenant();
      const otherPlan = await other.http.POST('/v1/plans', { body: { name: 'X', code: 'x', interval_unit: 'month', amount: 100, currency: 'INR' } });
      const foreign = await giftFor(other, { plan: otherPlan.body.data.id, buyerId: await customer(other) });
      const answers = await Promise.all(['ZZZZ-ZZZZ-ZZZZ-ZZZZ', 'hello', "' OR 1=1 --", canceled.code, foreign.code].map((code) => redeem(s, code)));
      for (const res of answers) {
        expect(res.status).toBe(422);
        expect(withoutRequestId(res.text)).toBe(withoutRequestId(answers[0]!.text));
      }
      expect(answers[0]!.body.error).toEqual({
        request_id: expect.any(String),
        code: 'validation_failed',
        message: 'this gift code is not valid',
        reason: 'gift_code_invalid',
      });
      expect((await redeem(s, '')).status).toBe(422);
    });

    it('needs a session (401), refuses cross-site requests and wrong CSRF tokens (403)', async () => {
      const gift = await giftFor();
      expect((await portalApi('POST', '/portal/api/redeem', undefined, { code: gift.code })).status).toBe(401);
      const s = await signInAs(await customer());
      const crossSite = await portalApi(
        'POST',
        '/portal/api/redeem',
        s.cookie,
        { code: gift.code },
        { 'sec-fetch-site': 'cross-site', origin: 'https://evil.example' },
      );
      expect(crossSite.status).toBe(403);
      expect(crossSite.body.error).toMatchObject({ code: 'unauthorized', reason: 'cross_site_request' });
      const otherToken = await signInAs(await customer());
      expect((await portalApi('POST', '/portal/api/redeem', s.cookie, { code: gift.code }, { 'x-csrf-token': otherToken.csrf })).status).toBe(403);
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data.status).toBe('purchased');
      expect((await portalApi('POST', '/portal/api/redeem', s.cookie, { nope: 1 }, { 'x-csrf-token': s.csrf })).status).toBe(400);
    });

    it('gives one subscription when two customers race for one code', async () => {
      const gift = await giftFor();
      const [a, b] = [await signInAs(await customer()), await signInAs(await customer())];
      const results = await Promise.all([redeem(a, gift.code), redeem(b, gift.code)]);
      expect(results.map((r) => r.status).sort()).toEqual([201, 422]);
      expect(results.find((r) => r.status === 422)!.body.error.reason).toBe('gift_code_used');
      const subs = await t.kosh.deps.db
        .selectFrom('subscriptions')
        .select('id')
        .where('tenant_id', '=', acme.tenantId)
        .where('gift_code', '=', gift.code)
        .execute();
      expect(subs).toHaveLength(1);
    });
  });

  describe('the /portal page', () => {
    it('shows a sign-in form for a known tenant without a session', async () => {
      const bare = await t.call({ method: 'GET', url: '/portal' });
      expect(bare.status).toBe(200);
      expect(bare.headers['content-type']).toContain('text/html');
      expect(bare.headers['content-security-policy']).toContain("frame-ancestors 'none'");
      expect(bare.text).not.toContain('<form');
      const withTenant = await t.call({ method: 'GET', url: `/portal?tenant=${acme.tenantId}` });
      expect(withTenant.text).toContain('action="/portal/login"');
      const sent = await form('/portal/login', undefined, { tenant_id: acme.tenantId, email: 'nobody@example.in' });
      expect(sent.status).toBe(200);
      expect(sent.text).toContain('Check your e-mail');
    });

    it('lists subscriptions and invoices with PDF links, escapes what customers typed, and redeems through a form', async () => {
      const s = await signInAs(recipient);
      const page = await t.call({ method: 'GET', url: '/portal', headers: { cookie: s.cookie } });
      expect(page.status).toBe(200);
      expect(page.text).toContain('Riya &lt;b&gt;R&lt;/b&gt;');
      expect(page.text).not.toContain('<b>R</b>');
      expect(page.text).toMatch(/href="\/portal\/api\/invoices\/[0-9a-f-]{36}\/pdf"/);
      expect(page.text).toContain(`name="csrf_token" value="${s.csrf}"`);

      const gift = await giftFor();
      const forged = await form('/portal/redeem', s.cookie, { code: gift.code, csrf_token: 'x' });
      expect(forged.status).toBe(403);
      const wrong = await form('/portal/redeem', s.cookie, { code: 'ABCD-EFGH-JKLM-NPQR', csrf_token: s.csrf });
      expect(wrong.status).toBe(422);
      expect(wrong.text).toContain('This gift code is not valid.');
      expect(wrong.text).toContain('value="ABCD-EFGH-JKLM-NPQR"');
      const ok = await form('/portal/redeem', s.cookie, { code: gift.code, csrf_token: s.csrf });
      expect(ok.status).toBe(303);
      expect(ok.headers.location).toBe('/portal?notice=gift_redeemed');
      const after = await t.call({ method: 'GET', url: '/portal?notice=gift_redeemed', headers: { cookie: s.cookie } });
      expect(after.text).toContain('Gift redeemed');
      expect((await acme.http.GET('/v1/gifts/{id}', { path: { id: gift.id } })).body.data.status).toBe('redeemed');

      const out = await form('/portal/logout', s.cookie, { csrf_token: s.csrf });
      expect(out.status).toBe(303);
      expect(out.headers.location).toBe(`/portal?notice=signed_out&tenant=${acme.tenantId}`);
      expect((await portalApi('GET', '/portal/api/me', s.cookie)).status).toBe(401);
    });
  });
});
