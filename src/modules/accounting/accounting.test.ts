import { XMLParser } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetryJobAt } from '../../platform/jobs/jobs.js';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { gstinFor } from '../../../test/support/billing.js';
import {
  bindingCookieOf,
  connectThroughBrowser,
  QBO_REALM,
  startAccountingSandbox,
  XERO_TENANT,
  ZOHO_ORG,
  type AccountingSandbox,
  type RecordedRequest,
} from '../../../test/support/accounting-sandbox.js';
import { accessTokenFor } from './index.js';
import { majorUnitsText } from './amounts.js';
import { zoneOf } from './dates.js';
import { localDay } from '../tax/index.js';
import { taxKey } from './providers/provider.js';
import { customerMaster } from './tally.js';
import type { Customer } from '../customers/index.js';

let sandbox: AccountingSandbox;
let t: TestKosh;
let acme: Tenant;
let other: Tenant;
let kaCustomer: string;
let mhCustomer: string;
let intraInvoice: { id: string; number: string | null };
let interInvoice: { id: string; number: string | null };
let tdsPayment: string;
let creditNote: string;
const connections: Record<string, string> = {};

const since = (mark: number, filter: (r: RecordedRequest) => boolean) => sandbox.requests.slice(mark).filter(filter);
const body = (r: RecordedRequest | undefined) => r?.body as any; // eslint-disable-line @typescript-eslint/no-explicit-any

async function syncAndDrain(tenant: Tenant, connectionId: string) {
  const res = await tenant.http.POST('/v1/accounting/sync', { body: { connection_id: connectionId } });
  expect(res.status, res.text).toBe(202);
  await t.kosh.worker.drain();
  return res.body.data[0]!.id;
}

async function status(tenant: Tenant, query: { connection_id?: string; record_type?: 'customer' } = {}) {
  const res = await tenant.http.GET('/v1/accounting/sync-status', { query: { limit: 1000, ...query } });
  expect(res.status, res.text).toBe(200);
  return res.body;
}

beforeAll(async () => {
  sandbox = await startAccountingSandbox();
  t = await startTestKosh({ env: sandbox.env() });
  // Acme books from Karnataka (29).
  acme = await t.registerTenant({ state_code: '29', gstin: gstinFor('29') });
  other = await t.registerTenant();

  const ka = await acme.http.POST('/v1/customers', {
    body: {
      email: 'ka@buyer.in',
      name: 'Bengaluru Buyer',
      gstin: gstinFor('29', 'BBBBB2222B1Z'),
      billing_address: { line1: '1 MG Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
    },
  });
  const mh = await acme.http.POST('/v1/customers', { body: { email: 'mh@buyer.in', name: 'Mumbai Buyer', gstin: gstinFor('27', 'CCCCC3333C1Z') } });
  kaCustomer = ka.body.data.id;
  mhCustomer = mh.body.data.id;
  const invoice = async (customer_id: string) => {
    const res = await acme.http.POST('/v1/invoices', {
      body: {
        customer_id,
        currency: 'INR',
        lines: [{ description: 'Pro plan', quantity: 2, unit_amount: 50_000, hsn_code: '998314' }],
      },
    });
    expect(res.status, res.text).toBe(201);
    return res.body.data;
  };
  intraInvoice = await invoice(kaCustomer);
  interInvoice = await invoice(mhCustomer);
  const pay = await acme.http.POST('/v1/payments/offline', {
    body: {
      customer_id: kaCustomer,
      invoice_id: intraInvoice.id,
      payment_type: 'bank_transfer',
      amount: 108_000,
      tds_amount: 10_000,
      reference_number: 'UTR0001',
    },
  });
  expect(pay.status, pay.text).toBe(201);
  tdsPayment = pay.body.data.id;
  const note = await acme.http.POST('/v1/credit-notes', {
    body: { customer_id: mhCustomer, invoice_id: interInvoice.id, amount: 11_800, reason: 'Service credit' },
  });
  expect(note.status, note.text).toBe(201);
  creditNote = note.body.data.id;
});
afterAll(async () => {
  await t?.close();
  await sandbox?.close();
});

describe('accounting connections', () => {
  describe('POST /v1/accounting/connect/{provider}', () => {
    it('answers an authorization URL with PKCE S256, the provider scopes and a single-use state', async () => {
      const res = await acme.http.POST('/v1/accounting/connect/{provider}', {
        path: { provider: 'quickbooks' },
        body: { redirect_uri: 'https://kosh.example.com/dashboard/done', state: 'abc' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body).toMatchObject({ provider: 'quickbooks', expires_in: 600 });
      const url = new URL(res.body.auth_url);
      expect(`${url.origin}${url.pathname}`).toBe(`${sandbox.oauthUrl}/authorize`);
      expect(Object.fromEntries(url.searchParams)).toMatchObject({
        response_type: 'code',
        client_id: 'qbo-client',
        redirect_uri: 'https://kosh.example.com/v1/accounting/callback/quickbooks',
        scope: 'com.intuit.quickbooks.accounting',
        code_challenge_method: 'S256',
      });
      expect(url.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
      // The provider sees Kosh's state (tenant-scoped, random), never the caller's.
      expect(url.searchParams.get('state')).toMatch(new RegExp(`^${acme.tenantId}\\.[A-Za-z0-9_-]{43}$`));
    });

    it('asks Xero for offline_access and accounting scopes, Zoho for offline access on the .in accounts domain', async () => {
      const xero = new URL((await acme.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'xero' }, body: {} })).body.auth_url);
      expect(xero.searchParams.get('scope')?.split(' ')).toEqual(expect.arrayContaining(['offline_access', 'accounting.transactions', 'accounting.contacts']));
      const zoho = new URL((await acme.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'zoho_books' } })).body.auth_url);
      expect(zoho.searchParams.get('access_type')).toBe('offline');
      expect(zoho.searchParams.get('scope')).toContain('ZohoBooks.invoices.ALL');
    });

    it('refuses an unknown provider with 400', async () => {
      const res = await acme.api('POST', '/v1/accounting/connect/freshbooks', {});
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    });

    it('refuses a redirect_uri that is not an http(s) URL', async () => {
      const res = await acme.api('POST', '/v1/accounting/connect/xero', { redirect_uri: 'javascript:alert(1)' });
      expect(res.status).toBe(400);
    });

    it.each(['https://evil.example/steal', 'http://kosh.example.com/dashboard', 'https://kosh.example.com.evil.example/x', 'https://kosh.example.com:8443/x'])(
      'refuses a redirect_uri off KOSH_PUBLIC_URL’s origin (%s) with 400: no open redirect',
      async (redirect_uri) => {
        const res = await acme.api('POST', '/v1/accounting/connect/xero', { redirect_uri });
        expect(res.status, res.text).toBe(400);
        expect(res.body.error.details).toEqual([{ field: 'redirect_uri', message: 'must be on https://kosh.example.com (KOSH_PUBLIC_URL)' }]);
      },
    );

    it('sets the browser binding as an HttpOnly, SameSite=Lax, Secure cookie scoped to the provider’s callback', async () => {
      const res = await acme.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'xero' }, body: {} });
      expect(String(res.headers['set-cookie'])).toMatch(
        /^kosh_oauth_xero=[A-Za-z0-9_-]{43}; Path=\/v1\/accounting\/callback\/xero; Max-Age=600; HttpOnly; SameSite=Lax; Secure$/,
      );
    });
  });

  describe('GET /v1/accounting/callback/{provider}', () => {
    it('exchanges the code with the PKCE verifier, stores the QuickBooks realm and redirects back with the caller’s state', async () => {
      const mark = sandbox.tokenRequests.length;
      const { location, callback } = await connectThroughBrowser(t, acme, 'quickbooks', {
        redirect_uri: 'https://kosh.example.com/dashboard/settings/accounting',
        state: 'csrf-123',
      });
      expect(`${location.origin}${location.pathname}`).toBe('https://kosh.example.com/dashboard/settings/accounting');
      expect(location.searchParams.get('state')).toBe('csrf-123');
      expect(location.searchParams.get('status')).toBe('connected');
      connections.quickbooks = location.searchParams.get('connection_id')!;
      const token = sandbox.tokenRequests[mark]!;
      expect(token.grant_type).toBe('authorization_code');
      expect(token.code_verifier).toMatch(/^[A-Za-z0-9_-]{43}$/); // the mock server checked it against the challenge
      expect(token.authorization).toBe(`Basic ${Buffer.from('qbo-client:qbo-secret').toString('base64')}`);
      expect(callback.searchParams.get('realmId')).toBe(QBO_REALM);

      const list = await acme.http.GET('/v1/accounting/connections');
      expect(list.body.data).toEqual([
        expect.objectContaining({ id: connections.quickbooks, provider: 'quickbooks', status: 'active', external_tenant_id: QBO_REALM }),
      ]);
      expect(list.text).not.toMatch(/access_token|refresh_token|eyJ/);
    });

    it('picks the Xero organisation from the connections endpoint and the Zoho Books organization', async () => {
      const xero = await connectThroughBrowser(t, acme, 'xero');
      connections.xero = xero.location.searchParams.get('connection_id')!;
      const zoho = await connectThroughBrowser(t, acme, 'zoho_books');
      connections.zoho_books = zoho.location.searchParams.get('connection_id')!;
      expect(sandbox.tokenRequests.at(-1)!.client_id).toBe('zoho-client'); // Zoho: client credentials in the body
      const list = (await acme.http.GET('/v1/accounting/connections')).body.data;
      expect(list).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ id: connections.xero, provider: 'xero', external_tenant_id: XERO_TENANT, external_tenant_name: 'Demo Company (IN)' }),
          expect.objectContaining({ id: connections.zoho_books, provider: 'zoho_books', external_tenant_id: ZOHO_ORG }),
        ]),
      );
    });

    it('refuses a used, expired, foreign or forged state with 400 and stores nothing', async () => {
      const count = async () => (await acme.http.GET('/v1/accounting/connections')).body.total_count;
      const before = await count();
      const { callback } = await connectThroughBrowser(t, acme, 'xero');
      const replay = await t.call({ method: 'GET', url: `${callback.pathname}${callback.search}` });
      expect(replay.status).toBe(400);
      expect(replay.body.error.reason).toBe('invalid_state');

      // Issued for QuickBooks, presented at Xero's callback.
      const qbo = await acme.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'quickbooks' }, body: {} });
      const state = new URL(qbo.body.auth_url).searchParams.get('state')!;
      expect((await t.call({ method: 'GET', url: `/v1/accounting/callback/xero?code=x&state=${encodeURIComponent(state)}` })).status).toBe(400);
      // Another tenant's id with this state's secret.
      const forged = `${other.tenantId}.${state.split('.')[1]}`;
      expect((await t.call({ method: 'GET', url: `/v1/accounting/callback/quickbooks?code=x&state=${encodeURIComponent(forged)}` })).status).toBe(400);
      expect((await t.call({ method: 'GET', url: '/v1/accounting/callback/quickbooks?code=x&state=garbage' })).status).toBe(400);
      expect((await t.call({ method: 'GET', url: '/v1/accounting/callback/quickbooks?code=x' })).status).toBe(400);

      const late = await acme.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'zoho_books' }, body: {} });
      t.clock.advance(601_000);
      const lateState = new URL(late.body.auth_url).searchParams.get('state')!;
      const expired = await t.call({ method: 'GET', url: `/v1/accounting/callback/zoho_books?code=x&state=${encodeURIComponent(lateState)}` });
      expect(expired.status).toBe(400);
      expect(await count()).toBe(before); // the xero one reconnected the same organisation
    });

    it('refuses with 403 a callback from another browser than the one that started (RFC 6749 §10.12), and connects nothing', async () => {
      const before = (await other.http.GET('/v1/accounting/connections')).body.total_count;
      const tokens = sandbox.tokenRequests.length;
      const stranger = bindingCookieOf(await acme.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'quickbooks' }, body: {} })); // another flow's binding
      for (const cookie of [undefined, stranger, 'kosh_oauth_quickbooks=forged']) {
        // The attacker starts a connection for their tenant and sends the authorization link to a
        // victim, whose browser consents at the provider and follows the redirect to Kosh.
        const attacker = await other.http.POST('/v1/accounting/connect/{provider}', { path: { provider: 'quickbooks' }, body: { state: 'lure' } });
        const consent = await fetch(attacker.body.auth_url, { redirect: 'manual' });
        const callback = new URL(consent.headers.get('location')!);
        const res = await t.call({ method: 'GET', url: `${callback.pathname}${callback.search}`, headers: cookie ? { cookie } : {} });
        expect(res.status, res.text).toBe(403);
        expect(res.body.error).toMatchObject({ code: 'unauthorized', reason: 'oauth_binding_mismatch' });
        expect(res.body.error.request_id).toBe(res.headers['x-request-id']);
        expect(res.headers.location).toBeUndefined();
      }
      expect(sandbox.tokenRequests.length).toBe(tokens); // no code was exchanged
      expect((await other.http.GET('/v1/accounting/connections')).body.total_count).toBe(before);
    });

    it('sends the browser back with the provider’s error when the user declines, and stores nothing', async () => {
      const res = await other.http.POST('/v1/accounting/connect/{provider}', {
        path: { provider: 'xero' },
        body: { redirect_uri: 'https://kosh.example.com/back', state: 's1' },
      });
      const state = new URL(res.body.auth_url).searchParams.get('state')!;
      const back = await t.call({
        method: 'GET',
        url: `/v1/accounting/callback/xero?error=access_denied&state=${encodeURIComponent(state)}`,
        headers: { cookie: bindingCookieOf(res) },
      });
      expect(back.status).toBe(302);
      const location = new URL(String(back.headers.location));
      expect(Object.fromEntries(location.searchParams)).toMatchObject({ error: 'access_denied', state: 's1' });
      expect((await other.http.GET('/v1/accounting/connections')).body.total_count).toBe(0);
    });

    it('sends the browser back with an error, never a 500, when the provider’s token endpoint fails', async () => {
      const before = (await acme.http.GET('/v1/accounting/connections')).body.total_count;
      sandbox.errorPage('oauth', 1);
      const { location } = await connectThroughBrowser(t, other, 'xero', { state: 'mine' });
      expect(location.searchParams.get('error')).toBe('connection_failed');
      expect(location.searchParams.get('state')).toBe('mine');
      expect((await other.http.GET('/v1/accounting/connections')).body.total_count).toBe(0);
      expect((await acme.http.GET('/v1/accounting/connections')).body.total_count).toBe(before);
    });
  });
});

describe('accounting sync', () => {
  describe('QuickBooks Online', () => {
    it('pushes customers, invoices with GST tax codes, payments with TDS apart, and credit notes', async () => {
      const mark = sandbox.requests.length;
      await syncAndDrain(acme, connections.quickbooks!);
      const posts = since(mark, (r) => r.provider === 'quickbooks' && r.method === 'POST');
      const customers = posts.filter((r) => r.path.endsWith('/customer'));
      expect(customers).toHaveLength(2);
      const ka = body(customers.find((r) => body(r).PrimaryEmailAddr.Address === 'ka@buyer.in'));
      expect(ka).toMatchObject({
        GSTIN: gstinFor('29', 'BBBBB2222B1Z'),
        GSTRegistrationType: 'GST_REG_REG',
        BillAddr: { Line1: '1 MG Road', City: 'Bengaluru', CountrySubDivisionCode: 'Karnataka', PostalCode: '560001', Country: 'IN' },
      });

      const invoices = posts.filter((r) => r.path.endsWith('/invoice'));
      expect(invoices).toHaveLength(2);
      const intra = body(invoices.find((r) => body(r).DocNumber === intraInvoice.number));
      const kaId = [...sandbox.store.get('quickbooks:customer')!.values()].find(
        (c) => (c.body.PrimaryEmailAddr as { Address: string }).Address === 'ka@buyer.in',
      )!.id;
      // CGST 9% + SGST 9%: QuickBooks India's "GST 18%" group (id 10 in the company), 2 × ₹500 + ₹180 tax.
      expect(intra).toEqual({
        CustomerRef: { value: kaId },
        DocNumber: intraInvoice.number,
        TxnDate: '2026-04-01',
        DueDate: expect.any(String),
        CurrencyRef: { value: 'INR' },
        GlobalTaxCalculation: 'TaxExcluded',
        Line: [
          {
            DetailType: 'SalesItemLineDetail',
            Amount: 1000,
            Description: 'Pro plan',
            SalesItemLineDetail: { ItemRef: { value: '1' }, Qty: 2, UnitPrice: 500, TaxCodeRef: { value: '10' } },
          },
        ],
        TxnTaxDetail: { TotalTax: 180 },
      });
      const inter = body(invoices.find((r) => body(r).DocNumber === interInvoice.number));
      expect(inter.Line[0].SalesItemLineDetail.TaxCodeRef).toEqual({ value: '11' }); // IGST 18%
      expect(inter.TxnTaxDetail).toEqual({ TotalTax: 180 });
      expect(invoices.every((r) => r.headers.authorization?.toString().startsWith('Bearer ') && r.query.requestid && r.query.minorversion)).toBe(true);

      const payments = posts.filter((r) => r.path.endsWith('/payment')).map(body);
      const invoiceQboId = [...sandbox.store.get('quickbooks:invoice')!.values()].find((i) => i.body.DocNumber === intraInvoice.number)!.id;
      expect(payments).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            TotalAmt: 1080,
            DepositToAccountRef: { value: '35' },
            PaymentRefNum: 'UTR0001',
            Line: [{ Amount: 1080, LinkedTxn: [{ TxnId: invoiceQboId, TxnType: 'Invoice' }] }],
          }),
          expect.objectContaining({ TotalAmt: 100, DepositToAccountRef: { value: '92' }, PaymentRefNum: 'TDS UTR0001' }),
        ]),
      );
      const memo = body(posts.find((r) => r.path.endsWith('/creditmemo')));
      expect(memo).toMatchObject({
        Line: [{ Amount: 100, SalesItemLineDetail: { Qty: 1, UnitPrice: 100, TaxCodeRef: { value: '11' } } }],
        TxnTaxDetail: { TotalTax: 18 },
      });

      const s = await status(acme, { connection_id: connections.quickbooks });
      expect(s.data.every((r) => r.status === 'synced' && r.external_id)).toBe(true);
      expect(s.data.map((r: { record_type: string }) => r.record_type).sort()).toEqual([
        'credit_note',
        'customer',
        'customer',
        'invoice',
        'invoice',
        'payment',
        'payment_tds',
      ]);
      expect(s.runs[0]).toMatchObject({ status: 'succeeded', synced: 7, failed: 0 });
    });

    it('re-syncs idempotently: nothing unchanged is sent, a change is an update with the SyncToken', async () => {
      const mark = sandbox.requests.length;
      await syncAndDrain(acme, connections.quickbooks!);
      expect(since(mark, (r) => r.provider === 'quickbooks' && r.method === 'POST')).toEqual([]);

      expect((await acme.http.PUT('/v1/customers/{id}', { path: { id: kaCustomer }, body: { name: 'Bengaluru Buyer Pvt Ltd' } })).status).toBe(200);
      // Someone also edited the customer in QuickBooks: our SyncToken is stale (fault 5010).
      const stored = [...sandbox.store.get('quickbooks:customer')!.values()].find(
        (c) => (c.body.PrimaryEmailAddr as { Address: string }).Address === 'ka@buyer.in',
      )!;
      stored.version += 1;
      const mark2 = sandbox.requests.length;
      await syncAndDrain(acme, connections.quickbooks!);
      const updates = since(mark2, (r) => r.provider === 'quickbooks' && r.method === 'POST').map(body);
      expect(updates).toHaveLength(2); // the stale attempt, then the retry with the fresh token
      expect(updates[1]).toMatchObject({ Id: stored.id, SyncToken: '1', sparse: true, CompanyName: 'Bengaluru Buyer Pvt Ltd' });
      expect(sandbox.store.get('quickbooks:customer')!.size).toBe(2);
    });

    it('reschedules the job at Retry-After when QuickBooks answers 429, then finishes', async () => {
      expect((await acme.http.PUT('/v1/customers/{id}', { path: { id: mhCustomer }, body: { name: 'Mumbai Buyer LLP' } })).status).toBe(200);
      sandbox.rateLimit('quickbooks', 1, 30);
      const runId = await syncAndDrain(acme, connections.quickbooks!);
      let s = await status(acme, { connection_id: connections.quickbooks });
      expect(s.runs.find((r: { id: string }) => r.id === runId)).toMatchObject({ status: 'rate_limited' });
      t.clock.advance(30_000);
      await t.kosh.worker.drain();
      s = await status(acme, { connection_id: connections.quickbooks });
      expect(s.runs.find((r: { id: string }) => r.id === runId)).toMatchObject({ status: 'succeeded' });
      expect(sandbox.store.get('quickbooks:customer')!.size).toBe(2);
    });

    it('runs one sync of a connection at a time: a second run waits instead of creating records twice', async () => {
      const fresh = await acme.http.POST('/v1/customers', { body: { email: 'new@buyer.in', name: 'New Buyer' } });
      const mark = sandbox.requests.length;
      const first = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connections.quickbooks } });
      const second = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connections.quickbooks } });
      await t.kosh.worker.drain();
      t.clock.advance(30_000);
      await t.kosh.worker.drain();
      const created = since(mark, (r) => r.path.endsWith('/customer') && body(r).PrimaryEmailAddr?.Address === 'new@buyer.in');
      expect(created).toHaveLength(1);
      const runs = await t.kosh.deps.db
        .selectFrom('accounting_sync_runs')
        .selectAll()
        .where('tenant_id', '=', acme.tenantId)
        .where('id', 'in', [first.body.data[0]!.id, second.body.data[0]!.id])
        .execute();
      expect(runs.map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
      expect(runs.map((r) => r.synced).sort()).toEqual([0, 1]);
      expect(fresh.status).toBe(201);
    });

    it('keeps a provider error page out of the API: the run records the error and the job retries', async () => {
      expect((await acme.http.PUT('/v1/customers/{id}', { path: { id: mhCustomer }, body: { name: 'Mumbai Buyer Ltd' } })).status).toBe(200);
      sandbox.errorPage('quickbooks', 1);
      const runId = await syncAndDrain(acme, connections.quickbooks!);
      let run = (await status(acme, { connection_id: connections.quickbooks })).runs.find((r: { id: string }) => r.id === runId);
      expect(run).toMatchObject({ status: 'running', last_error: expect.stringContaining('502') });
      t.clock.advance(5_000);
      await t.kosh.worker.drain();
      run = (await status(acme, { connection_id: connections.quickbooks })).runs.find((r: { id: string }) => r.id === runId);
      expect(run).toMatchObject({ status: 'succeeded', last_error: null });
      const record = (await status(acme, { connection_id: connections.quickbooks, record_type: 'customer' })).data.find(
        (r: { record_id: string }) => r.record_id === mhCustomer,
      );
      expect(record).toMatchObject({ status: 'synced', last_error: null });
      expect([...sandbox.store.get('quickbooks:customer')!.values()].map((c) => c.body.CompanyName)).toContain('Mumbai Buyer Ltd');
    });
  });

  describe('Xero', () => {
    it('pushes contacts and ACCREC invoices with the tenant header, Kosh’s GST amounts and an Idempotency-Key', async () => {
      const mark = sandbox.requests.length;
      await syncAndDrain(acme, connections.xero!);
      const calls = since(mark, (r) => r.provider === 'xero' && r.path.startsWith('/api.xro'));
      expect(calls.every((r) => r.headers['xero-tenant-id'] === XERO_TENANT && typeof r.headers['idempotency-key'] === 'string')).toBe(true);
      const invoices = calls.filter((r) => r.path.endsWith('/Invoices')).map((r) => body(r).Invoices[0]);
      const intra = invoices.find((i) => i.InvoiceNumber === intraInvoice.number);
      expect(intra).toEqual({
        Type: 'ACCREC',
        Contact: { ContactID: expect.any(String) },
        InvoiceNumber: intraInvoice.number,
        Reference: 'Place of supply: 29-Karnataka',
        Date: '2026-04-01',
        DueDate: expect.any(String),
        CurrencyCode: 'INR',
        LineAmountTypes: 'Exclusive',
        Status: 'AUTHORISED',
        LineItems: [{ Description: 'Pro plan', Quantity: 2, UnitAmount: 500, LineAmount: 1000, AccountCode: '200', TaxType: 'OUTPUT', TaxAmount: 180 }],
      });
      expect(invoices.find((i) => i.InvoiceNumber === interInvoice.number)!.Reference).toBe('Place of supply: 27-Maharashtra');
      const payments = calls.filter((r) => r.path.endsWith('/Payments'));
      expect(payments.every((r) => r.method === 'PUT')).toBe(true);
      expect(payments.map((r) => body(r).Payments[0])).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ Account: { Code: '090' }, Amount: 1080 }),
          expect.objectContaining({ Account: { Code: '820' }, Amount: 100, Reference: 'TDS UTR0001' }),
        ]),
      );
      expect(calls.find((r) => r.path.endsWith('/CreditNotes'))).toBeDefined();
    });

    it('maps GST classes to the tenant’s tax codes (PUT tax-mapping) and re-sends what changed', async () => {
      const res = await acme.http.PUT('/v1/accounting/connections/{id}/tax-mapping', {
        path: { id: connections.xero! },
        body: {
          tax_codes: { 'intra_state:18': 'GSTONINCOME18' },
          accounts: { income: '4000' },
        },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.tax_mapping.tax_codes).toMatchObject({ 'intra_state:18': 'GSTONINCOME18', 'inter_state:18': 'OUTPUT' });
      expect(res.body.data.tax_mapping.accounts).toEqual({ income: '4000', bank: '090', tds_receivable: '820' });
      const mark = sandbox.requests.length;
      await syncAndDrain(acme, connections.xero!);
      const invoices = since(mark, (r) => r.path.endsWith('/Invoices')).map((r) => body(r).Invoices[0]);
      const intra = invoices.find((i) => i.InvoiceNumber === intraInvoice.number);
      expect(intra.InvoiceID).toBe([...sandbox.store.get('xero:Invoices')!.values()].find((i) => i.body.InvoiceNumber === intraInvoice.number)!.id); // an update
      expect(intra.LineItems[0]).toMatchObject({ TaxType: 'GSTONINCOME18', AccountCode: '4000' });
      expect(sandbox.store.get('xero:Invoices')!.size).toBe(2);
      expect(since(mark, (r) => r.path.endsWith('/Payments'))).toEqual([]); // payments are never edited
    });

    it('marks the connection error when Xero refuses the access token, and a new consent makes it active again', async () => {
      expect((await acme.http.PUT('/v1/customers/{id}', { path: { id: kaCustomer }, body: { phone: '+91 80 1234 5678' } })).status).toBe(200);
      sandbox.refuseAccess('xero', 1);
      const runId = await syncAndDrain(acme, connections.xero!);
      const connection = (await acme.http.GET('/v1/accounting/connections')).body.data.find((c: { id: string }) => c.id === connections.xero);
      expect(connection).toMatchObject({ status: 'error', last_error: expect.stringContaining('Unauthorized') });
      expect((await status(acme, { connection_id: connections.xero })).runs.find((r: { id: string }) => r.id === runId)).toMatchObject({ status: 'failed' });
      const events = await acme.http.GET('/v1/events', { query: { type: 'accounting.connection_failed' } });
      expect(events.body.data[0]!.data.object).toMatchObject({ id: connections.xero, status: 'error', reason: 'access_refused' });
      expect((await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connections.xero } })).status).toBe(409);

      const again = await connectThroughBrowser(t, acme, 'xero');
      expect(again.location.searchParams.get('connection_id')).toBe(connections.xero);
      expect((await acme.http.GET('/v1/accounting/connections')).body.data.find((c: { id: string }) => c.id === connections.xero)).toMatchObject({
        status: 'active',
        last_error: null,
      });
      await syncAndDrain(acme, connections.xero!);
      const contact = [...sandbox.store.get('xero:Contacts')!.values()].find((c) => c.body.EmailAddress === 'ka@buyer.in')!;
      expect(contact.body.Phones).toEqual([{ PhoneType: 'DEFAULT', PhoneNumber: '+91 80 1234 5678' }]);
      expect(sandbox.store.get('xero:Contacts')!.size).toBe(3);
    });

    it("answers 404 for another tenant's connection", async () => {
      expect((await other.http.PUT('/v1/accounting/connections/{id}/tax-mapping', { path: { id: connections.xero! }, body: { item: 'x' } })).status).toBe(404);
    });
  });

  describe('Zoho Books', () => {
    it('pushes with the organization id, Zoho-oauthtoken, the GST tax group or IGST, place of supply and TDS withheld', async () => {
      const mark = sandbox.requests.length;
      await syncAndDrain(acme, connections.zoho_books!);
      const calls = since(mark, (r) => r.provider === 'zoho_books');
      expect(calls.every((r) => r.query.organization_id === ZOHO_ORG && String(r.headers.authorization).startsWith('Zoho-oauthtoken '))).toBe(true);
      const invoices = calls.filter((r) => r.path === '/books/v3/invoices');
      expect(invoices.every((r) => r.query.ignore_auto_number_generation === 'true')).toBe(true);
      const intra = body(invoices.find((r) => body(r).invoice_number === intraInvoice.number));
      expect(intra).toEqual({
        customer_id: expect.any(String),
        invoice_number: intraInvoice.number,
        date: '2026-04-01',
        due_date: expect.any(String),
        currency_code: 'INR',
        place_of_supply: 'KA',
        gst_treatment: 'business_gst',
        gst_no: gstinFor('29', 'BBBBB2222B1Z'),
        is_inclusive_tax: false,
        line_items: [{ description: 'Pro plan', quantity: 2, rate: 500, hsn_or_sac: '998314', tax_id: '982000000566007' }],
      });
      const inter = body(invoices.find((r) => body(r).invoice_number === interInvoice.number));
      expect(inter).toMatchObject({ place_of_supply: 'MH', line_items: [{ tax_id: '982000000566013' }] });
      const payment = body(calls.find((r) => r.path === '/books/v3/customerpayments'));
      expect(payment).toMatchObject({ amount: 1080, reference_number: 'UTR0001', invoices: [{ amount_applied: 1080, tax_amount_withheld: 100 }] });
      const contact = body(calls.find((r) => r.path === '/books/v3/contacts' && body(r).gst_no === gstinFor('29', 'BBBBB2222B1Z')));
      expect(contact).toMatchObject({ contact_type: 'customer', gst_treatment: 'business_gst', place_of_contact: 'KA' });
    });
  });
});

describe('accounting tokens', () => {
  it('refreshes an expiring token once, even when two workers need it at the same moment', async () => {
    t.clock.advance(3_600_000); // the access tokens (1 h) are now expired
    const row = await t.kosh.deps.db
      .selectFrom('accounting_connections')
      .selectAll()
      .where('tenant_id', '=', acme.tenantId)
      .where('id', '=', connections.quickbooks!)
      .executeTakeFirstOrThrow();
    const env = { db: t.kosh.deps.db, clock: t.clock, config: t.config, secrets: t.kosh.deps.secrets };
    const refreshesBefore = sandbox.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length;
    const [a, b] = await Promise.allSettled([accessTokenFor({ ...env }, row), accessTokenFor({ ...env }, row)]);
    const refreshes = sandbox.tokenRequests.filter((r) => r.grant_type === 'refresh_token');
    expect(refreshes.length - refreshesBefore).toBe(1);
    const tokens = [a, b].filter((r) => r.status === 'fulfilled').map((r) => (r as PromiseFulfilledResult<string>).value);
    const waiting = [a, b].filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
    expect(tokens.length).toBeGreaterThan(0);
    expect(waiting.every((e) => e instanceof RetryJobAt)).toBe(true);
    // The one that waited comes back and finds the new token: still one refresh.
    t.clock.advance(5_000);
    expect(await accessTokenFor(env, row)).toBe(tokens[0]);
    expect(sandbox.tokenRequests.filter((r) => r.grant_type === 'refresh_token').length - refreshesBefore).toBe(1);
    expect(refreshes.at(-1)!.refresh_token).toBeDefined();
  });

  it('marks the connection reconnect_required on invalid_grant, pauses sync and emits accounting.connection_failed', async () => {
    t.clock.advance(3_600_000);
    sandbox.refuseRefresh = true;
    try {
      const runId = await syncAndDrain(acme, connections.zoho_books!);
      const list = (await acme.http.GET('/v1/accounting/connections')).body.data;
      expect(list.find((c: { id: string }) => c.id === connections.zoho_books)).toMatchObject({
        status: 'reconnect_required',
        last_error: expect.stringContaining('invalid_grant'),
      });
      const s = await status(acme, { connection_id: connections.zoho_books });
      expect(s.runs.find((r: { id: string }) => r.id === runId)).toMatchObject({ status: 'paused' });
      const events = await acme.http.GET('/v1/events', { query: { type: 'accounting.connection_failed' } });
      expect(events.body.data[0]!.data.object).toMatchObject({ id: connections.zoho_books, status: 'reconnect_required', reason: 'invalid_grant' });
      const again = await acme.http.POST('/v1/accounting/sync', { body: { connection_id: connections.zoho_books } });
      expect(again.status).toBe(409);
    } finally {
      sandbox.refuseRefresh = false;
    }
  });
});

describe('DELETE /v1/accounting/connections/{id}', () => {
  it("answers 404 for another tenant's connection and leaves it", async () => {
    expect((await other.http.DELETE('/v1/accounting/connections/{id}', { path: { id: connections.quickbooks! } })).status).toBe(404);
    expect((await acme.http.GET('/v1/accounting/connections')).body.data.map((c: { id: string }) => c.id)).toContain(connections.quickbooks);
  });

  it('disconnects and revokes the refresh token at the provider', async () => {
    const res = await acme.http.DELETE('/v1/accounting/connections/{id}', { path: { id: connections.quickbooks! } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({ id: connections.quickbooks, deleted: true });
    const mark = sandbox.requests.length;
    await t.kosh.worker.drain();
    const revoke = since(mark, (r) => r.path === '/qbo/revoke')[0];
    expect(body(revoke).token).toEqual(expect.any(String));
    expect(revoke!.headers.authorization).toBe(`Basic ${Buffer.from('qbo-client:qbo-secret').toString('base64')}`);
    expect((await acme.http.GET('/v1/accounting/connections')).body.data.map((c: { id: string }) => c.id)).not.toContain(connections.quickbooks);
  });
});

describe('GET /v1/accounting/export/tally', () => {
  const parser = new XMLParser({ ignoreAttributes: false, parseTagValue: false, isArray: (name) => ['TALLYMESSAGE', 'ALLLEDGERENTRIES.LIST'].includes(name) });

  it('streams Tally XML whose Sales, Receipt and Credit Note vouchers balance, with CGST/SGST or IGST ledgers', async () => {
    const res = await acme.http.GET('/v1/accounting/export/tally', { query: { from: '2026-04-01', to: '2026-04-30' } });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('application/xml');
    const doc = parser.parse(res.text);
    expect(doc.ENVELOPE.HEADER.TALLYREQUEST).toBe('Import Data');
    const messages = doc.ENVELOPE.BODY.IMPORTDATA.REQUESTDATA.TALLYMESSAGE as Record<string, any>[]; // eslint-disable-line @typescript-eslint/no-explicit-any
    const vouchers = messages.filter((m) => m.VOUCHER).map((m) => m.VOUCHER);
    expect(vouchers.map((v) => v.VOUCHERTYPENAME).sort()).toEqual(['Credit Note', 'Receipt', 'Sales', 'Sales']);
    for (const v of vouchers) {
      const cents = v['ALLLEDGERENTRIES.LIST'].reduce((sum: number, e: { AMOUNT: string }) => sum + Math.round(Number(e.AMOUNT) * 100), 0);
      expect(cents, `${v.VOUCHERTYPENAME} ${v.VOUCHERNUMBER} balances`).toBe(0);
    }
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const entries = (v: Record<string, any>) =>
      Object.fromEntries(v['ALLLEDGERENTRIES.LIST'].map((e: { LEDGERNAME: string; AMOUNT: string }) => [e.LEDGERNAME, e.AMOUNT]));
    const intra = vouchers.find((v) => v.VOUCHERNUMBER === intraInvoice.number)!;
    expect(intra).toMatchObject({
      DATE: '20260401',
      PARTYLEDGERNAME: 'Bengaluru Buyer Pvt Ltd (ka@buyer.in)',
      PLACEOFSUPPLY: 'Karnataka',
      '@_VCHTYPE': 'Sales',
      '@_REMOTEID': `kosh-${intraInvoice.id}`,
    });
    expect(entries(intra)).toEqual({ 'Bengaluru Buyer Pvt Ltd (ka@buyer.in)': '-1180.00', Sales: '1000.00', 'Output CGST': '90.00', 'Output SGST': '90.00' });
    const inter = vouchers.find((v) => v.VOUCHERNUMBER === interInvoice.number)!;
    expect(entries(inter)).toEqual({ 'Mumbai Buyer Ltd (mh@buyer.in)': '-1180.00', Sales: '1000.00', 'Output IGST': '180.00' });
    const receipt = vouchers.find((v) => v.VOUCHERTYPENAME === 'Receipt')!;
    expect(entries(receipt)).toEqual({ Bank: '-1080.00', 'TDS Receivable': '-100.00', 'Bengaluru Buyer Pvt Ltd (ka@buyer.in)': '1180.00' });
    expect(receipt['@_REMOTEID']).toBe(`kosh-${tdsPayment}`);
    const credit = vouchers.find((v) => v.VOUCHERTYPENAME === 'Credit Note')!;
    expect(entries(credit)).toEqual({ 'Mumbai Buyer Ltd (mh@buyer.in)': '118.00', Sales: '-100.00', 'Output IGST': '-18.00' });
    expect(credit['@_REMOTEID']).toBe(`kosh-${creditNote}`);
    const ledgers = messages.filter((m) => m.LEDGER).map((m) => m.LEDGER['@_NAME']);
    expect(ledgers).toEqual(
      expect.arrayContaining(['Sales', 'Output CGST', 'Output SGST', 'Output IGST', 'TDS Receivable', 'Bengaluru Buyer Pvt Ltd (ka@buyer.in)']),
    );
  });

  it('exports nothing outside the range, and refuses a bad range with 400', async () => {
    const empty = await acme.http.GET('/v1/accounting/export/tally', { query: { from: '2025-01-01', to: '2025-01-31' } });
    expect(empty.status).toBe(200);
    expect(empty.text).not.toContain('<VOUCHER ');
    for (const q of [
      'from=2026-04-30&to=2026-04-01',
      'from=2026-04-01',
      'from=yesterday&to=2026-04-01',
      'from=2020-01-01&to=2026-01-01',
      'from=2026-02-30&to=2026-03-01',
    ]) {
      const res = await acme.api('GET', `/v1/accounting/export/tally?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body.error.code).toBe('validation_failed');
    }
  });

  it("shows another tenant nothing of this tenant's books", async () => {
    const res = await other.http.GET('/v1/accounting/export/tally', { query: { from: '2026-04-01', to: '2026-04-30' } });
    expect(res.text).not.toContain('<VOUCHER ');
  });

  describe('party ledgers', () => {
    const ledgerOf = (customer: Partial<Customer>) =>
      parser.parse(
        `<ENVELOPE>${customerMaster({ name: null, gstin: null, sez: false, billing_address: null, email: 'p@example.com', ...customer } as Customer)}</ENVELOPE>`,
      ).ENVELOPE.TALLYMESSAGE[0].LEDGER;

    it('marks an SEZ unit Regular with ISSEZPARTY, a domestic registered party Regular without it', () => {
      expect(ledgerOf({ gstin: '29AABCS1234F1Z5', sez: true })).toMatchObject({
        PARTYGSTIN: '29AABCS1234F1Z5',
        GSTREGISTRATIONTYPE: 'Regular',
        ISSEZPARTY: 'Yes',
        LEDSTATENAME: 'Karnataka',
        COUNTRYNAME: 'India',
      });
      expect(ledgerOf({ gstin: '27AABCS1234F1Z5' })).toMatchObject({ GSTREGISTRATIONTYPE: 'Regular', ISSEZPARTY: 'No', LEDSTATENAME: 'Maharashtra' });
    });

    it('names an overseas customer’s country in words and gives it no Indian state', () => {
      const ledger = ledgerOf({ billing_address: { line1: '1 Main St', line2: null, city: 'Austin', state_code: null, postal_code: '73301', country: 'US' } });
      expect(ledger).toMatchObject({
        GSTREGISTRATIONTYPE: 'Unregistered/Consumer',
        ISSEZPARTY: 'No',
        COUNTRYNAME: 'United States',
        COUNTRYOFRESIDENCE: 'United States',
      });
      expect(ledger.LEDSTATENAME).toBeUndefined();
    });
  });
});

describe('connect-flow housekeeping', () => {
  it('forgets connect states a day after they ended', async () => {
    const states = () => t.kosh.deps.db.selectFrom('accounting_oauth_states').select('id').where('tenant_id', '=', acme.tenantId).execute();
    expect((await states()).length).toBeGreaterThan(0);
    t.clock.advance(25 * 3_600_000);
    await t.kosh.worker.drain();
    expect(await states()).toEqual([]);
  });
});

describe('accounting helpers', () => {
  it.each([
    [118000, 'INR', '1180.00'],
    [5, 'INR', '0.05'],
    [-1050, 'INR', '-10.50'],
    [0, 'INR', '0.00'],
    [1500, 'JPY', '1500'],
  ])('writes %i %s as %s', (minor, currency, text) => expect(majorUnitsText(minor, currency)).toBe(text));

  it('dates Indian documents in India time and others in UTC', () => {
    expect(localDay(new Date('2026-03-31T20:00:00Z'), zoneOf({ country_code: 'IN' }))).toBe('2026-04-01');
    expect(localDay(new Date('2026-03-31T20:00:00Z'), zoneOf({ country_code: 'US' }))).toBe('2026-03-31');
  });

  it.each([
    ['intra_state', 1800, 'intra_state:18'],
    ['inter_state', 1800, 'inter_state:18'],
    ['inter_state', 25, 'inter_state:0.25'],
    ['export', 0, 'export:0'],
    ['', 0, 'none:0'],
  ])('keys %s at %i bp as %s', (type, bp, key) => expect(taxKey(type, bp)).toBe(key));
});
