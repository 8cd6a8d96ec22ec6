import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';

/**
 * Documents are dated where their entries are (DESIGN §18): once April is closed, an invoice
 * finalized on 20 April is May's document — issued 1 May 00:00 IST (30 April 18:30 UTC) — and so
 * are a credit note's void and expiry.
 */
const gstin = (base: string) => base + gstinCheckCharacter(base);
const MAY_FIRST_IST = '2026-04-30T18:30:00.000Z';

let t: TestKosh;
let acme: Tenant;
let entityId: string;
let customer: string;
let other: string; // holds the notes, so the invoice does not spend them

beforeAll(async () => {
  t = await startTestKosh(); // the clock starts on 1 April 2026, 05:30 IST
  acme = await t.registerTenant({ gstin: gstin('29AAACA1234A1Z'), state_code: '29' });
  entityId = (await acme.http.GET('/v1/entities')).body.data[0]!.id;
  customer = (await acme.http.POST('/v1/customers', { body: { email: 'ka@example.in', gstin: gstin('29BBBBB2222B1Z') } })).body.data.id;
  other = (await acme.http.POST('/v1/customers', { body: { email: 'other@example.in', gstin: gstin('29DDDDD4444D1Z') } })).body.data.id;
});
afterAll(() => t.close());

describe('documents dated in the first open period', () => {
  it('dates an invoice finalized in a closed month, a credit note’s void and another’s expiry in the next month', async () => {
    t.clock.advanceDays(19); // 20 April
    const notes = [
      await acme.http.POST('/v1/credit-notes', { body: { customer_id: other, amount: 500, currency: 'INR', reason: 'goodwill' } }),
      await acme.http.POST('/v1/credit-notes', {
        body: {
          customer_id: other,
          amount: 700,
          currency: 'INR',
          reason: 'goodwill',
          expires_at: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
        },
      }),
    ];
    for (const n of notes) expect(n.status, n.text).toBe(201);

    const closed = await acme.http.POST('/v1/entities/{id}/periods/{period}/close', { path: { id: entityId, period: '2026-04' } });
    expect(closed.status, closed.text).toBe(200);
    // Drafted after the close (a draft is no tax document), finalized the same day.
    const invoice = await acme.http.POST('/v1/invoices', {
      body: { customer_id: customer, currency: 'INR', lines: [{ description: 'Plan', unit_amount: 10_000 }], auto_finalize: false },
    });
    expect(invoice.status, invoice.text).toBe(201);

    const finalized = await acme.http.POST('/v1/invoices/{id}/finalize', { path: { id: invoice.body.data.id } });
    expect(finalized.status, finalized.text).toBe(200);
    expect(finalized.body.data.issued_at).toBe(MAY_FIRST_IST);
    const [entry] = (await acme.http.GET('/v1/invoices/{id}/journal-entries', { path: { id: invoice.body.data.id } })).body.data;
    expect(entry?.posted_at).toBe(MAY_FIRST_IST);

    const voided = await acme.http.POST('/v1/credit-notes/{id}/void', { path: { id: notes[0]!.body.data.id } });
    expect(voided.status, voided.text).toBe(200);
    expect(voided.body.data.voided_at).toBe(MAY_FIRST_IST);

    t.clock.advanceDays(2); // 22 April: the second note's expiry is due, April still closed
    await t.kosh.worker.drain();
    const expired = (await acme.http.GET('/v1/credit-notes/{id}', { path: { id: notes[1]!.body.data.id } })).body.data;
    expect(expired.status).toBe('expired');
    const row = await t.database.db.selectFrom('credit_notes').select('expired_at').where('id', '=', notes[1]!.body.data.id).executeTakeFirstOrThrow();
    expect(new Date(row.expired_at as Date).toISOString()).toBe(MAY_FIRST_IST);
    const entries = (await acme.http.GET('/v1/ledger/journal-entries', { query: { kind: 'credit_note.expired' } })).body.data;
    expect(entries.map((e) => e.posted_at)).toEqual([MAY_FIRST_IST]);
  });

  it("reads report dates as calendar days in the entity's zone: 30 April 18:30 UTC is 1 May in India", async () => {
    // The invoice above was booked at 1 May 00:00 IST = 30 April 18:30 UTC.
    const kinds = async (from: string, to: string) =>
      (await acme.http.GET('/v1/ledger/journal-entries', { query: { entity_id: entityId, kind: 'invoice.finalized', from, to } })).body.data.map(
        (e) => e.posted_at,
      );
    expect(await kinds('2026-05-01', '2026-05-01')).toEqual([MAY_FIRST_IST]);
    expect(await kinds('2026-04-01', '2026-04-30')).toEqual([]);
    const receivable = async (asOf: string) => {
      const tb = (await acme.http.GET('/v1/ledger/trial-balance', { query: { entity_id: entityId, currency: 'INR', as_of: asOf } })).body.data;
      return tb.accounts.find((a) => a.code === 1100)?.balance ?? 0;
    };
    expect(await receivable('2026-04-30')).toBe(0); // April's books, closed before the invoice
    expect(await receivable('2026-05-01')).toBe(11_800); // ₹100.00 + 18 % GST
    const csv = (await acme.http.GET('/v1/ledger/export', { query: { entity_id: entityId, from: '2026-04-01', to: '2026-04-30' } })).text;
    expect(csv).not.toContain('invoice.finalized');
  });
});
