import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { OAuth2Server } from 'oauth2-mock-server';
import type { ApiResponse, Tenant, TestKosh } from './harness.js';

/**
 * Local stand-ins for the accounting providers Kosh connects to (DESIGN §16):
 *
 * - a real OAuth 2 authorization server on loopback (`oauth2-mock-server`): authorize with PKCE
 *   S256, the token endpoint (authorization_code and refresh_token grants, verifying the PKCE
 *   verifier), and hooks to refuse a refresh with `invalid_grant`;
 * - one HTTP server speaking the three accounting APIs as their public references describe them:
 *   QuickBooks Online v3 (`/v3/company/{realmId}/customer|invoice|payment|creditmemo|refundreceipt|
 *   purchase`, `query`, `operation=delete`, SyncToken optimistic locking with fault 5010, `requestid` idempotency,
 *   `Fault` error bodies; a Payment's `Line.LinkedTxn` must name transactions that exist, and may
 *   not take more from a CreditMemo or an Expense/Check than it has left — `quickbooksBooks()`
 *   reads the company's accounts and customer balances back from what was posted),
 *   Xero (`/api.xro/2.0/Contacts|Invoices|Payments|CreditNotes`, a payment's delete at
 *   `/Payments/{id}`, `xero-tenant-id`, `/connections`,
 *   `Idempotency-Key`, ValidationException bodies), Zoho Books (`/books/v3/contacts|invoices|
 *   customerpayments|creditnotes?organization_id=`, credit-note refunds and their delete,
 *   `Zoho-oauthtoken`, `{ code, message }`
 *   bodies), each with its token revocation endpoint and 429 + Retry-After rate limiting.
 *
 * Every request Kosh sends is recorded in `requests`.
 */
export type Provider = 'quickbooks' | 'xero' | 'zoho_books';

export type RecordedRequest = {
  provider: Provider | 'oauth';
  method: string;
  path: string;
  query: Record<string, string>;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
};

export const QBO_REALM = '9130357766889012';
export const XERO_TENANT = 'a3e5c4d1-7b2f-4f5e-9f1a-0c8e2d6b4a11';
export const ZOHO_ORG = '60012345678';

type StoredRecord = { id: string; version: number; body: Record<string, unknown> };

export type QboBooks = { income: number; tax: number; receivable: number; money: Record<string, number>; customers: Record<string, number> };

/** QuickBooks' Accounts Receivable (A/R) account in this company. */
export const QBO_RECEIVABLE_ACCOUNT = '84';

type QboLine = { Amount?: number; LinkedTxn?: { TxnId?: string; TxnType?: string }[]; AccountBasedExpenseLineDetail?: { AccountRef?: { value?: string } } };
const cents = (n: unknown) => Math.round(Number(n ?? 0) * 100);
const linesOf = (b: Record<string, unknown>) => (Array.isArray(b.Line) ? (b.Line as QboLine[]) : []);
const salesTotal = (b: Record<string, unknown>) =>
  linesOf(b).reduce((sum, l) => sum + cents(l.Amount), 0) + cents((b.TxnTaxDetail as { TotalTax?: number } | undefined)?.TotalTax);

/**
 * How QuickBooks posts each transaction (its accounting model, from the public reference):
 * Invoice Dr A/R / Cr income + tax; CreditMemo the reverse; RefundReceipt Dr income + tax / Cr the
 * refund-from account; Payment Dr deposit-to / Cr A/R for TotalAmt (its lines only link); a Purchase
 * (Expense or Check) whose lines name A/R for a customer Dr A/R / Cr the paying account.
 */
function qboBooks(collection: (key: string) => Map<string, StoredRecord>): QboBooks {
  const books = { income: 0, tax: 0, receivable: 0, money: {} as Record<string, number>, customers: {} as Record<string, number> };
  const customer = (id: string | undefined, amount: number) => {
    if (id) books.customers[id] = (books.customers[id] ?? 0) + amount;
    books.receivable += amount;
  };
  const money = (ref: unknown, amount: number) => {
    const id = (ref as { value?: string } | undefined)?.value ?? '35';
    books.money[id] = (books.money[id] ?? 0) + amount;
  };
  const ref = (b: Record<string, unknown>) => (b.CustomerRef as { value?: string } | undefined)?.value;
  const sales = (b: Record<string, unknown>, sign: number) => {
    books.income += sign * linesOf(b).reduce((sum, l) => sum + cents(l.Amount), 0);
    books.tax += sign * cents((b.TxnTaxDetail as { TotalTax?: number } | undefined)?.TotalTax);
  };
  for (const { body: b } of collection('quickbooks:invoice').values()) {
    sales(b, 1);
    customer(ref(b), salesTotal(b));
  }
  for (const { body: b } of collection('quickbooks:creditmemo').values()) {
    sales(b, -1);
    customer(ref(b), -salesTotal(b));
  }
  for (const { body: b } of collection('quickbooks:refundreceipt').values()) {
    sales(b, -1);
    money(b.DepositToAccountRef, -salesTotal(b));
  }
  for (const { body: b } of collection('quickbooks:payment').values()) {
    money(b.DepositToAccountRef, cents(b.TotalAmt));
    customer(ref(b), -cents(b.TotalAmt));
  }
  for (const { body: b } of collection('quickbooks:purchase').values()) {
    const payee = b.EntityRef as { value?: string; type?: string } | undefined;
    for (const l of linesOf(b)) {
      if (l.AccountBasedExpenseLineDetail?.AccountRef?.value !== QBO_RECEIVABLE_ACCOUNT) continue;
      customer(payee?.type === 'Customer' ? payee.value : undefined, cents(l.Amount));
      money(b.AccountRef, -cents(l.Amount));
    }
  }
  const major = (n: number) => n / 100;
  return {
    income: major(books.income),
    tax: major(books.tax),
    receivable: major(books.receivable),
    money: Object.fromEntries(Object.entries(books.money).map(([k, v]) => [k, major(v)])),
    customers: Object.fromEntries(Object.entries(books.customers).map(([k, v]) => [k, major(v)])),
  };
}

/**
 * A Payment's lines (Payment reference, `Line.LinkedTxn.TxnType`: Invoice, CreditMemo, Expense,
 * Check, …): each names a transaction of the customer that exists; a CreditMemo line takes at most
 * what the memo has left, an Expense/Check line at most what the purchase has not been reimbursed;
 * TotalAmt is what the charges take beyond the credits. Returns the refusal, or null.
 */
function qboPaymentRefusal(collection: (key: string) => Map<string, StoredRecord>, b: Record<string, unknown>, selfId: string | null): string | null {
  const used = new Map<string, number>();
  for (const [id, p] of collection('quickbooks:payment')) {
    if (id === selfId) continue;
    for (const l of linesOf(p.body))
      for (const t of l.LinkedTxn ?? []) used.set(`${t.TxnType}:${t.TxnId}`, (used.get(`${t.TxnType}:${t.TxnId}`) ?? 0) + cents(l.Amount));
  }
  let charges = 0;
  let credits = 0;
  for (const l of linesOf(b)) {
    for (const t of l.LinkedTxn ?? []) {
      const amount = cents(l.Amount);
      const entity = { Invoice: 'invoice', CreditMemo: 'creditmemo', Expense: 'purchase', Check: 'purchase' }[t.TxnType ?? ''];
      if (!entity) return `LinkedTxn.TxnType ${t.TxnType ?? ''} is not supported`;
      const linked = collection(`quickbooks:${entity}`).get(String(t.TxnId));
      if (!linked) return `Invalid Reference Id : ${t.TxnType} ${t.TxnId ?? ''} does not exist`;
      if (t.TxnType === 'Expense' || t.TxnType === 'Check') {
        const purchase = linked.body;
        if ((purchase.PaymentType === 'Check') !== (t.TxnType === 'Check')) return `${t.TxnType} ${t.TxnId} is a ${String(purchase.PaymentType)} purchase`;
        const total = linesOf(purchase).reduce((sum, x) => sum + cents(x.Amount), 0);
        if (amount > total - (used.get(`${t.TxnType}:${t.TxnId}`) ?? 0)) return `the amount exceeds what ${t.TxnType} ${t.TxnId} has left`;
        charges += amount;
      } else if (t.TxnType === 'CreditMemo') {
        if (amount > salesTotal(linked.body) - (used.get(`CreditMemo:${t.TxnId}`) ?? 0))
          return `the amount exceeds the remaining credit of CreditMemo ${t.TxnId}`;
        credits += amount;
      } else charges += amount;
    }
  }
  if (linesOf(b).length > 0 && cents(b.TotalAmt) !== charges - credits) return 'TotalAmt must equal the linked charges less the linked credits';
  return null;
}

export type AccountingSandbox = {
  oauth: OAuth2Server;
  oauthUrl: string;
  apiUrl: string;
  requests: RecordedRequest[];
  /** Records per provider and collection (`quickbooks:invoice`, `xero:Invoices`, `zoho_books:invoices`). */
  store: Map<string, Map<string, StoredRecord>>;
  /**
   * The QuickBooks company's books as its transactions post them (major units): income, output
   * tax, accounts receivable, the money accounts (by account id) and each customer's balance.
   */
  quickbooksBooks(): QboBooks;
  /** The next `count` API calls to `provider` answer 429 with Retry-After `seconds`. */
  rateLimit(provider: Provider, count: number, seconds: number): void;
  /** The next `count` API calls to `provider` answer 401 (the access token was revoked at the provider). */
  refuseAccess(provider: Provider, count: number): void;
  /**
   * The next `count` writes (POST/PUT) to `provider` are carried out and then the connection is
   * dropped before the answer: what Kosh sees when the provider made the record but the answer (or
   * Kosh's own commit of it) was lost.
   */
  dropAnswer(provider: Provider, count: number): void;
  /** The next `count` API calls to `provider` answer a 502 HTML error page. */
  errorPage(provider: Provider | 'oauth', count: number): void;
  /** Refresh grants answer `invalid_grant` while set. */
  refuseRefresh: boolean;
  /** Token requests seen by the authorization server, by grant type. */
  tokenRequests: { grant_type: string; refresh_token?: string; code_verifier?: string; client_id?: string; authorization?: string }[];
  /** Env vars that point Kosh at this sandbox. */
  env(): Record<string, string>;
  /** Points a running Kosh's provider config at this sandbox (for shared suites). */
  configure(t: TestKosh): void;
  close(): Promise<void>;
};

const dropping = new WeakSet<ServerResponse>();

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (dropping.has(res) && status < 300) {
    res.socket?.destroy();
    return;
  }
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': typeof body === 'string' ? 'text/html' : 'application/json', ...headers });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return undefined;
  if ((req.headers['content-type'] ?? '').includes('json')) return JSON.parse(text);
  if ((req.headers['content-type'] ?? '').includes('x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(text));
  return text;
}

const qboFault = (message: string, detail: string, code: string, type = 'ValidationFault') => ({
  Fault: { Error: [{ Message: message, Detail: detail, code }], type },
  time: new Date().toISOString(),
});
const xeroValidation = (message: string) => ({
  ErrorNumber: 10,
  Type: 'ValidationException',
  Message: 'A validation exception occurred',
  Elements: [{ ValidationErrors: [{ Message: message }] }],
});

export async function startAccountingSandbox(): Promise<AccountingSandbox> {
  const oauth = new OAuth2Server();
  await oauth.issuer.keys.generate('RS256');
  await oauth.start(0, '127.0.0.1');
  const oauthUrl = oauth.issuer.url!;
  // Zoho's accounts server keeps its own paths (`/oauth/v2/auth`, `/oauth/v2/token`, `/oauth/v2/token/revoke`).
  const zohoAccounts = new OAuth2Server(undefined, undefined, {
    endpoints: { authorize: '/oauth/v2/auth', token: '/oauth/v2/token', revoke: '/oauth/v2/token/revoke' },
  });
  await zohoAccounts.issuer.keys.generate('RS256');
  await zohoAccounts.start(0, '127.0.0.1');
  const zohoAccountsUrl = zohoAccounts.issuer.url!;

  const requests: RecordedRequest[] = [];
  const store = new Map<string, Map<string, StoredRecord>>();
  const limits = new Map<string, { count: number; seconds: number }>();
  const pages = new Map<string, number>();
  const refusals = new Map<string, number>();
  const drops = new Map<string, number>();
  const idempotent = new Map<string, { status: number; body: unknown }>();
  let counter = 100;

  const sandbox = {
    oauth,
    oauthUrl,
    apiUrl: '',
    requests,
    store,
    refuseRefresh: false,
    tokenRequests: [],
  } as unknown as AccountingSandbox;

  const onToken = (response: { statusCode: number; body: Record<string, unknown> }, req: IncomingMessage & { body: Record<string, string> }) => {
    const body = req.body ?? {};
    sandbox.tokenRequests.push({
      grant_type: body.grant_type!,
      refresh_token: body.refresh_token,
      code_verifier: body.code_verifier,
      client_id: body.client_id,
      authorization: req.headers.authorization,
    });
    requests.push({ provider: 'oauth', method: 'POST', path: '/token', query: {}, headers: req.headers, body });
    if ((pages.get('oauth') ?? 0) > 0) {
      pages.set('oauth', pages.get('oauth')! - 1);
      response.statusCode = 500;
      response.body = { error: 'server_error', error_description: 'the authorization server is down' };
      return;
    }
    if (body.grant_type === 'refresh_token' && sandbox.refuseRefresh) {
      response.statusCode = 400;
      response.body = { error: 'invalid_grant', error_description: 'refresh token is invalid, expired or revoked' };
    }
  };
  oauth.service.on('beforeResponse', onToken);
  zohoAccounts.service.on('beforeResponse', onToken);
  zohoAccounts.service.on('beforeRevoke', (_response: unknown, req: IncomingMessage) => {
    const url = new URL(req.url ?? '/', 'http://zoho');
    requests.push({
      provider: 'zoho_books',
      method: 'POST',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: req.headers,
      body: undefined,
    });
  });

  // QuickBooks names the company it authorised on the redirect (`realmId`).
  oauth.service.on('beforeAuthorizeRedirect', (redirect: { url: URL }, req: IncomingMessage) => {
    if (new URL(req.url ?? '/', 'http://oauth').searchParams.get('client_id') === 'qbo-client') redirect.url.searchParams.set('realmId', QBO_REALM);
  });

  const collection = (key: string) => {
    let m = store.get(key);
    if (!m) store.set(key, (m = new Map()));
    return m;
  };
  const nextId = () => String(++counter);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const body = await readBody(req);
    const provider: Provider =
      url.pathname.startsWith('/v3/') || url.pathname.startsWith('/qbo/') ? 'quickbooks' : url.pathname.startsWith('/books/') ? 'zoho_books' : 'xero';
    requests.push({ provider, method: req.method!, path: url.pathname, query: Object.fromEntries(url.searchParams), headers: req.headers, body });

    if ((pages.get(provider) ?? 0) > 0) {
      pages.set(provider, pages.get(provider)! - 1);
      return send(res, 502, '<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>');
    }
    const limit = limits.get(provider);
    if (limit && limit.count > 0) {
      limit.count -= 1;
      const retry = { 'retry-after': String(limit.seconds) };
      if (provider === 'quickbooks') return send(res, 429, qboFault('ThrottleExceeded', 'The request limit was reached.', '003001', 'SERVICE'), retry);
      if (provider === 'xero')
        return send(res, 429, { Title: 'Too Many Requests', Status: 429, Detail: 'Rate limit exceeded' }, { ...retry, 'x-rate-limit-problem': 'minute' });
      return send(res, 429, { code: 44, message: 'You have made too many requests continuously. Please try again after some time.' }, retry);
    }

    if ((drops.get(provider) ?? 0) > 0 && (req.method === 'POST' || req.method === 'PUT')) {
      drops.set(provider, drops.get(provider)! - 1);
      dropping.add(res);
    }

    if ((refusals.get(provider) ?? 0) > 0) {
      refusals.set(provider, refusals.get(provider)! - 1);
      if (provider === 'quickbooks') return send(res, 401, qboFault('AuthenticationFailed', 'Token revoked', '3200', 'AUTHENTICATION'));
      if (provider === 'xero')
        return send(res, 401, { Type: null, Title: 'Unauthorized', Status: 401, Detail: 'TokenExpired: token expired at 01/01/2026 00:00:00' });
      return send(res, 401, { code: 57, message: 'You are not authorized to perform this operation' });
    }

    // Token revocation endpoints.
    if (url.pathname === '/qbo/revoke') return send(res, 200, {});
    if (url.pathname === '/xero/revocation') return send(res, 200, {});

    const auth = String(req.headers.authorization ?? '');
    if (provider === 'quickbooks') return quickbooks(req, res, url, body, auth);
    if (provider === 'xero') return xero(req, res, url, body, auth);
    return zoho(req, res, url, body, auth);
  }

  /**
   * `POST /{entity}?operation=delete` with the Id and current SyncToken (the RefundReceipt, Payment
   * and Purchase references): the transaction is gone afterwards — reading or deleting it again
   * answers fault 610 Object Not Found; a stale SyncToken answers 5010; a transaction a live
   * Payment still links is refused (6000), as QuickBooks asks for links to be removed first.
   */
  function qboDelete(records: Map<string, StoredRecord>, entity: string, wrapper: string, b: Record<string, unknown>): { status: number; body: unknown } {
    const id = String(b?.Id ?? '');
    const current = records.get(id);
    if (!current) return { status: 400, body: qboFault('Object Not Found', `Object Not Found : ${wrapper} ${id} was deleted or never existed`, '610') };
    if (String(b.SyncToken) !== String(current.version))
      return { status: 400, body: qboFault('Stale Object Error', `SyncToken ${String(b.SyncToken)} is stale`, '5010') };
    const txnType = { purchase: 'Expense', creditmemo: 'CreditMemo', invoice: 'Invoice' }[entity];
    const linked = [...collection('quickbooks:payment').values()].some((p) =>
      linesOf(p.body).some((l) => (l.LinkedTxn ?? []).some((t) => t.TxnType === txnType && t.TxnId === id)),
    );
    if (txnType && linked)
      return {
        status: 400,
        body: qboFault('A business validation error has occurred while processing your request', `${wrapper} ${id} is linked to a payment`, '6000'),
      };
    records.delete(id);
    return { status: 200, body: { [wrapper]: { status: 'Deleted', domain: 'QBO', Id: id }, time: new Date().toISOString() } };
  }

  function quickbooks(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown, auth: string): void {
    if (!/^Bearer \S+$/.test(auth)) return send(res, 401, qboFault('AuthenticationFailed', 'Authentication failed', '100', 'AUTHENTICATION'));
    const m = /^\/v3\/company\/([^/]+)\/([a-z]+)(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m || m[1] !== QBO_REALM) return send(res, 404, qboFault('Object Not Found', 'company not found', '610'));
    const [, , entity, id] = m;
    if (entity === 'query') {
      const q = url.searchParams.get('query') ?? '';
      if (/from TaxCode/i.test(q)) {
        const codes = ['GST 18%', 'IGST 18%', 'GST 12%', 'IGST 12%', 'GST 5%', 'IGST 5%', 'Exempt IGST'].map((Name, i) => ({ Id: String(10 + i), Name }));
        return send(res, 200, { QueryResponse: { TaxCode: codes, startPosition: 1, maxResults: codes.length } });
      }
      if (/from Item/i.test(q)) return send(res, 200, { QueryResponse: { Item: [{ Id: '1', Name: 'Services' }] } });
      const byDocNumber = /^select \* from Purchase where DocNumber = '((?:[^'\\]|\\.)*)'$/i.exec(q.trim());
      if (byDocNumber) {
        const docNumber = byDocNumber[1]!.replace(/\\(.)/g, '$1');
        const found = [...collection('quickbooks:purchase').values()]
          .filter((r) => r.body.DocNumber === docNumber)
          .map((r) => ({ ...r.body, Id: r.id, SyncToken: String(r.version) }));
        return send(res, 200, { QueryResponse: found.length ? { Purchase: found, startPosition: 1, maxResults: found.length } : {} });
      }
      if (/from Account/i.test(q))
        return send(res, 200, {
          QueryResponse: {
            Account: [
              { Id: '35', Name: 'Undeposited Funds', AccountType: 'Other Current Asset' },
              { Id: '92', Name: 'TDS Receivable', AccountType: 'Other Current Asset' },
              { Id: '79', Name: 'Sales', AccountType: 'Income' },
              { Id: QBO_RECEIVABLE_ACCOUNT, Name: 'Accounts Receivable (A/R)', AccountType: 'Accounts Receivable' },
            ],
          },
        });
      return send(res, 400, qboFault('QueryParserError', `cannot parse ${q}`, '4000'));
    }
    const key = `quickbooks:${entity}`;
    const wrapper = {
      customer: 'Customer',
      invoice: 'Invoice',
      payment: 'Payment',
      creditmemo: 'CreditMemo',
      refundreceipt: 'RefundReceipt',
      purchase: 'Purchase',
    }[entity!];
    if (!wrapper) return send(res, 400, qboFault('Unsupported Operation', `${entity} is not supported`, '500'));
    const records = collection(key);
    if (req.method === 'GET' && id) {
      const r = records.get(id);
      if (!r) return send(res, 400, qboFault('Object Not Found', `${wrapper} ${id} not found`, '610'));
      return send(res, 200, { [wrapper]: { ...r.body, Id: r.id, SyncToken: String(r.version) } });
    }
    if (req.method !== 'POST') return send(res, 405, qboFault('Unsupported Operation', 'method', '500'));
    const requestId = url.searchParams.get('requestid');
    if (requestId && idempotent.has(`qbo:${requestId}`)) {
      const prior = idempotent.get(`qbo:${requestId}`)!;
      return send(res, prior.status, prior.body);
    }
    const b = body as Record<string, unknown>;
    if (url.searchParams.get('operation') === 'delete') {
      const answer = qboDelete(records, entity!, wrapper, b);
      if (requestId) idempotent.set(`qbo:${requestId}`, answer);
      return send(res, answer.status, answer.body);
    }
    // A purchase names its payee in EntityRef (here: the customer a refund is paid to).
    const payee = entity === 'purchase' ? (b.EntityRef as { value?: string; type?: string } | undefined) : undefined;
    const refCustomer = entity === 'purchase' ? payee?.value : (b.CustomerRef as { value?: string } | undefined)?.value;
    if (entity !== 'customer' && (!refCustomer || !collection('quickbooks:customer').has(refCustomer))) {
      return send(res, 400, qboFault('Invalid Reference Id', `Invalid Reference Id : Customer ${refCustomer ?? ''} does not exist`, '2500'));
    }
    if (
      entity === 'purchase' &&
      (!['Cash', 'Check', 'CreditCard'].includes(String(b.PaymentType)) || !(b.AccountRef as { value?: string } | undefined)?.value)
    ) {
      return send(
        res,
        400,
        qboFault('Required param missing, need to supply the required value for the API', 'PaymentType and AccountRef are required', '2020'),
      );
    }
    const refusal = entity === 'payment' ? qboPaymentRefusal(collection, b, b.Id ? String(b.Id) : null) : null;
    let answer: { status: number; body: unknown };
    if (refusal) answer = { status: 400, body: qboFault('A business validation error has occurred while processing your request', refusal, '6000') };
    else if (b.Id) {
      const current = records.get(String(b.Id));
      if (!current) answer = { status: 400, body: qboFault('Object Not Found', `${wrapper} ${String(b.Id)} not found`, '610') };
      else if (String(b.SyncToken) !== String(current.version)) {
        answer = {
          status: 400,
          body: qboFault('Stale Object Error', `You and ${'another user'} were working on the same thing. SyncToken ${String(b.SyncToken)} is stale`, '5010'),
        };
      } else {
        current.version += 1;
        current.body = { ...current.body, ...b };
        answer = { status: 200, body: { [wrapper]: { ...current.body, Id: current.id, SyncToken: String(current.version) }, time: new Date().toISOString() } };
      }
    } else {
      const record = { id: nextId(), version: 0, body: b };
      records.set(record.id, record);
      answer = { status: 200, body: { [wrapper]: { ...b, Id: record.id, SyncToken: '0' }, time: new Date().toISOString() } };
    }
    if (requestId) idempotent.set(`qbo:${requestId}`, answer);
    return send(res, answer.status, answer.body);
  }

  function xero(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown, auth: string): void {
    if (!/^Bearer \S+$/.test(auth)) return send(res, 401, { Type: null, Title: 'Unauthorized', Status: 401, Detail: 'AuthenticationUnsuccessful' });
    if (url.pathname === '/connections') {
      return send(res, 200, [
        {
          id: randomUUID(),
          authEventId: randomUUID(),
          tenantId: XERO_TENANT,
          tenantType: 'ORGANISATION',
          tenantName: 'Demo Company (IN)',
          createdDateUtc: new Date().toISOString(),
        },
      ]);
    }
    if (req.headers['xero-tenant-id'] !== XERO_TENANT)
      return send(res, 403, { Type: null, Title: 'Forbidden', Status: 403, Detail: 'AuthorizationUnsuccessful' });
    const one = /^\/api\.xro\/2\.0\/Payments\/([^/]+)$/.exec(url.pathname);
    if (one) return xeroPayment(req, res, decodeURIComponent(one[1]!), body);
    const m = /^\/api\.xro\/2\.0\/(Contacts|Invoices|Payments|CreditNotes)$/.exec(url.pathname);
    if (!m) return send(res, 404, { Title: 'Not Found', Status: 404, Detail: url.pathname });
    const name = m[1]!;
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string' && idempotent.has(`xero:${key}`)) {
      const prior = idempotent.get(`xero:${key}`)!;
      return send(res, prior.status, prior.body);
    }
    const idField = { Contacts: 'ContactID', Invoices: 'InvoiceID', Payments: 'PaymentID', CreditNotes: 'CreditNoteID' }[name]!;
    if (name === 'Payments' && req.method !== 'PUT') return send(res, 405, { Title: 'Method Not Allowed', Status: 405 });
    const items = ((body as Record<string, unknown[]> | undefined)?.[name] ?? []) as Record<string, unknown>[];
    if (items.length === 0) return send(res, 400, xeroValidation(`${name} is required`));
    const records = collection(`xero:${name}`);
    const saved: Record<string, unknown>[] = [];
    for (const item of items) {
      const contactId = (item.Contact as { ContactID?: string } | undefined)?.ContactID;
      if ((name === 'Invoices' || name === 'CreditNotes') && (!contactId || !collection('xero:Contacts').has(contactId))) {
        return send(res, 400, xeroValidation(`The contact ${contactId ?? ''} does not exist`));
      }
      if (name === 'Payments') {
        // A payment is applied to an invoice, or (a refund) to a credit note.
        const invoiceId = (item.Invoice as { InvoiceID?: string } | undefined)?.InvoiceID;
        const creditNoteId = (item.CreditNote as { CreditNoteID?: string } | undefined)?.CreditNoteID;
        if (creditNoteId !== undefined) {
          if (!collection('xero:CreditNotes').has(creditNoteId)) return send(res, 400, xeroValidation('Credit Note could not be found'));
        } else if (!invoiceId || !collection('xero:Invoices').has(invoiceId)) return send(res, 400, xeroValidation('Invoice could not be found'));
        if (!(item.Account as { Code?: string } | undefined)?.Code) return send(res, 400, xeroValidation('Account code must be specified'));
      }
      const id = (item[idField] as string | undefined) ?? randomUUID();
      const current = records.get(id);
      if (item[idField] && !current) return send(res, 400, xeroValidation(`${idField} ${id} could not be found`));
      const record = current ?? { id, version: 0, body: {} };
      record.version += 1;
      record.body = { ...record.body, ...item };
      records.set(id, record);
      saved.push({ ...record.body, [idField]: id, UpdatedDateUTC: `/Date(${1700000000000 + record.version})/` });
    }
    const answer = { status: 200, body: { Id: randomUUID(), Status: 'OK', ProviderName: 'Kosh', [name]: saved } };
    if (typeof key === 'string') idempotent.set(`xero:${key}`, answer);
    return send(res, answer.status, answer.body);
  }

  /**
   * `/Payments/{PaymentID}`: GET reads it; POST `{ Status: "DELETED" }` deletes it — the only change
   * Xero takes to a payment. A deleted payment stays readable with Status DELETED (its invoice or
   * credit note is open for that amount again) and any further change to it is refused with a
   * ValidationException. A retried delete with its Idempotency-Key answers what the first did.
   */
  function xeroPayment(req: IncomingMessage, res: ServerResponse, id: string, body: unknown): void {
    const payment = collection('xero:Payments').get(id);
    if (!payment) return send(res, 404, { Title: 'Not Found', Status: 404, Detail: `Payment ${id} not found` });
    const view = () => ({ ...payment.body, PaymentID: id, Status: payment.body.Status ?? 'AUTHORISED' });
    if (req.method === 'GET') return send(res, 200, { Id: randomUUID(), Status: 'OK', Payments: [view()] });
    if (req.method !== 'POST') return send(res, 405, { Title: 'Method Not Allowed', Status: 405 });
    const key = req.headers['idempotency-key'];
    if (typeof key === 'string' && idempotent.has(`xero:${key}`)) {
      const prior = idempotent.get(`xero:${key}`)!;
      return send(res, prior.status, prior.body);
    }
    const b = (body ?? {}) as { Status?: string; Payments?: { Status?: string }[] };
    const status = b.Status ?? b.Payments?.[0]?.Status;
    let answer: { status: number; body: unknown };
    if (status !== 'DELETED') answer = { status: 400, body: xeroValidation('A payment can only be deleted: Status must be DELETED') };
    else if (payment.body.Status === 'DELETED') answer = { status: 400, body: xeroValidation('This payment has been deleted and cannot be changed') };
    else {
      payment.version += 1;
      payment.body = { ...payment.body, Status: 'DELETED' };
      answer = { status: 200, body: { Id: randomUUID(), Status: 'OK', Payments: [view()] } };
    }
    if (typeof key === 'string') idempotent.set(`xero:${key}`, answer);
    return send(res, answer.status, answer.body);
  }

  function zoho(req: IncomingMessage, res: ServerResponse, url: URL, body: unknown, auth: string): void {
    if (!/^Zoho-oauthtoken \S+$/.test(auth)) return send(res, 401, { code: 57, message: 'You are not authorized to perform this operation' });
    if (url.pathname === '/books/v3/organizations') {
      return send(res, 200, {
        code: 0,
        message: 'success',
        organizations: [{ organization_id: ZOHO_ORG, name: 'Acme India Pvt Ltd', is_default_org: true, country: 'India' }],
      });
    }
    if (url.searchParams.get('organization_id') !== ZOHO_ORG)
      return send(res, 400, { code: 6041, message: 'This user is not associated with the CompanyID/CompanyName:.' });
    if (url.pathname === '/books/v3/settings/taxes') {
      const taxes = [
        { tax_id: '982000000566007', tax_name: 'GST18', tax_percentage: 18, tax_type: 'tax_group' },
        { tax_id: '982000000566013', tax_name: 'IGST18', tax_percentage: 18, tax_type: 'tax' },
        { tax_id: '982000000566019', tax_name: 'IGST0', tax_percentage: 0, tax_type: 'tax' },
      ];
      return send(res, 200, { code: 0, message: 'success', taxes });
    }
    const refund = /^\/books\/v3\/creditnotes\/([^/]+)\/refunds(?:\/([^/]+))?$/.exec(url.pathname);
    if (refund?.[2]) return zohoRefundDelete(req, res, refund[1]!, refund[2]);
    if (refund) return zohoRefund(req, res, refund[1]!, body);
    const m = /^\/books\/v3\/(contacts|invoices|customerpayments|creditnotes)(?:\/([^/]+))?$/.exec(url.pathname);
    if (!m) return send(res, 404, { code: 5, message: 'Invalid URL Passed' });
    const [, resource, id] = m;
    if (req.method === 'GET' && !id) {
      // List with the documented search filters (exact match here).
      const filters = {
        contacts: ['contact_name'],
        invoices: ['invoice_number'],
        customerpayments: ['reference_number'],
        creditnotes: ['creditnote_number'],
      }[resource!]!;
      const idField = { contacts: 'contact_id', invoices: 'invoice_id', customerpayments: 'payment_id', creditnotes: 'creditnote_id' }[resource!]!;
      const rows = [...collection(`zoho_books:${resource}`).values()]
        .filter((r) => filters.every((f) => !url.searchParams.has(f) || String(r.body[f]) === url.searchParams.get(f)))
        .map((r) => ({ ...r.body, [idField]: r.id, last_modified_time: `v${r.version}` }));
      return send(res, 200, {
        code: 0,
        message: 'success',
        [resource === 'customerpayments' ? 'customerpayments' : resource!]: rows,
        page_context: { page: 1, per_page: 200, has_more_page: false },
      });
    }
    const wrapper = { contacts: 'contact', invoices: 'invoice', customerpayments: 'payment', creditnotes: 'creditnote' }[resource!]!;
    const idField = { contacts: 'contact_id', invoices: 'invoice_id', customerpayments: 'payment_id', creditnotes: 'creditnote_id' }[resource!]!;
    const records = collection(`zoho_books:${resource}`);
    const b = body as Record<string, unknown>;
    if (resource !== 'contacts' && (!b?.customer_id || !collection('zoho_books:contacts').has(String(b.customer_id)))) {
      return send(res, 400, { code: 1002, message: 'Contact does not exist.' });
    }
    if ((resource === 'invoices' || resource === 'creditnotes') && url.searchParams.get('ignore_auto_number_generation') !== 'true') {
      return send(res, 400, { code: 4097, message: 'Auto-generation of numbers is enabled; pass ignore_auto_number_generation=true to give your own number.' });
    }
    if (req.method === 'POST' && !id) {
      const record = { id: nextId() + '000', version: 1, body: b };
      records.set(record.id, record);
      return send(res, 201, {
        code: 0,
        message: `The ${wrapper} has been created.`,
        [wrapper]: { ...b, [idField]: record.id, last_modified_time: `v${record.version}` },
      });
    }
    if (req.method === 'PUT' && id) {
      const current = records.get(id);
      if (!current) return send(res, 404, { code: 1002, message: `${wrapper} does not exist.` });
      current.version += 1;
      current.body = { ...current.body, ...b };
      return send(res, 200, {
        code: 0,
        message: `The ${wrapper} has been updated.`,
        [wrapper]: { ...current.body, [idField]: current.id, last_modified_time: `v${current.version}` },
      });
    }
    return send(res, 405, { code: 5, message: 'Invalid method' });
  }

  /**
   * `DELETE /creditnotes/{creditnote_id}/refunds/{creditnote_refund_id}` ("Delete credit note
   * refund"): the refund is gone and the note's credit open again; deleting it again answers 404.
   */
  function zohoRefundDelete(req: IncomingMessage, res: ServerResponse, creditNoteId: string, refundId: string): void {
    if (req.method !== 'DELETE') return send(res, 405, { code: 5, message: 'Invalid method' });
    if (!collection('zoho_books:creditnotes').has(creditNoteId)) return send(res, 404, { code: 1002, message: 'Credit note does not exist.' });
    const refunds = collection(`zoho_books:creditnotes/${creditNoteId}/refunds`);
    if (!refunds.delete(refundId)) return send(res, 404, { code: 1002, message: 'The refund does not exist.' });
    return send(res, 200, { code: 0, message: 'The refund has been deleted.' });
  }

  /** `/creditnotes/{creditnote_id}/refunds`: POST records a refund of the note, GET lists them. */
  function zohoRefund(req: IncomingMessage, res: ServerResponse, creditNoteId: string, body: unknown): void {
    const note = collection('zoho_books:creditnotes').get(creditNoteId);
    if (!note) return send(res, 404, { code: 1002, message: 'Credit note does not exist.' });
    const refunds = collection(`zoho_books:creditnotes/${creditNoteId}/refunds`);
    if (req.method === 'GET') {
      const rows = [...refunds.values()].map((r) => ({ ...r.body, creditnote_refund_id: r.id, creditnote_id: creditNoteId }));
      return send(res, 200, { code: 0, message: 'success', creditnote_refunds: rows });
    }
    if (req.method !== 'POST') return send(res, 405, { code: 5, message: 'Invalid method' });
    const b = (body ?? {}) as Record<string, unknown>;
    if (typeof b.amount !== 'number' || !b.date) return send(res, 400, { code: 4, message: 'Invalid value passed for amount or date' });
    const record = { id: nextId() + '000', version: 1, body: b };
    refunds.set(record.id, record);
    return send(res, 201, {
      code: 0,
      message: 'The refund information for this credit note has been saved.',
      creditnote_refund: { ...b, creditnote_refund_id: record.id, creditnote_id: creditNoteId },
    });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((error: Error) => send(res, 500, { message: error.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const apiUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  sandbox.apiUrl = apiUrl;
  sandbox.quickbooksBooks = () => qboBooks(collection);
  sandbox.rateLimit = (provider, count, seconds) => limits.set(provider, { count, seconds });
  sandbox.errorPage = (provider, count) => pages.set(provider, count);
  sandbox.refuseAccess = (provider, count) => refusals.set(provider, count);
  sandbox.dropAnswer = (provider, count) => drops.set(provider, count);
  sandbox.env = () => ({
    KOSH_PUBLIC_URL: 'https://kosh.example.com',
    KOSH_QUICKBOOKS_CLIENT_ID: 'qbo-client',
    KOSH_QUICKBOOKS_CLIENT_SECRET: 'qbo-secret',
    KOSH_QUICKBOOKS_AUTHORIZE_URL: `${oauthUrl}/authorize`,
    KOSH_QUICKBOOKS_TOKEN_URL: `${oauthUrl}/token`,
    KOSH_QUICKBOOKS_REVOKE_URL: `${apiUrl}/qbo/revoke`,
    KOSH_QUICKBOOKS_API_URL: apiUrl,
    KOSH_XERO_CLIENT_ID: 'xero-client',
    KOSH_XERO_CLIENT_SECRET: 'xero-secret',
    KOSH_XERO_AUTHORIZE_URL: `${oauthUrl}/authorize`,
    KOSH_XERO_TOKEN_URL: `${oauthUrl}/token`,
    KOSH_XERO_REVOKE_URL: `${apiUrl}/xero/revocation`,
    KOSH_XERO_CONNECTIONS_URL: `${apiUrl}/connections`,
    KOSH_XERO_API_URL: `${apiUrl}/api.xro/2.0`,
    KOSH_ZOHO_CLIENT_ID: 'zoho-client',
    KOSH_ZOHO_CLIENT_SECRET: 'zoho-secret',
    KOSH_ZOHO_ACCOUNTS_URL: zohoAccountsUrl,
    KOSH_ZOHO_API_URL: `${apiUrl}/books/v3`,
  });
  sandbox.configure = (t) => {
    const e = sandbox.env();
    const a = t.config.accounting;
    Object.assign(a.quickbooks, {
      clientId: e.KOSH_QUICKBOOKS_CLIENT_ID,
      clientSecret: e.KOSH_QUICKBOOKS_CLIENT_SECRET,
      authorizeUrl: e.KOSH_QUICKBOOKS_AUTHORIZE_URL,
      tokenUrl: e.KOSH_QUICKBOOKS_TOKEN_URL,
      revokeUrl: e.KOSH_QUICKBOOKS_REVOKE_URL,
      apiUrl: e.KOSH_QUICKBOOKS_API_URL,
    });
  };
  sandbox.close = async () => {
    await oauth.stop();
    await zohoAccounts.stop();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return sandbox;
}

/** The browser binding a connect answer set, as the Cookie header its browser sends back. */
export function bindingCookieOf(connect: ApiResponse): string {
  const header = connect.headers['set-cookie'];
  const first = (Array.isArray(header) ? header : [header ?? '']).find((c) => c.startsWith('kosh_oauth_')) ?? '';
  return first.split(';')[0]!;
}

/**
 * The whole connect flow through Kosh's public API, as a browser would walk it: POST connect →
 * GET the provider's authorize URL (the OAuth server redirects with a code, QuickBooks adds
 * realmId) → GET Kosh's callback → Kosh's redirect to the caller's redirect_uri.
 */
export async function connectThroughBrowser(
  t: TestKosh,
  tenant: Tenant,
  provider: Provider,
  options: { redirect_uri?: string; state?: string } = {},
): Promise<{ location: URL; callback: URL; connect: ApiResponse }> {
  const connect = await tenant.api('POST', `/v1/accounting/connect/${provider}`, {
    redirect_uri: options.redirect_uri ?? `${t.config.publicUrl.replace(/\/$/, '')}/dashboard/settings/accounting`,
    state: options.state ?? 'csrf-123',
  });
  if (connect.status !== 200) throw new Error(`connect answered ${connect.status} ${connect.text}`);
  const authorize = await fetch(connect.body.auth_url, { redirect: 'manual' });
  const callback = new URL(authorize.headers.get('location')!);
  // The same browser: it carries the binding cookie the connect answer set.
  const res = await t.call({ method: 'GET', url: `${callback.pathname}${callback.search}`, headers: { cookie: bindingCookieOf(connect) } });
  if (res.status !== 302) throw new Error(`callback answered ${res.status} ${res.text}`);
  return { location: new URL(String(res.headers.location)), callback, connect };
}

let shared: Promise<AccountingSandbox> | undefined;

/** For the shared security suites: a process-wide sandbox, started on first use. */
export function sharedAccountingSandbox(): Promise<AccountingSandbox> {
  shared ??= startAccountingSandbox();
  return shared;
}
