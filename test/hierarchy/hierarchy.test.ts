import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestKosh, type Tenant, type TestKosh } from '../support/harness.js';
import { createPlan, getSubscription, gstin, karnatakaTenant, pay, subscribe, travelTo } from '../subscriptions/helpers.js';

// Customer hierarchy and consolidated invoices (DESIGN §24, decision 0550). The tenant's entity is
// in Karnataka (29); the parent's GSTIN is in Maharashtra (27), the children's in Karnataka, so an
// invoice to the parent is inter-state (IGST 18%) and one to a child would be intra-state: the
// tax type shows whose place of supply an invoice took.

let t: TestKosh;
let acme: Tenant;
let other: Tenant;

beforeAll(async () => {
  t = await startTestKosh(); // the clock starts at 2026-04-01T00:00:00Z
  acme = await karnatakaTenant(t);
  other = await karnatakaTenant(t);
});
afterAll(() => t.close());

let n = 0;
async function customer(tenant: Tenant, body: Record<string, unknown> = {}) {
  n += 1;
  const res = await tenant.api('POST', '/v1/customers', { email: `h${n}@hierarchy.test`, name: `Customer ${n}`, ...body });
  expect(res.status, res.text).toBe(201);
  return res.body.data as { id: string; name: string; parent_customer_id: string | null; bill_to: string };
}

async function invoicesOfCustomer(tenant: Tenant, customerId: string) {
  const res = await tenant.api('GET', `/v1/invoices?customer_id=${customerId}&limit=100`);
  expect(res.status, res.text).toBe(200);
  return [...res.body.data].reverse();
}

const maharashtra = { gstin: gstin('27CCCCC3333C1Z') };
const karnataka = { gstin: gstin('29BBBBB2222B1Z') };

describe('customer hierarchy', () => {
  describe('set a parent', () => {
    it('stores parent_customer_id and bill_to, self by default', async () => {
      const parent = await customer(acme);
      expect(parent).toMatchObject({ parent_customer_id: null, bill_to: 'self' });
      const child = await customer(acme, { parent_customer_id: parent.id, bill_to: 'parent' });
      expect(child).toMatchObject({ parent_customer_id: parent.id, bill_to: 'parent' });
      const read = await acme.api('GET', `/v1/customers/${child.id}`);
      expect(read.body.data).toMatchObject({ parent_customer_id: parent.id, bill_to: 'parent' });
      // Clearing the parent bills the customer itself again.
      const cleared = await acme.api('PATCH', `/v1/customers/${child.id}`, { parent_customer_id: null });
      expect(cleared.status, cleared.text).toBe(200);
      expect(cleared.body.data).toMatchObject({ parent_customer_id: null, bill_to: 'self' });
    });

    it("refuses bill_to 'parent' without a parent (400 naming bill_to)", async () => {
      const res = await acme.api('POST', '/v1/customers', { email: 'orphan@hierarchy.test', bill_to: 'parent' });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: 'bill_to' })]);
    });

    it('refuses a cycle: itself, or a customer below it (409 customer_hierarchy_cycle)', async () => {
      const a = await customer(acme);
      const b = await customer(acme, { parent_customer_id: a.id });
      const c = await customer(acme, { parent_customer_id: b.id });
      const self = await acme.api('PATCH', `/v1/customers/${a.id}`, { parent_customer_id: a.id });
      expect(self.status).toBe(409);
      expect(self.body.error).toMatchObject({ reason: 'customer_hierarchy_cycle', message: 'a customer cannot be its own parent' });
      // a → b → c; making c a's parent would close the loop c → a → b → c.
      const loop = await acme.api('PATCH', `/v1/customers/${a.id}`, { parent_customer_id: c.id });
      expect(loop.status).toBe(409);
      expect(loop.body.error.reason).toBe('customer_hierarchy_cycle');
      expect((await acme.api('GET', `/v1/customers/${a.id}`)).body.data.parent_customer_id).toBeNull();
    });

    it('refuses a hierarchy deeper than 5 levels (409 customer_hierarchy_too_deep)', async () => {
      // l1 ← l2 ← l3 ← l4 ← l5: five levels, allowed; a sixth under l5 is refused.
      let parent = await customer(acme);
      const levels = [parent];
      for (let i = 2; i <= 5; i += 1) {
        parent = await customer(acme, { parent_customer_id: parent.id });
        levels.push(parent);
      }
      const sixth = await acme.api('POST', '/v1/customers', { email: 'sixth@hierarchy.test', parent_customer_id: levels[4]!.id });
      expect(sixth.status).toBe(409);
      expect(sixth.body.error.reason).toBe('customer_hierarchy_too_deep');
      // Moving a customer with one level below it under l4: l1..l4, it (5), its child (6): refused.
      const top = await customer(acme);
      await customer(acme, { parent_customer_id: top.id });
      const moved = await acme.api('PATCH', `/v1/customers/${top.id}`, { parent_customer_id: levels[3]!.id });
      expect(moved.status).toBe(409);
      expect(moved.body.error.reason).toBe('customer_hierarchy_too_deep');
      // Under l3 it fits: l1, l2, l3, top (4), its child (5).
      const fits = await acme.api('PATCH', `/v1/customers/${top.id}`, { parent_customer_id: levels[2]!.id });
      expect(fits.status, fits.text).toBe(200);
    });

    it("answers 404 for another tenant's parent exactly as for a missing one", async () => {
      const theirs = await customer(other);
      const mine = await customer(acme);
      const foreign = await acme.api('PATCH', `/v1/customers/${mine.id}`, { parent_customer_id: theirs.id });
      const missing = await acme.api('PATCH', `/v1/customers/${mine.id}`, { parent_customer_id: '00000000-0000-7000-8000-000000000000' });
      expect(foreign.status).toBe(404);
      expect(missing.status).toBe(404);
      expect(foreign.body.error.message).toBe(missing.body.error.message);
      const created = await acme.api('POST', '/v1/customers', { email: 'foreign@hierarchy.test', parent_customer_id: theirs.id });
      expect(created.status).toBe(404);
    });
  });

  describe('consolidated invoices', () => {
    let parent: { id: string };
    let one: { id: string; name: string };
    let two: { id: string; name: string };
    let alone: { id: string };
    let subOne: { id: string };
    let subTwo: { id: string };
    let subUsd: { id: string };
    let subAlone: { id: string };

    beforeAll(async () => {
      parent = await customer(acme, { name: 'Parent Group', ...maharashtra });
      one = await customer(acme, { name: 'Child One', ...karnataka, parent_customer_id: parent.id, bill_to: 'parent' });
      two = await customer(acme, { name: 'Child Two', parent_customer_id: parent.id, bill_to: 'parent' });
      // A child that pays for itself.
      alone = await customer(acme, { name: 'Child Alone', ...karnataka, parent_customer_id: parent.id });
      const entity = (await acme.api('GET', '/v1/entities')).body.data[0].id;
      await acme.api('PUT', `/v1/entities/${entity}/exchange-rates`, { currency: 'USD', rate: '83' });
      const inr = await createPlan(acme, { amount: 100_000 });
      const usd = await createPlan(acme, { amount: 1_500, currency: 'USD' });
      subOne = await subscribe(acme, { customer_id: one.id, plan_id: inr.id });
      subTwo = await subscribe(acme, { customer_id: two.id, plan_id: inr.id, quantity: 2 });
      subUsd = await subscribe(acme, { customer_id: one.id, plan_id: usd.id });
      subAlone = await subscribe(acme, { customer_id: alone.id, plan_id: inr.id });
    });

    it("invoices a child's first period to the parent, with the child named on the line", async () => {
      const toParent = await invoicesOfCustomer(acme, parent.id);
      // Three subscription_create invoices, one per child subscription billed to the parent.
      expect(toParent.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_create', 'subscription_create']);
      const first = toParent.find((i) => i.subscription_id === subOne.id)!;
      // ₹1 000.00 to a Maharashtra GSTIN from Karnataka: IGST 18% = 18 000 paise; 118 000 in all.
      expect(first).toMatchObject({ customer_id: parent.id, subtotal: 100_000, igst_amount: 18_000, cgst_amount: 0, total: 118_000, place_of_supply: '27' });
      expect(first.lines[0]).toMatchObject({ customer_id: one.id, subscription_id: subOne.id });
      expect(first.lines[0].description).toMatch(/^Child One: /);
      expect(await invoicesOfCustomer(acme, one.id)).toEqual([]);
    });

    it("previews a child's upcoming renewal as the parent's consolidated invoice, the line naming the child", async () => {
      // The renewal of 2026-05-01 for Child One: ₹1 000.00 to the parent's Maharashtra GSTIN from
      // Karnataka: IGST 18% = 18 000 paise, 118 000 in all (as the child itself — Karnataka — it
      // would be CGST 9 000 + SGST 9 000).
      const res = await acme.api('GET', `/v1/subscriptions/${subOne.id}/upcoming-invoice`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({
        id: null,
        customer_id: parent.id,
        subscription_id: null,
        billing_reason: 'subscription_cycle',
        subtotal: 100_000,
        igst_amount: 18_000,
        cgst_amount: 0,
        sgst_amount: 0,
        total: 118_000,
        place_of_supply: '27',
        period_start: '2026-05-01T00:00:00.000Z',
        period_end: '2026-06-01T00:00:00.000Z',
        metadata: { consolidated: true },
      });
      expect(res.body.data.lines).toHaveLength(1);
      expect(res.body.data.lines[0]).toMatchObject({ customer_id: one.id, subscription_id: subOne.id, amount: 100_000 });
      expect(res.body.data.lines[0].description).toMatch(/^Child One: /);
      // A child that bills itself previews its own invoice at its own place of supply.
      const own = await acme.api('GET', `/v1/subscriptions/${subAlone.id}/upcoming-invoice`);
      expect(own.body.data).toMatchObject({ customer_id: alone.id, subscription_id: subAlone.id, cgst_amount: 9_000, sgst_amount: 9_000, igst_amount: 0 });
      expect(own.body.data.lines[0]).toMatchObject({ customer_id: null, subscription_id: null });
    });

    it('renews two children on the same day onto one invoice per currency, each line naming its child', async () => {
      await travelTo(t, '2026-05-01T00:00:00Z');
      const cycle = (await invoicesOfCustomer(acme, parent.id)).filter((i) => i.billing_reason === 'subscription_cycle');
      expect(cycle).toHaveLength(2); // INR and USD
      const inr = cycle.find((i) => i.currency === 'INR')!;
      // Child One 1 × 100 000 + Child Two 2 × 100 000 = 300 000 paise; IGST 18% = 54 000; 354 000.
      expect(inr).toMatchObject({
        customer_id: parent.id,
        subscription_id: null,
        subtotal: 300_000,
        igst_amount: 54_000,
        cgst_amount: 0,
        sgst_amount: 0,
        total: 354_000,
        place_of_supply: '27',
        period_start: '2026-05-01T00:00:00.000Z',
        period_end: '2026-06-01T00:00:00.000Z',
        metadata: { consolidated: true },
      });
      const lines = inr.lines.map((l: { customer_id: string; subscription_id: string; quantity: number; amount: number; description: string }) => ({
        customer_id: l.customer_id,
        subscription_id: l.subscription_id,
        quantity: l.quantity,
        amount: l.amount,
        named: l.description.split(':')[0],
      }));
      expect(lines).toEqual(
        expect.arrayContaining([
          { customer_id: one.id, subscription_id: subOne.id, quantity: 1, amount: 100_000, named: 'Child One' },
          { customer_id: two.id, subscription_id: subTwo.id, quantity: 2, amount: 200_000, named: 'Child Two' },
        ]),
      );
      expect(lines).toHaveLength(2);
      // $15.00 = 1 500 cents; IGST 18% = 270; 1 770.
      const usd = cycle.find((i) => i.currency === 'USD')!;
      expect(usd).toMatchObject({ subtotal: 1_500, igst_amount: 270, total: 1_770 });
      expect(usd.lines).toEqual([expect.objectContaining({ customer_id: one.id, subscription_id: subUsd.id })]);
      // Each subscription points at the invoice that billed it.
      expect((await getSubscription(acme, subOne.id)).latest_invoice_id).toBe(inr.id);
      expect((await getSubscription(acme, subTwo.id)).latest_invoice_id).toBe(inr.id);
      expect((await getSubscription(acme, subUsd.id)).latest_invoice_id).toBe(usd.id);
    });

    it('leaves a child that bills itself on its own invoice, taxed at its own place of supply', async () => {
      const own = await invoicesOfCustomer(acme, alone.id);
      expect(own.map((i) => i.billing_reason)).toEqual(['subscription_create', 'subscription_cycle']);
      // Karnataka to Karnataka: CGST 9% 9 000 + SGST 9% 9 000 on 100 000.
      expect(own[1]).toMatchObject({ subscription_id: subAlone.id, subtotal: 100_000, cgst_amount: 9_000, sgst_amount: 9_000, igst_amount: 0, total: 118_000 });
      expect(own[1].lines[0]).toMatchObject({ customer_id: null, subscription_id: null });
    });

    it("shows the child's portal who pays, and offers no way to pay the parent's invoice", async () => {
      const inr = (await invoicesOfCustomer(acme, parent.id)).find((i) => i.billing_reason === 'subscription_cycle' && i.currency === 'INR')!;
      const link = await acme.api('POST', `/v1/customers/${one.id}/portal-sessions`);
      expect(link.status, link.text).toBe(201);
      const opened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(link.body.data.token)}` });
      expect(opened.status).toBe(303);
      const header = opened.headers['set-cookie'];
      const cookie = String(Array.isArray(header) ? header[0] : header).split(';')[0]!;
      const me = await t.call({ method: 'GET', url: '/portal/api/me', headers: { cookie } });
      expect(me.status).toBe(200);
      expect(me.body.data.billed_to).toEqual({ name: 'Parent Group' });
      const page = await t.call({ method: 'GET', url: '/portal', headers: { cookie } });
      expect(page.text).toContain('Billed to Parent Group.');
      expect(page.text).not.toContain(`/portal/invoices/${inr.id}/pay`);
      const checkout = await t.call({
        method: 'POST',
        url: `/portal/api/invoices/${inr.id}/checkout`,
        headers: { cookie, 'x-csrf-token': me.body.data.csrf_token },
      });
      expect(checkout.status).toBe(404);
      // The parent's own portal has no "billed to" and lists the consolidated invoice with its pay button.
      const parentLink = await acme.api('POST', `/v1/customers/${parent.id}/portal-sessions`);
      const parentOpened = await t.call({ method: 'GET', url: `/portal/login?token=${encodeURIComponent(parentLink.body.data.token)}` });
      const parentHeader = parentOpened.headers['set-cookie'];
      const parentCookie = String(Array.isArray(parentHeader) ? parentHeader[0] : parentHeader).split(';')[0]!;
      const parentPage = await t.call({ method: 'GET', url: '/portal', headers: { cookie: parentCookie } });
      expect(parentPage.text).not.toContain('Billed to');
      expect(parentPage.text).toContain(`/portal/invoices/${inr.id}/pay`);
    });

    it('settles the consolidated invoice with one payment from the parent', async () => {
      const inr = (await invoicesOfCustomer(acme, parent.id)).find((i) => i.billing_reason === 'subscription_cycle' && i.currency === 'INR')!;
      await pay(acme, inr);
      const paid = await acme.api('GET', `/v1/invoices/${inr.id}`);
      expect(paid.body.data).toMatchObject({ status: 'paid', amount_paid: 354_000, amount_due: 0 });
    });

    it("invoices an immediate cancel's last charges to the parent too, naming the child", async () => {
      const three = await customer(acme, { name: 'Child Three', parent_customer_id: parent.id, bill_to: 'parent' });
      const plan = await createPlan(acme, { amount: 100_000 });
      const sub = await subscribe(acme, { customer_id: three.id, plan_id: plan.id });
      const charge = await acme.api('POST', `/v1/customers/${three.id}/pending-charges`, {
        description: 'Setup',
        amount: 10_000,
        hsn_code: '998314',
        subscription_id: sub.id,
      });
      expect(charge.status, charge.text).toBe(201);
      const canceled = await acme.api('POST', `/v1/subscriptions/${sub.id}/cancel`, { at_period_end: false });
      expect(canceled.status, canceled.text).toBe(200);
      const final = (await invoicesOfCustomer(acme, parent.id)).find((i) => i.billing_reason === 'subscription_final' && i.subscription_id === sub.id);
      // ₹100 setup to the Maharashtra parent: IGST 18 % = 1 800; 11 800.
      expect(final).toMatchObject({ customer_id: parent.id, subtotal: 10_000, igst_amount: 1_800, total: 11_800 });
      expect(final.lines).toEqual([expect.objectContaining({ description: 'Child Three: Setup', customer_id: three.id, subscription_id: sub.id })]);
      expect(await invoicesOfCustomer(acme, three.id)).toEqual([]);
    });
  });
  describe('a child with a minimum commitment', () => {
    it("counts what the parent's consolidated invoices billed it: no true-up while its fee covers the minimum", async () => {
      const payer = await customer(acme, { name: 'Committed Payer', ...maharashtra });
      const child = await customer(acme, { name: 'Committed Child', parent_customer_id: payer.id, bill_to: 'parent' });
      const plan = await createPlan(acme, { amount: 100_000 });
      // ₹1 000.00 a month committed, ₹1 000.00 a month billed: nothing to true up in any period.
      const sub = await subscribe(acme, { customer_id: child.id, plan_id: plan.id, minimum_commitment: { amount: 100_000 } });
      const second = new Date(new Date(sub.current_period_end).getTime() + 31 * 86_400_000).toISOString();
      await travelTo(t, sub.current_period_end);
      await travelTo(t, second);
      const lines = (await invoicesOfCustomer(acme, payer.id)).flatMap((i) => i.lines as { description: string }[]);
      expect(lines.filter((l) => /true-up/i.test(l.description))).toEqual([]);
    });
  });

  describe('delinquency of a consolidated invoice', () => {
    it("moves the children's subscriptions to past_due while the parent's invoice is overdue, and back to active once it is paid", async () => {
      const payer = await customer(acme, { name: 'Late Payer', ...maharashtra });
      const a = await customer(acme, { name: 'Child A', parent_customer_id: payer.id, bill_to: 'parent' });
      const b = await customer(acme, { name: 'Child B', parent_customer_id: payer.id, bill_to: 'parent' });
      const plan = await createPlan(acme, { amount: 100_000 });
      const subA = await subscribe(acme, { customer_id: a.id, plan_id: plan.id });
      const subB = await subscribe(acme, { customer_id: b.id, plan_id: plan.id });
      // The first invoices (one per subscription, to the parent) are paid at once.
      for (const invoice of await invoicesOfCustomer(acme, payer.id)) await pay(acme, invoice);
      const renewal = subA.current_period_end as string;
      await travelTo(t, renewal);
      const [cycle] = (await invoicesOfCustomer(acme, payer.id)).filter((i) => i.billing_reason === 'subscription_cycle');
      // 2 × ₹1 000.00 + IGST 18 % = 236 000 paise, one consolidated invoice, unpaid.
      expect(cycle).toMatchObject({ subscription_id: null, subtotal: 200_000, total: 236_000, status: 'open' });
      expect((await getSubscription(acme, subA.id)).status).toBe('active');

      // A day past its due date the invoice is overdue: both children's subscriptions are past_due.
      await travelTo(t, new Date(new Date(cycle.due_date).getTime() + 86_400_000).toISOString());
      expect((await getSubscription(acme, subA.id)).status).toBe('past_due');
      expect((await getSubscription(acme, subB.id)).status).toBe('past_due');

      // The parent pays; the next billing run brings both back.
      await pay(acme, cycle);
      await travelTo(t, new Date(new Date(cycle.due_date).getTime() + 86_400_000 + 120_000).toISOString());
      expect((await getSubscription(acme, subA.id)).status).toBe('active');
      expect((await getSubscription(acme, subB.id)).status).toBe('active');
    });
  });

  describe("a child's unused time", () => {
    type Line = { account_code: number; debit: number; credit: number; customer_id: string | null; invoice_id: string | null; credit_note_id: string | null };

    /** A child billed to a new parent, subscribed at ₹1 000.00 a month; its first invoice (to the parent) left open. */
    async function childOnParentInvoice(name: string) {
      const payer = await customer(acme, { name: `${name} Payer`, ...maharashtra });
      const child = await customer(acme, { name: `${name} Child`, ...karnataka, parent_customer_id: payer.id, bill_to: 'parent' });
      const plan = await createPlan(acme, { amount: 100_000 });
      const sub = await subscribe(acme, { customer_id: child.id, plan_id: plan.id });
      const [invoice] = await invoicesOfCustomer(acme, payer.id);
      expect(invoice).toMatchObject({ customer_id: payer.id, subscription_id: sub.id, status: 'open', total: 118_000 });
      // Ten days into the period.
      t.clock.set(new Date(Date.parse(sub.current_period_start) + 10 * 86_400_000).toISOString());
      return { payer, child, sub, invoice: invoice as { id: string } };
    }

    /** The note, the parent's invoice after it and the note's ledger lines. */
    async function creditedTo(noteId: string, invoiceId: string) {
      const note = await acme.http.GET('/v1/credit-notes/{id}', { path: { id: noteId } });
      expect(note.status, note.text).toBe(200);
      const invoice = await acme.http.GET('/v1/invoices/{id}', { path: { id: invoiceId } });
      const entries = await acme.http.GET('/v1/ledger/journal-entries', { query: { limit: 100 } });
      expect(entries.status, entries.text).toBe(200);
      const lines = (entries.body!.data as { reference_id: string; lines: Line[] }[])
        .flatMap((e) => e.lines)
        .filter((l) => l.credit_note_id === noteId || (l.invoice_id === invoiceId && l.account_code === 1100));
      return { note: note.body!.data, invoice: invoice.body!.data, lines };
    }

    it("credits a prorated cancel to the parent who was invoiced, on the parent's invoice and receivable", async () => {
      const { payer, child, sub, invoice } = await childOnParentInvoice('Canceled');
      const canceled = await acme.http.POST('/v1/subscriptions/{id}/cancel', { path: { id: sub.id }, body: { at_period_end: false, prorate: true } });
      expect(canceled.status, canceled.text).toBe(200);
      const proration = (canceled.body!.data as { proration: { credit_note_id: string | null; unused_credit: number } }).proration;
      expect(proration.credit_note_id).not.toBeNull();
      const credit = proration.unused_credit;
      expect(credit).toBeGreaterThan(0);
      const { note, invoice: after, lines } = await creditedTo(proration.credit_note_id!, invoice.id);
      // On the parent's invoice, at the parent's place of supply (IGST).
      expect(note).toMatchObject({ customer_id: payer.id, invoice_id: invoice.id, amount: credit, cgst_amount: 0 });
      expect(note.igst_amount).toBeGreaterThan(0);
      // The note settled part of what the parent's invoice owed.
      expect(after).toMatchObject({ customer_id: payer.id, amount_due: 118_000 - credit });
      // Every ledger line of the note names the parent — the receivable it reduces is the parent's.
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter((l) => l.customer_id !== null).every((l) => l.customer_id === payer.id)).toBe(true);
      expect(lines.some((l) => l.customer_id === child.id)).toBe(false);
      const receivable = lines.filter((l) => l.account_code === 1100 && l.credit_note_id === null && l.credit > 0);
      expect(receivable).toEqual([expect.objectContaining({ customer_id: payer.id, invoice_id: invoice.id, credit })]);
      const childNotes = await acme.http.GET('/v1/credit-notes', { query: { customer_id: child.id } });
      expect(childNotes.body!.data).toEqual([]);
    });

    it("credits a downgrade's unused time to the parent too", async () => {
      const { payer, child, sub, invoice } = await childOnParentInvoice('Downgraded');
      const cheaper = await createPlan(acme, { amount: 50_000 });
      const changed = await acme.http.POST('/v1/subscriptions/{id}/change-plan', { path: { id: sub.id }, body: { plan_id: cheaper.id } });
      expect(changed.status, changed.text).toBe(200);
      const notes = await acme.http.GET('/v1/credit-notes', { query: { invoice_id: invoice.id } });
      expect(notes.body!.data).toEqual([expect.objectContaining({ customer_id: payer.id, invoice_id: invoice.id })]);
      const childNotes = await acme.http.GET('/v1/credit-notes', { query: { customer_id: child.id } });
      expect(childNotes.body!.data).toEqual([]);
    });
  });
});
