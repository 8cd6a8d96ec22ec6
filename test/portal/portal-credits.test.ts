import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { createInvoice } from '../support/billing.js';
import { openPortalSession, type PortalSessionCookie } from '../support/portal.js';
import { createCustomer, createPlan, invoicesOf, karnatakaTenant, pay, subscribe } from '../subscriptions/helpers.js';
import { escapeHtml } from '../../src/platform/html.js';
import { displayMoney } from '../../src/platform/money.js';

/**
 * The portal's prepaid credits and features pages (issue #30, DESIGN §23): what they show is what
 * the API answers for the same customer, and only for the signed-in customer. Karnataka to
 * Karnataka, GST 18 %: a paid grant of ₹200.00 is sold on a top-up invoice of ₹236.00; a later
 * ₹100.00 invoice takes the promotional ₹30.00 before GST (₹70.00 + ₹12.60) and settles the rest
 * from the paid credit, which keeps ₹130.00.
 */
let t: TestKosh;
let acme: Tenant;

const signInAs = (customerId: string) => openPortalSession(t, acme, customerId);

const page = (url: string, s?: PortalSessionCookie): Promise<ApiResponse> => t.call({ method: 'GET', url, headers: s ? { cookie: s.cookie } : {} });

async function ok(res: ApiResponse, status = 200) {
  expect(res.status, res.text).toBe(status);
  return res.body.data;
}

/** The cells of the table row `<tr data-<attribute>="<key>">`, as text. */
function row(html: string, attribute: string, key: string): string[] | undefined {
  const match = new RegExp(`<tr data-${attribute}="${key}">(.*?)</tr>`).exec(html);
  return match ? [...match[1]!.matchAll(/<td[^>]*>(.*?)<\/td>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '').trim()) : undefined;
}

const rupees = (minor: number) => escapeHtml(displayMoney(minor, 'INR'));

let holder: string;
let other: string;
let promo: { id: string };
let paid: { id: string; invoice_id: string };
let drawn: { id: string; number: string };

beforeAll(async () => {
  t = await startTestKosh();
  acme = await karnatakaTenant(t);
  t.clock.set('2026-04-01T00:00:00Z');

  const plan = await createPlan(acme, { amount: 100_000 });
  await ok(await acme.http.POST('/v1/features', { body: { key: 'sso', name: 'Single sign-on', type: 'boolean' } }), 201);
  await ok(await acme.http.POST('/v1/features', { body: { key: 'projects', name: 'Projects', type: 'quantity' } }), 201);
  await ok(await acme.http.POST('/v1/features', { body: { key: 'api_calls', name: 'API calls', type: 'quantity' } }), 201);
  await ok(await acme.http.POST('/v1/features', { body: { key: 'support', name: 'Support <tier>', type: 'enum', values: ['standard', 'priority'] } }), 201);
  await ok(await acme.http.POST('/v1/features', { body: { key: 'audit_log', name: 'Audit log', type: 'boolean' } }), 201);
  await ok(
    await acme.http.PUT('/v1/plans/{id}/entitlements', {
      path: { id: plan.id },
      body: [
        { feature_key: 'sso', value: true },
        { feature_key: 'projects', value: 5 },
        { feature_key: 'api_calls', value: null },
        { feature_key: 'support', value: 'priority' },
      ],
    }),
  );

  holder = await createCustomer(acme);
  other = await createCustomer(acme);
  const sub = await subscribe(acme, { customer_id: holder, plan_id: plan.id });
  await pay(acme, (await invoicesOf(acme, sub.id))[0]);

  const grant = (body: { category: 'paid' | 'promotional'; amount: number; name: string; priority?: number; expires_at?: string }) =>
    acme.http.POST('/v1/customers/{id}/credit-grants', { path: { id: holder }, body: { currency: 'INR', ...body } });
  promo = await ok(await grant({ category: 'promotional', amount: 3_000, name: 'Launch <offer>', priority: 10, expires_at: '2026-12-31T18:29:59Z' }), 201);
  paid = await ok(await grant({ category: 'paid', amount: 20_000, name: 'Top-up' }), 201);
  await pay(acme, await ok(await acme.http.GET('/v1/invoices/{id}', { path: { id: paid.invoice_id } })));
  t.clock.set('2026-04-05T00:00:00Z');
  drawn = await createInvoice(acme, holder, [10_000]);
  // Another customer's own grant, which the holder must never see.
  await ok(
    await acme.http.POST('/v1/customers/{id}/credit-grants', {
      path: { id: other },
      body: { currency: 'INR', category: 'promotional', amount: 777, name: 'Not yours' },
    }),
    201,
  );
});
afterAll(() => t?.close());

describe('portal credits page', () => {
  it('shows the balance, every grant and the draw-downs as the API answers them', async () => {
    const api = (await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: holder } })).body;
    expect(api.balances).toEqual([{ currency: 'INR', paid: 13_000, promotional: 0 }]);
    const res = await page('/portal/credits', await signInAs(holder));
    expect(res.status).toBe(200);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    const html = res.text;

    expect(row(html, 'credit-balance', 'INR')).toEqual(['INR', rupees(13_000), rupees(0), rupees(13_000)]);
    expect(api.data).toHaveLength(2);
    for (const g of api.data as { id: string; amount: number; remaining: number; status: string }[]) {
      const cells = row(html, 'credit-grant', g.id)!;
      expect(cells, g.id).toBeDefined();
      expect(cells[2]).toBe(g.status);
      expect(cells[4]).toBe(rupees(g.amount));
      expect(cells[5]).toBe(rupees(g.remaining));
    }
    expect(row(html, 'credit-grant', promo.id)).toEqual([
      'Launch &lt;offer&gt;',
      'Promotional',
      'depleted',
      '01 Apr 2026',
      rupees(3_000),
      rupees(0),
      '31 Dec 2026',
    ]);
    expect(row(html, 'credit-grant', paid.id)).toEqual(['Top-up', 'Paid (top-up)', 'active', '01 Apr 2026', rupees(20_000), rupees(13_000), 'Never']);
    expect(html).not.toContain('Launch <offer>');

    // Draw-downs: the statement's credit_drawn rows, one per source, both on the same invoice.
    const statement = (await acme.http.GET('/v1/customers/{id}/balance-transactions', { path: { id: holder }, query: { limit: 100 } })).body.data as {
      id: string;
      type: string;
      amount: number;
      document: { id: string; number: string };
    }[];
    const draws = statement.filter((r) => r.type === 'credit_drawn');
    expect(draws.map((d) => d.amount).sort((a, b) => a - b)).toEqual([-7_000, -3_000]);
    for (const d of draws) {
      expect(d.document.id).toBe(drawn.id);
      const cells = row(html, 'credit-draw', d.id)!;
      expect(cells.slice(0, 2)).toEqual(['05 Apr 2026', drawn.number]);
      expect(cells[3]).toBe(rupees(-d.amount));
    }
    expect(html.match(/data-credit-draw=/g)).toHaveLength(2);
  });

  it("never shows another customer's credits: the page is the signed-in customer's own", async () => {
    const html = (await page(`/portal/credits?customer_id=${holder}`, await signInAs(other))).text;
    const theirs = (await acme.http.GET('/v1/customers/{id}/credit-grants', { path: { id: other } })).body.data as { id: string }[];
    expect(theirs).toHaveLength(1);
    expect(row(html, 'credit-grant', theirs[0]!.id)?.[0]).toBe('Not yours');
    expect(html).not.toContain(promo.id);
    expect(html).not.toContain(paid.id);
    expect(html).not.toContain('data-credit-draw=');
    expect(row(html, 'credit-balance', 'INR')).toEqual(['INR', rupees(0), rupees(777), rupees(777)]);
  });

  it('sends a visitor without a session to sign in', async () => {
    for (const url of ['/portal/credits', '/portal/features']) {
      const res = await page(url);
      expect(res.status, url).toBe(303);
      expect(res.headers.location).toBe('/portal');
    }
  });

  it('is linked from the dashboard', async () => {
    const html = (await page('/portal', await signInAs(holder))).text;
    expect(html).toContain('<a href="/portal/credits">Prepaid credits</a>');
    expect(html).toContain('<a href="/portal/features">Features</a>');
  });
});

describe('portal features page', () => {
  it("shows the customer's entitlements as GET /v1/customers/{id}/entitlements answers them", async () => {
    const api = (await acme.http.GET('/v1/customers/{id}/entitlements', { path: { id: holder } })).body.data;
    expect(api.features).toEqual({ sso: true, projects: 5, api_calls: null, support: 'priority', audit_log: false });
    const html = (await page('/portal/features', await signInAs(holder))).text;
    expect(row(html, 'feature', 'sso')).toEqual(['Single sign-on', 'Included']);
    expect(row(html, 'feature', 'projects')).toEqual(['Projects', 'Up to 5']);
    expect(row(html, 'feature', 'api_calls')).toEqual(['API calls', 'Unlimited']);
    expect(row(html, 'feature', 'support')).toEqual(['Support &lt;tier&gt;', 'priority']);
    expect(row(html, 'feature', 'audit_log')).toEqual(['Audit log', 'Not included']);
    expect(html).not.toContain('features-blocked');
  });

  it('shows a customer without a subscription that nothing is included', async () => {
    const api = (await acme.http.GET('/v1/customers/{id}/entitlements', { path: { id: other } })).body.data;
    expect(api.features).toEqual({ sso: false, projects: 0, api_calls: 0, support: null, audit_log: false });
    const html = (await page('/portal/features', await signInAs(other))).text;
    for (const key of ['sso', 'projects', 'api_calls', 'support', 'audit_log']) expect(row(html, 'feature', key)?.[1], key).toBe('Not included');
  });
});
