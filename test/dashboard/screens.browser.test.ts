import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, chromiumSkipNote, hasChromium, screenshotAndSeriousAxeViolations, startBrowserKosh, signInWithApiKey } from '../support/browser.js';
import type { Tenant, TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';

/**
 * The billing screens in Chromium, as a finance person would use them (names, never ids), each
 * journey checked over the API: coupons (create, archive), a one-off invoice (draft with lines →
 * finalize), refunds (by invoice line, and of a credit balance), credit grants, features attached
 * to a plan, period close / reopen / GST filing marks, the audit log filtered by names, and a
 * support operator who is shown none of the money actions. Screenshots in test-output/screens/,
 * axe-core with no serious or critical violation on every screen.
 */
const skipNote = chromiumSkipNote('dashboard screens');
const OUT = 'test-output/screens';

let t: TestKosh;
let browser: Browser;
let base: string;
let tenant: Tenant;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
let customerId: string;
let planId: string;

async function check(p: Page, name: string): Promise<void> {
  const serious = await screenshotAndSeriousAxeViolations(p, `${OUT}/${name}.png`);
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([]);
}

async function go(p: Page, path: string, heading: string | RegExp): Promise<void> {
  await p.goto(`${base}/dashboard${path}`);
  await p.getByRole('heading', { level: 1, name: heading }).waitFor();
}

function rupees(minor: number): string {
  return new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR' }).format(minor / 100);
}

beforeAll(async () => {
  if (!hasChromium) return;
  buildDashboard();
  mkdirSync(OUT, { recursive: true });
  ({ t, browser, base } = await startBrowserKosh());
  // A GST-registered supplier in Karnataka (29); the customer is in Karnataka too: CGST + SGST.
  tenant = await t.registerTenant({ state_code: '29', gstin: `29AAPFU0939F1Z${gstinCheckCharacter('29AAPFU0939F1Z')}` });
  customerId = (
    await tenant.api('POST', '/v1/customers', {
      email: 'accounts@acme.test',
      name: 'Acme Traders',
      billing_address: { line1: '12 MG Road', city: 'Bengaluru', state_code: '29', postal_code: '560001', country: 'IN' },
    })
  ).body.data.id;
  planId = (await tenant.api('POST', '/v1/plans', { name: 'Growth yearly', interval_unit: 'year', amount: 12_000_000, currency: 'INR' })).body.data.id;
  context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  // The owner's API key (development sign-in): every action is offered.
  await signInWithApiKey(page, base, tenant.key);
}, 240_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`the billing screens in a browser${skipNote}`, () => {
  it('creates a percentage and an amount coupon by form (the form resets), and archives one', async () => {
    await go(page, '/coupons', 'Coupons');
    await page.getByText('New coupon').click();
    const form = page.locator('details.create');
    await form.getByLabel('Code').fill('LAUNCH20');
    await form.getByLabel('Name', { exact: true }).fill('Launch: 20% off for 3 months');
    await form.getByLabel('Percent off').fill('20');
    await form.getByLabel('Duration').selectOption('repeating');
    await form.getByLabel('Months').fill('3');
    await form.getByLabel('Redemption limit').fill('100');
    await form.getByLabel('Redeem by').fill('2026-06-30');
    await form.getByRole('combobox', { name: 'Only for the plan (optional)' }).fill('Growth');
    await form.getByRole('option', { name: /Growth yearly/ }).click();
    await check(page, '01-coupon-form');
    await form.getByRole('button', { name: 'Create coupon' }).click();
    await page.getByText('Coupon LAUNCH20 created: 20% off, for 3 months.').waitFor();
    // Reset after success: the code is empty and the choices are back to their defaults.
    expect(await form.getByLabel('Code').inputValue()).toBe('');
    expect(await form.getByLabel('Duration').inputValue()).toBe('once');
    expect(await form.getByLabel('Months').count()).toBe(0);

    await form.getByLabel('Code').fill('FLAT500');
    await form.getByLabel('Discount type').selectOption('amount');
    await form.getByLabel('Amount off').fill('500.00');
    await form.getByRole('button', { name: 'Create coupon' }).click();
    await page.getByText('Coupon FLAT500 created: ₹500.00 off, once.').waitFor();
    const flatRow = page.locator('td[data-label="Code"]', { hasText: 'FLAT500' });
    await flatRow.waitFor();

    const coupons = (await tenant.api('GET', '/v1/coupons')).body.data as Record<string, unknown>[];
    expect(coupons).toHaveLength(2);
    const launch = coupons.find((c) => c.code === 'LAUNCH20')!;
    expect(launch).toMatchObject({ percent_off: 20, amount_off: null, duration: 'repeating', duration_in_months: 3, max_redemptions: 100, plan_ids: [planId] });
    // 30 June 23:59:59 in India (UTC+5:30) is 18:29:59 UTC.
    expect(new Date(launch.redeem_by as string).toISOString()).toBe('2026-06-30T18:29:59.000Z');
    // ₹500.00 is 50,000 paise; the name defaults to the code.
    expect(coupons.find((c) => c.code === 'FLAT500')).toMatchObject({
      amount_off: 50_000,
      currency: 'INR',
      duration: 'once',
      percent_off: null,
      name: 'FLAT500',
    });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Archive FLAT500' }).click();
    await page.getByText('Coupon FLAT500 archived.').waitFor();
    // The restricted coupon names its plan.
    await page.getByRole('row').filter({ hasText: 'LAUNCH20' }).getByRole('link', { name: 'Growth yearly' }).waitFor();
    await flatRow.waitFor({ state: 'detached' });
    const flat = ((await tenant.api('GET', '/v1/coupons')).body.data as { code: string; active: boolean }[]).find((c) => c.code === 'FLAT500');
    expect(flat?.active).toBe(false);
    await check(page, '02-coupons');
  }, 120_000);

  let invoiceId: string;
  it('drafts a one-off invoice with two lines by picking the customer, then finalizes it', async () => {
    await go(page, `/customers/${customerId}`, 'Acme Traders');
    await page.getByRole('link', { name: 'New one-off invoice for this customer' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoices' }).waitFor();
    const form = page.locator('details.create');
    // The customer the page came from is chosen already (by name).
    await form.getByText('Chosen: Acme Traders').waitFor();
    const line1 = form.getByRole('group', { name: 'Line 1' });
    await line1.getByLabel('Description').fill('Implementation consulting');
    await line1.getByLabel('Unit price (before GST)').fill('25,000.00');
    await line1.getByLabel('Quantity').fill('2');
    await line1.getByLabel('HSN/SAC').fill('998314');
    await line1.getByLabel('GST rate % (optional)').fill('18');
    await form.getByRole('button', { name: 'Add a line' }).click();
    const line2 = form.getByRole('group', { name: 'Line 2' });
    await line2.getByLabel('Description').fill('Setup fee');
    await line2.getByLabel('Unit price (before GST)').fill('10,000.00');
    await line2.getByLabel('HSN/SAC').fill('998313');
    await line2.getByLabel('GST rate % (optional)').fill('18');
    await check(page, '03-one-off-invoice-form');
    await form.getByRole('button', { name: 'Create draft invoice' }).click();
    await page.getByRole('heading', { level: 1, name: 'Invoice (draft)' }).waitFor();
    invoiceId = page.url().split('/').pop()!;
    await page.getByRole('cell', { name: '998313' }).waitFor();
    const draft = (await tenant.api('GET', `/v1/invoices/${invoiceId}`)).body.data;
    // 2 × ₹25,000.00 + 1 × ₹10,000.00 = ₹60,000.00 taxable; GST 18% = ₹10,800.00; total ₹70,800.00.
    expect([draft.status, draft.customer_id, draft.subtotal, draft.tax_amount, draft.total]).toEqual(['draft', customerId, 6_000_000, 1_080_000, 7_080_000]);
    expect(
      draft.lines.map((l: { description: string; quantity: number; unit_amount: number; hsn_code: string }) => [
        l.description,
        l.quantity,
        l.unit_amount,
        l.hsn_code,
      ]),
    ).toEqual([
      ['Implementation consulting', 2, 2_500_000, '998314'],
      ['Setup fee', 1, 1_000_000, '998313'],
    ]);
    await check(page, '04-draft-invoice');
    await page.getByRole('button', { name: 'Finalize' }).click();
    await page.getByRole('heading', { level: 1, name: /^Invoice INV-/ }).waitFor();
    const open = (await tenant.api('GET', `/v1/invoices/${invoiceId}`)).body.data;
    expect(open.status).toBe('open');
    expect(open.number).toMatch(/^INV-/);
    await page.getByText(rupees(7_080_000)).first().waitFor();
  }, 120_000);

  it('refunds one line of the paid invoice, then part of a credit balance from the customer page', async () => {
    const paid = await tenant.api('POST', '/v1/payments/offline', {
      customer_id: customerId,
      invoice_id: invoiceId,
      payment_type: 'bank_transfer',
      amount: 7_080_000,
      currency: 'INR',
      reference_number: 'UTR-ACME-1',
    });
    expect(paid.status).toBe(201);
    const setupLine = (await tenant.api('GET', `/v1/invoices/${invoiceId}`)).body.data.lines[1];
    await go(page, `/invoices/${invoiceId}`, /^Invoice INV-/);
    const refund = page.getByRole('form', { name: 'Refund' });
    // The setup fee with its GST: ₹10,000.00 + 18% = ₹11,800.00.
    await refund.getByLabel('Setup fee (998313)').fill('11,800.00');
    await check(page, '05-refund-by-line');
    await refund.getByRole('button', { name: 'Refund' }).click();
    await page.getByText(/^Refund of ₹11,800\.00 /).waitFor();
    const refunds = (await tenant.api('GET', `/v1/refunds?invoice_id=${invoiceId}`)).body.data;
    expect(refunds.map((r: { amount: number; credit_note_issued: boolean }) => [r.amount, r.credit_note_issued])).toEqual([[1_180_000, true]]);
    const note = (await tenant.api('GET', `/v1/credit-notes/${refunds[0].credit_note_id}`)).body.data;
    // The refund's credit note credits the setup-fee line only: ₹1,800.00 of its GST reversed.
    expect(note.lines.map((l: { invoice_line_id: string }) => l.invoice_line_id)).toEqual([setupLine.id]);
    expect(note.tax_amount).toBe(180_000);

    // A credit note kept as balance (₹5,900.00 = ₹5,000.00 + 18%), then ₹2,000.00 of it refunded from the customer page.
    const credit = await tenant.api('POST', '/v1/credit-notes', { customer_id: customerId, invoice_id: invoiceId, amount: 590_000, reason: 'Goodwill' });
    expect(credit.status).toBe(201);
    await go(page, `/customers/${customerId}`, 'Acme Traders');
    const fromBalance = page.getByRole('form', { name: 'Refund credit balance' });
    await fromBalance.getByLabel('From the credit note').selectOption({ label: `${credit.body.data.number} — ₹5,900.00 unspent` });
    await fromBalance.getByLabel('Amount').fill('2,000.00');
    await fromBalance.getByRole('button', { name: 'Refund credit' }).click();
    await page.getByText(new RegExp(`^Refund of ₹2,000\\.00 from ${credit.body.data.number} `)).waitFor();
    // ₹5,900.00 − ₹2,000.00 = ₹3,900.00 left on the note.
    expect((await tenant.api('GET', `/v1/credit-notes/${credit.body.data.id}`)).body.data.balance).toBe(390_000);
    const all = (await tenant.api('GET', `/v1/refunds?customer_id=${customerId}`)).body.data as { amount: number }[];
    expect(all.map((r) => r.amount).sort((a, b) => a - b)).toEqual([200_000, 1_180_000]);
    await check(page, '06-customer-credit');
  }, 120_000);

  it("grants a customer credit, and attaches features to a plan the customer's entitlements then show", async () => {
    await go(page, `/customers/${customerId}`, 'Acme Traders');
    const grant = page.getByRole('form', { name: 'Grant credit' });
    await grant.getByLabel('Amount').fill('1,000.00');
    await grant.getByLabel('Name').fill('Launch credit');
    await grant.getByLabel('Expires on').fill('2026-09-30');
    await grant.getByRole('button', { name: 'Grant credit' }).click();
    await page.getByText('Promotional credit of ₹1,000.00 granted.').waitFor();
    await page.getByRole('cell', { name: 'Launch credit', exact: true }).waitFor();
    expect(await grant.getByLabel('Amount').inputValue()).toBe('');
    const grants = (await tenant.api('GET', `/v1/customers/${customerId}/credit-grants`)).body;
    expect(grants.data.map((g: { name: string; category: string; amount: number; remaining: number }) => [g.name, g.category, g.amount, g.remaining])).toEqual([
      ['Launch credit', 'promotional', 100_000, 100_000],
    ]);
    expect(new Date(grants.data[0].expires_at).toISOString()).toBe('2026-09-30T18:29:59.000Z');

    await go(page, '/features', 'Features');
    await page.getByText('New feature').click();
    const form = page.locator('details.create');
    for (const [name, key, type] of [
      ['Seats', 'seats', 'quantity'],
      ['Priority support', 'priority_support', 'boolean'],
    ] as const) {
      await form.getByLabel('Name').fill(name);
      await form.getByLabel('Key').fill(key);
      await form.getByLabel('Type').selectOption(type);
      await form.getByRole('button', { name: 'Create feature' }).click();
      await page.getByText(`Feature ${name} created.`).waitFor();
    }
    await check(page, '07-features');
    expect(((await tenant.api('GET', '/v1/features')).body.data as { key: string; type: string }[]).map((f) => [f.key, f.type]).sort()).toEqual([
      ['priority_support', 'boolean'],
      ['seats', 'quantity'],
    ]);

    await go(page, `/plans/${planId}`, 'Growth yearly');
    const attach = page.getByRole('form', { name: 'Grant a feature' });
    await attach.getByLabel('Feature').selectOption({ label: 'Seats (quantity)' });
    await attach.getByLabel('Quantity').fill('10');
    await attach.getByRole('button', { name: 'Save entitlement' }).click();
    await page.getByText('Seats: 10.').waitFor();
    await attach.getByLabel('Feature').selectOption({ label: 'Priority support (boolean)' });
    await attach.getByRole('button', { name: 'Save entitlement' }).click();
    await page.getByText('Priority support: on.').waitFor();
    await check(page, '08-plan-entitlements');
    const entitlements = (await tenant.api('GET', `/v1/plans/${planId}/entitlements`)).body.data as { feature_key: string; value: unknown }[];
    expect(entitlements.sort((a, b) => a.feature_key.localeCompare(b.feature_key))).toEqual([
      { feature_key: 'priority_support', value: true },
      { feature_key: 'seats', value: 10 },
    ]);
    // A subscriber to the plan is entitled: the customer page lists it.
    expect((await tenant.api('POST', '/v1/subscriptions', { customer_id: customerId, plan_id: planId })).status).toBe(201);
    await go(page, `/customers/${customerId}`, 'Acme Traders');
    const row = page.getByRole('row').filter({ hasText: 'seats' });
    await row.getByRole('cell', { name: '10', exact: true }).waitFor();
  }, 120_000);

  it('filters the audit log by an object chosen by name and by who acted', async () => {
    await go(page, '/audit-log', 'Audit log');
    await page.getByLabel('Object type').selectOption('customer');
    await page.getByRole('combobox', { name: 'Which customer (optional)' }).fill('Acme');
    await page.getByRole('option', { name: /Acme Traders/ }).click();
    await page.getByRole('button', { name: 'Filter' }).click();
    const expected = (await tenant.api('GET', `/v1/audit-log?object_type=customer&object_id=${customerId}`)).body;
    expect(expected.total_count).toBeGreaterThan(0);
    await page.getByText(`${expected.total_count} in all`).waitFor();
    // Every row is about Acme Traders, named.
    const cells = page.locator('td[data-label="Object"]');
    expect(await cells.count()).toBe(Math.min(25, expected.total_count));
    for (const text of await cells.allTextContents()) expect(text).toBe('Acme Traders');
    // Who: the API key, chosen by name.
    const keys = (await tenant.api('GET', '/v1/developer/keys')).body.data as { id: string }[];
    await page.getByLabel('Object type').selectOption('');
    await page.getByLabel('Who').selectOption({ index: 1 });
    const actorId = await page.getByLabel('Who').inputValue();
    expect(keys.map((k) => k.id)).toContain(actorId);
    await page.getByRole('button', { name: 'Filter' }).click();
    const byKey = (await tenant.api('GET', `/v1/audit-log?actor_id=${actorId}`)).body.total_count as number;
    expect(byKey).toBeGreaterThan(5);
    await page.getByText(`${byKey} in all`).waitFor();
    await check(page, '09-audit-log');
  }, 120_000);

  it('closes a month, reopens it with a reason (owner) and marks its GSTR-1 filed', async () => {
    await go(page, '/periods', 'Periods');
    // The clock is at 1 April 2026 (05:30 in India): the entity's one begun month.
    await page.getByRole('cell', { name: '2026-04', exact: true }).waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Close 2026-04' }).click();
    await page.getByText('2026-04 closed.').waitFor();
    const entity = ((await tenant.api('GET', '/v1/entities')).body.data as { id: string; is_primary: boolean }[]).find((e) => e.is_primary)!;
    const period = async () => ((await tenant.api('GET', `/v1/entities/${entity.id}/periods`)).body.data as Record<string, unknown>[])[0]!;
    expect(await period()).toMatchObject({ period: '2026-04', status: 'closed' });

    const reopen = page.getByRole('form', { name: 'Reopen a month' });
    await reopen.getByLabel('Reason').fill('A supplier invoice arrived late');
    await reopen.getByRole('button', { name: 'Reopen' }).click();
    await page.getByText('2026-04 reopened.').waitFor();
    expect(await period()).toMatchObject({ status: 'open', reopen_reason: 'A supplier invoice arrived late' });

    const filing = page.getByRole('form', { name: 'Mark a GST return filed' });
    await filing.getByLabel('Return').selectOption('gstr1');
    await filing.getByLabel('Month').selectOption('2026-04');
    await filing.getByLabel('ARN').fill('AA290426000123X');
    await filing.getByRole('button', { name: 'Mark filed' }).click();
    await page.getByText('GSTR-1 of 2026-04 marked filed; the month is closed.').waitFor();
    await page.getByRole('cell', { name: /ARN AA290426000123X/ }).waitFor();
    const filed = await period();
    expect(filed).toMatchObject({ status: 'closed', gst_filed: { gstr1: { arn: 'AA290426000123X' } } });
    await check(page, '10-periods');
    // Phone width: the new tables become labelled cards and stay accessible.
    await page.setViewportSize({ width: 390, height: 844 });
    await check(page, '10-periods-phone');
    await go(page, '/coupons', 'Coupons');
    await check(page, '10-coupons-phone');
    await page.setViewportSize({ width: 1366, height: 900 });
  }, 120_000);

  /** An operator invited over the API (test mode, no SMTP: the link is in the answer) who accepts in the browser. */
  async function operator(email: string, role: 'support' | 'finance', name: string): Promise<{ context: BrowserContext; p: Page }> {
    const invited = await tenant.api('POST', '/v1/users/invitations', { email, role });
    expect(invited.status).toBe(201);
    const link = new URL(invited.body.data.accept_url as string);
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const p = await ctx.newPage();
    p.on('pageerror', (error) => pageErrors.push(error.message));
    await p.goto(`${base}${link.pathname}${link.search}`);
    await p.getByLabel('Your name').fill(name);
    await p.getByLabel('Password', { exact: true }).fill('correct horse battery 9');
    await p.getByLabel('Password again').fill('correct horse battery 9');
    await p.getByRole('button', { name: 'Join' }).click();
    await p.waitForURL(/\/dashboard\/settings\/security/);
    return { context: ctx, p };
  }

  it('offers finance the money actions but not the owner-only reopen', async () => {
    const { context: finance, p } = await operator('finance@acme-billing.test', 'finance', 'Farah Finance');
    await go(p, '/periods', 'Periods');
    await p.getByRole('form', { name: 'Mark a GST return filed' }).waitFor();
    expect(await p.getByRole('form', { name: 'Reopen a month' }).count()).toBe(0);
    await go(p, '/coupons', 'Coupons');
    await p.getByText('New coupon').waitFor();
    await go(p, `/customers/${customerId}`, 'Acme Traders');
    await p.getByRole('form', { name: 'Grant credit' }).waitFor();
    await finance.close();
  }, 120_000);

  it('shows a support operator none of the money actions, and no audit log', async () => {
    const { context: support, p } = await operator('support@acme-billing.test', 'support', 'Sam Support');
    const nav = p.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Coupons' }).waitFor();
    expect(await nav.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await go(p, '/coupons', 'Coupons');
    await p.locator('td[data-label="Code"]', { hasText: 'LAUNCH20' }).waitFor();
    expect(await p.getByText('New coupon').count()).toBe(0);
    expect(await p.getByRole('button', { name: /^Archive/ }).count()).toBe(0);
    await go(p, '/periods', 'Periods');
    await p.getByRole('cell', { name: '2026-04', exact: true }).waitFor();
    expect(await p.getByRole('button', { name: /^Close/ }).count()).toBe(0);
    expect(await p.getByRole('form', { name: 'Reopen a month' }).count()).toBe(0);
    await go(p, `/customers/${customerId}`, 'Acme Traders');
    await p.getByRole('cell', { name: 'Launch credit', exact: true }).waitFor();
    expect(await p.getByRole('form', { name: 'Grant credit' }).count()).toBe(0);
    expect(await p.getByRole('form', { name: 'Refund credit balance' }).count()).toBe(0);
    await go(p, `/invoices/${invoiceId}`, /^Invoice INV-/);
    await p.getByRole('cell', { name: '998313' }).waitFor();
    expect(await p.getByRole('form', { name: 'Refund' }).count()).toBe(0);
    await go(p, '/invoices', 'Invoices');
    expect(await p.getByText('New one-off invoice').count()).toBe(0);
    await check(p, '11-support-invoices');
    await support.close();
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
