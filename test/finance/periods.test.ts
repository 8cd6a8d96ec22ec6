import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailSink, type MailSink } from '../support/mail-sink.js';
import { startTestKosh, type ApiResponse, type Tenant, type TestKosh } from '../support/harness.js';
import { gstinFor } from '../support/billing.js';
import { typedApi } from '../support/typed-api.js';

/**
 * DESIGN §18, periods and close (Kosh issue #34): months in the entity's zone, closed by finance,
 * reopened by an owner with a reason; nothing posts into a closed month; a filed return keeps its
 * figures.
 */
let sink: MailSink;
let t: TestKosh;
let acme: Tenant;
let entityId: string;
let customerId: string;
type Session = { cookie: string; csrf: string };
let finance: Session;

function sessionOf(res: ApiResponse): Session {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] ?? []);
  const value = (name: string) =>
    cookies
      .find((c) => c.startsWith(`${name}=`))!
      .split(';')[0]!
      .slice(name.length + 1);
  return { cookie: `kosh_session=${value('kosh_session')}; kosh_csrf=${value('kosh_csrf')}`, csrf: value('kosh_csrf') };
}
/** The finance operator's session (cookie and CSRF token), and no session at all. */
const asFinance = typedApi((method, url, body, headers) =>
  t.api(method, url, body, { cookie: finance.cookie, ...(method === 'GET' ? {} : { 'x-csrf-token': finance.csrf }), ...headers }),
);
const anonymous = typedApi((method, url, body, headers) => t.api(method, url, body, headers));

const periods = async () => {
  const res = await acme.http.GET('/v1/entities/{id}/periods', { path: { id: entityId } });
  expect(res.status, res.text).toBe(200);
  return res.body.data as { period: string; status: string; closed_at: string | null; gst_filed: Record<string, { filed_at: string; arn: string | null }> }[];
};
const close = (period: string) => acme.http.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period } });
/** A close the API refuses as input (400: a month not begun, a malformed month). */
const badClose = (period: string) => acme.api('POST', `/v1/entities/${entityId}/periods/${period}/close`);
const issue = async (amount = 100_000, extra: Record<string, unknown> = {}) => {
  const res = await acme.http.POST('/v1/invoices', {
    body: {
      customer_id: customerId,
      currency: 'INR',
      lines: [{ description: 'Plan', quantity: 1, unit_amount: amount }],
      ...extra,
    },
  });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; number: string; status: string };
};

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, KOSH_PUBLIC_URL: 'https://billing.example.in' } });
  t.clock.set('2026-10-05T06:00:00Z');
  acme = await t.registerTenant({ name: 'Acme Periods', state_code: '29', gstin: gstinFor('29') });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  customerId = (await acme.http.POST('/v1/customers', { body: { email: 'buyer@periods.test', name: 'Buyer', billing_address: { state_code: '29' } } })).body
    .data.id;
  t.clock.set('2026-11-30T19:00:00Z'); // 00:30 on 1 December in India; the finance operator signs in now
  const invited = await acme.http.POST('/v1/users/invitations', { body: { email: 'fin@periods.test', role: 'finance' } });
  expect(invited.status, invited.text).toBe(201);
  await t.kosh.worker.drain();
  const token = decodeURIComponent(/token=(\S+)/.exec(sink.messages.at(-1)!.text ?? '')![1]!);
  const accepted = await anonymous.POST('/v1/auth/invitations/accept', { body: { token, name: 'Fin', password: 'correct horse battery' } });
  expect(accepted.status, accepted.text).toBe(201);
  finance = sessionOf(accepted);
});
afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('periods', () => {
  describe('GET /v1/entities/{id}/periods', () => {
    it("lists the entity's months in its zone up to this one, newest first, open until closed", async () => {
      const list = await periods();
      expect(list[0]).toEqual({
        entity_id: entityId,
        period: '2026-12',
        status: 'open',
        closed_at: null,
        closed_by: null,
        reopened_at: null,
        reopened_by: null,
        reopen_reason: null,
        gst_filed: {},
      });
      expect(list.map((p) => p.period)).toEqual(['2026-12', '2026-11', '2026-10']);
    });
  });

  describe('POST /v1/entities/{id}/periods/{period}/close', () => {
    it('closes a month that has begun (finance may), once; refuses a month not begun and malformed months', async () => {
      const res = await asFinance.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period: '2026-10' } });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ period: '2026-10', status: 'closed', closed_at: '2026-11-30T19:00:00.000Z' });
      expect(res.body.data.closed_by).toMatch(/^user:/);
      expect((await periods()).find((p) => p.period === '2026-10')!.status).toBe('closed');
      const again = await close('2026-10');
      expect(again.status).toBe(409);
      expect(again.error!.reason).toBe('period_closed');

      const future = await badClose('2027-01');
      expect(future.status, future.text).toBe(400);
      expect(future.body.error.code).toBe('validation_failed');
      for (const bad of ['2026-13', '2026-1', 'october', '10-2026']) {
        const res = await badClose(bad);
        expect(res.status, bad).toBe(400);
        expect(res.body.error.code).toBe('validation_failed');
      }
    });

    it('refuses to close a month with draft invoices in it, listing them', async () => {
      const draft = await issue(50_000, { auto_finalize: false });
      expect(draft.status).toBe('draft');
      const res = await close('2026-12');
      expect(res.status, res.text).toBe(409);
      expect(res.error!.reason).toBe('period_has_drafts');
      expect(res.error!.message).toContain(draft.id);
      expect((await acme.http.POST('/v1/invoices/{id}/void', { path: { id: draft.id } })).status).toBe(200);
    });

    it('records period.closed events and an audit record', async () => {
      const events = await acme.http.GET('/v1/events', { query: { type: 'period.closed' } });
      expect(events.status, events.text).toBe(200);
      expect(events.body.data.map((e) => e.data.object.period)).toContain('2026-10');
    });
  });

  describe('POST /v1/entities/{id}/periods/{period}/reopen', () => {
    it('is for owners only (403 for finance), needs a reason, and is audited', async () => {
      const denied = await asFinance.POST('/v1/entities/{id}/periods/{period}/reopen', {
        path: { id: entityId, period: '2026-10' },
        body: { reason: 'Late invoice' },
      });
      expect(denied.status, denied.text).toBe(403);
      expect((await acme.api('POST', `/v1/entities/${entityId}/periods/2026-10/reopen`, {})).status).toBe(400);
      const res = await acme.http.POST('/v1/entities/{id}/periods/{period}/reopen', {
        path: { id: entityId, period: '2026-10' },
        body: { reason: 'Late invoice from the field team' },
      });
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ status: 'open', reopen_reason: 'Late invoice from the field team', reopened_at: '2026-11-30T19:00:00.000Z' });
      const again = await acme.http.POST('/v1/entities/{id}/periods/{period}/reopen', { path: { id: entityId, period: '2026-10' }, body: { reason: 'again' } });
      expect(again.status).toBe(409);
      const audit = await acme.http.GET('/v1/audit-log', { query: { object_id: entityId } });
      expect(audit.body.data.map((r: { action: string }) => r.action)).toEqual(expect.arrayContaining(['entity.periods.close', 'entity.periods.reopen']));
      const reopened = await acme.http.GET('/v1/events', { query: { type: 'period.reopened' } });
      expect(reopened.body.data).toHaveLength(1);
    });
  });
});

describe('nothing posts into a closed period', () => {
  it('dates a credit note issued while this month is closed, and its entry, in the first open month', async () => {
    t.clock.set('2026-12-10T06:00:00Z');
    const invoice = await issue();
    expect((await close('2026-12')).status).toBe(200);
    const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customerId, invoice_id: invoice.id, amount: 11_800, reason: 'Discount' } });
    expect(note.status, note.text).toBe(201);
    expect(note.body.data.issued_at).toBe('2026-12-31T18:30:00.000Z'); // 1 January 00:00 in India
    const entries = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoice.id } })).body.data as { kind: string; posted_at: string }[];
    expect(entries.find((e) => e.kind === 'credit_note.issued')!.posted_at).toBe('2026-12-31T18:30:00.000Z');
    expect(entries.find((e) => e.kind === 'invoice.finalized')!.posted_at).toBe('2026-12-10T06:00:00.000Z');
    const december = (await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '122026' } })).body.data;
    expect(december.sup_details.osup_det.txval).toBe(1000);
  });
});

describe('POST /v1/gst/returns/{gstr1|gstr3b}/{period}/filed', () => {
  it('records the filing, closes the month, and answers the filed figures ever after', async () => {
    t.clock.set('2027-02-20T06:00:00Z');
    await issue(200_000);
    const filedAt = '2027-02-20T05:00:00.000Z';
    const res = await acme.http.POST('/v1/gst/returns/gstr3b/{period}/filed', {
      path: { period: '2027-02' },
      body: { entity_id: entityId, arn: 'AA2902270012345', filed_at: filedAt },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toMatchObject({ period: '2027-02', status: 'closed', gst_filed: { gstr3b: { filed_at: filedAt, arn: 'AA2902270012345' } } });
    const filed = (await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '022027' } })).body.data;
    // January had only the ₹118 note (₹100 taxable) and no sales: 3.1 never goes negative, so its
    // ₹100 reduction is carried into February (decision 0362): ₹2,000 − ₹100.
    expect(filed.sup_details.osup_det.txval).toBe(1900);
    expect(filed.carried_in!.osup_det!.txval).toBe(100);
    expect((await acme.http.POST('/v1/gst/returns/gstr3b/{period}/filed', { path: { period: '2027-02' }, body: { entity_id: entityId } })).status).toBe(409);

    // The owner reopens February and an invoice and a credit note land in it: the filed GSTR-3B
    // does not change.
    expect(
      (
        await acme.http.POST('/v1/entities/{id}/periods/{period}/reopen', {
          path: { id: entityId, period: '2027-02' },
          body: { reason: 'Credit agreed in February' },
        })
      ).status,
    ).toBe(200);
    const invoice = await issue(100_000);
    const note = await acme.http.POST('/v1/credit-notes', { body: { customer_id: customerId, invoice_id: invoice.id, amount: 11_800 } });
    expect(note.body.data.issued_at).toBe('2027-02-20T06:00:00.000Z');
    expect((await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '022027' } })).body.data).toEqual(filed);
    const csv = await acme.http.GET('/v1/gst/gstr3b', { query: { entity_id: entityId, period: '022027', format: 'csv' } });
    expect(csv.text).toContain('1900.00');
  });

  it('marks GSTR-1 filed separately, with the month already closed', async () => {
    const res = await acme.http.POST('/v1/gst/returns/gstr1/{period}/filed', { path: { period: '2026-12' }, body: { entity_id: entityId } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.gst_filed.gstr1).toEqual({ filed_at: '2027-02-20T06:00:00.000Z', arn: null });
    expect((await periods()).find((p) => p.period === '2026-12')!.gst_filed).toHaveProperty('gstr1');
  });

  it('refuses a future month, a malformed month, a filing date in the future, and another tenant’s entity', async () => {
    const future = await acme.api('POST', '/v1/gst/returns/gstr1/2027-03/filed', { entity_id: entityId });
    expect(future.status, future.text).toBe(400);
    for (const bad of ['2027-13', '27-02', 'feb']) {
      expect((await acme.api('POST', `/v1/gst/returns/gstr1/${bad}/filed`, { entity_id: entityId })).status, bad).toBe(400);
    }
    const later = await acme.api('POST', '/v1/gst/returns/gstr1/2027-01/filed', { entity_id: entityId, filed_at: '2027-02-21T00:00:00Z' });
    expect(later.status, later.text).toBe(400);
    const other = await t.registerTenant({ state_code: '29', gstin: gstinFor('29', 'AAACZ9999Z1Z') });
    const foreign = await other.http.POST('/v1/gst/returns/gstr1/{period}/filed', { path: { period: '2027-01' }, body: { entity_id: entityId } });
    expect(foreign.status).toBe(404);
  });
});
