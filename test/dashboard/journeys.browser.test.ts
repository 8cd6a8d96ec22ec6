import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, chromiumSkipNote, hasChromium, screenshotAndSeriousAxeViolations, startBrowserKosh } from '../support/browser.js';
import type { TestKosh } from '../support/harness.js';
import { gstinCheckCharacter } from '../../src/modules/tax/index.js';

/**
 * Issue #33's journeys in Chromium, as a person does them — every choice made by name, never an id
 * typed — each checked over the API; screenshots in test-output/screenshots/ (kept by CI), axe-core
 * with no serious or critical violation on each screen.
 *
 * (1) A new owner signs up ("Create an account": the business and its owner), follows the
 *     onboarding checklist (the entity's address and GSTIN, a plan with a flat and a metered price
 *     on a billable metric made on the Usage screen, the test gateway), creates a customer with an
 *     address by form, subscribes them by picking names, records usage and sees it on the
 *     customer's page, records a payment, refunds one invoice line (its credit note credits that
 *     line), issues a credit note on an invoice line chosen by its description, kept as balance,
 *     and refunds part of that balance.
 * (2) A support operator, invited from the Team tab (test mode shows the link), sees and does only
 *     what support may: edits a customer and takes a portal link, is shown no money action, and the
 *     server refuses a payment sent with their session.
 */
const skipNote = chromiumSkipNote('dashboard journeys');
const OUT = 'test-output/screenshots';

let t: TestKosh;
let browser: Browser;
let base: string;
/** The API as the new owner's key (made in Settings) calls it: every result is checked through it. */
let api: TestKosh['api'];
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
let customerId: string;
let invoiceId: string;

async function check(p: Page, name: string): Promise<void> {
  const serious = await screenshotAndSeriousAxeViolations(p, `${OUT}/${name}.png`);
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([]);
}

async function heading(p: Page, name: string | RegExp): Promise<void> {
  await p.getByRole('heading', { level: 1, name }).waitFor();
}

async function go(p: Page, path: string, name: string | RegExp): Promise<void> {
  await p.goto(`${base}/dashboard${path}`);
  await heading(p, name);
}

/** Types part of a name into a picker and picks the suggestion. */
async function pick(scope: Page | ReturnType<Page['locator']>, label: string, typed: string, option: RegExp): Promise<void> {
  await scope.getByRole('combobox', { name: label }).fill(typed);
  await scope.getByRole('option', { name: option }).click();
}

/** A resource as the API answers it; the assertions name the fields they read. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API bodies are checked field by field below
type Row = Record<string, any>;

const GSTIN = `29AAPFU0939F1Z${gstinCheckCharacter('29AAPFU0939F1Z')}`;

beforeAll(async () => {
  if (!hasChromium) return;
  buildDashboard();
  mkdirSync(OUT, { recursive: true });
  ({ t, browser, base } = await startBrowserKosh());
  context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
}, 240_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`issue #33 journeys in a browser${skipNote}`, () => {
  it('a new owner signs up, sets up billing from the checklist, then bills, collects, credits and refunds a customer', async () => {
    // Signing up: the business and its owner, then signed in with the password just chosen.
    await page.goto(`${base}/dashboard/`);
    await page.waitForURL(/\/dashboard\/sign-in/);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await heading(page, 'Create an account');
    await page.getByLabel('Business name').fill('Ledgerly Software');
    await page.getByLabel('Your name').fill('Lakshmi Owner');
    await page.getByLabel('E-mail').fill('lakshmi@ledgerly.test');
    await page.getByLabel('Password', { exact: true }).fill('correct horse battery 5');
    await page.getByLabel('Password again').fill('correct horse battery 5');
    await check(page, 'journey-00-sign-up');
    await page.getByRole('button', { name: 'Create account' }).click();
    await heading(page, 'Overview');
    // An API key made in Settings (its secret shown once): the checks below call the API with it.
    await go(page, '/settings/api-keys', 'Settings');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = (await page
      .getByText(/^New key \(shown once\)/)
      .locator('code')
      .textContent())!;
    api = (method, url, body, headers = {}) => t.api(method, url, body, { authorization: `Bearer ${secret}`, ...headers });
    const users = (await api('GET', '/v1/users')).body.data as Row[];
    expect(users.map((u) => [u.email, u.name, u.role])).toEqual([['lakshmi@ledgerly.test', 'Lakshmi Owner', 'owner']]);
    await go(page, '/', 'Overview');
    const checklist = page.getByRole('region', { name: /^Set up billing/ });
    await checklist.getByRole('heading', { name: 'Set up billing (0 of 5 done)' }).waitFor();
    await check(page, 'journey-01-checklist');

    // Step 1: the entity's GSTIN and registered address (Karnataka, 29).
    await checklist.getByRole('link', { name: 'Edit the entity' }).click();
    await heading(page, 'Settings');
    const entity = page.getByRole('form', { name: /^Edit / });
    await entity.getByLabel('Legal name').fill('Ledgerly Software Private Limited');
    await entity.getByLabel('GSTIN').fill(GSTIN);
    const registered = entity.getByRole('group', { name: 'Registered address' });
    await registered.getByLabel('Address line 1').fill('4th Floor, 80 Feet Road');
    await registered.getByLabel('City').fill('Bengaluru');
    await registered.getByLabel('State').selectOption('29');
    await registered.getByLabel('Postal code').fill('560034');
    await check(page, 'journey-02-entity');
    await entity.getByRole('button', { name: 'Save entity' }).click();
    await page.getByText('Entity saved.').waitFor();
    const primary = ((await api('GET', '/v1/entities')).body.data as Row[]).find((e) => e.is_primary)!;
    expect([primary.gstin, primary.state_code, primary.legal_name]).toEqual([GSTIN, '29', 'Ledgerly Software Private Limited']);
    expect(primary.address).toMatchObject({ line1: '4th Floor, 80 Feet Road', city: 'Bengaluru', state_code: '29', postal_code: '560034', country: 'IN' });

    // Step 2: a plan with a flat monthly fee and a metered price on a billable metric made first.
    await go(page, '/metrics', 'Usage');
    const metricForm = page.getByRole('form', { name: 'New billable metric' });
    await metricForm.getByLabel('Name').fill('API calls');
    await metricForm.getByLabel('Code').fill('api_calls');
    await metricForm.getByRole('button', { name: 'Create metric' }).click();
    await page.getByText('Metric API calls created.').waitFor();
    expect(((await api('GET', '/v1/billable-metrics')).body.data as Row[]).map((m) => [m.code, m.name, m.aggregation])).toEqual([
      ['api_calls', 'API calls', 'count'],
    ]);
    await go(page, '/', 'Overview');
    await checklist.getByRole('link', { name: 'Create a plan' }).click();
    await heading(page, 'Plans');
    const planForm = page.locator('details.create');
    await planForm.getByLabel('Name').fill('Team monthly');
    await planForm.getByLabel('Price (major units, e.g. 1,499.00)').fill('1,000.00');
    await planForm.getByLabel('SAC/HSN code').fill('998314');
    const meteredPrice = planForm.getByRole('group', { name: /^Metered price 1/ });
    await meteredPrice.getByLabel('Billable metric').selectOption({ label: 'API calls (count)' });
    await meteredPrice.getByLabel('Price per unit').fill('0.50');
    await check(page, 'journey-02b-plan-form');
    await planForm.getByRole('button', { name: 'Create plan' }).click();
    await heading(page, 'Team monthly');
    await page.getByRole('cell', { name: '₹0.50 per unit of api_calls / month', exact: true }).waitFor();
    const plans = (await api('GET', '/v1/plans')).body.data as Row[];
    expect(
      plans.map((p) => [p.name, p.interval_unit, p.interval_count, p.prices.map((x: Row) => [x.billing_scheme, x.amount, x.currency, x.metric_code]).sort()]),
    ).toEqual([
      [
        'Team monthly',
        'month',
        1,
        [
          ['metered', 50, 'INR', 'api_calls'],
          ['per_unit', 100_000, 'INR', null],
        ],
      ],
    ]);

    // Step 3: the test gateway.
    await go(page, '/', 'Overview');
    await checklist.getByRole('link', { name: 'Connect a gateway' }).click();
    await heading(page, 'Settings');
    await page.getByLabel('Gateway', { exact: true }).selectOption('test');
    await page.getByRole('button', { name: 'Connect gateway' }).click();
    await page.getByText('test connected.').waitFor();
    expect(((await api('GET', '/v1/gateway-connections')).body.data as { provider: string }[]).map((g) => g.provider)).toEqual(['test']);
    await check(page, 'journey-03-gateway');
    await go(page, '/', 'Overview');
    // Entity, plan and gateway done; e-mail (no SMTP here) and a first invoice to go.
    await checklist.getByRole('heading', { name: 'Set up billing (3 of 5 done)' }).waitFor();

    // A customer with a billing address, by form.
    await go(page, '/customers', 'Customers');
    await page.getByText('New customer').click();
    const customerForm = page.locator('details.create');
    await customerForm.getByLabel('E-mail').fill('accounts@mysore-silks.test');
    await customerForm.getByLabel('Name').fill('Mysore Silks');
    const billing = customerForm.getByRole('group', { name: 'Billing address' });
    await billing.getByLabel('Address line 1').fill('22 Sayyaji Rao Road');
    await billing.getByLabel('City').fill('Mysuru');
    await billing.getByLabel('State').selectOption('29');
    await billing.getByLabel('Postal code').fill('570001');
    await check(page, 'journey-04-customer-form');
    await customerForm.getByRole('button', { name: 'Create customer' }).click();
    await heading(page, 'Mysore Silks');
    customerId = page.url().split('/').pop()!;
    const customer = (await api('GET', `/v1/customers/${customerId}`)).body.data;
    expect(customer.billing_address).toMatchObject({ line1: '22 Sayyaji Rao Road', city: 'Mysuru', state_code: '29', postal_code: '570001', country: 'IN' });

    // Subscribed by picking names; the first invoice is issued at once.
    await page.getByRole('link', { name: 'New subscription for this customer' }).click();
    await heading(page, 'Subscriptions');
    const subForm = page.locator('details.create');
    await subForm.getByText('Chosen: Mysore Silks').waitFor();
    await pick(subForm, 'Plan', 'Team', /Team monthly/);
    await check(page, 'journey-05-subscription-form');
    await subForm.getByRole('button', { name: 'Create subscription' }).click();
    await page.waitForURL(/\/dashboard\/subscriptions\/[0-9a-f-]{36}$/);
    const subscriptions = (await api('GET', `/v1/subscriptions?customer_id=${customerId}`)).body.data as Row[];
    expect(subscriptions.map((s) => [s.plan_id, s.status, s.quantity])).toEqual([[plans[0]!.id, 'active', 1]]);
    invoiceId = subscriptions[0]!.latest_invoice_id;
    const invoice = (await api('GET', `/v1/invoices/${invoiceId}`)).body.data;
    // ₹1,000.00 within Karnataka: CGST 9% ₹90.00 + SGST 9% ₹90.00 = ₹180.00; total ₹1,180.00.
    expect([invoice.status, invoice.subtotal, invoice.tax_amount, invoice.total]).toEqual(['open', 100_000, 18_000, 118_000]);

    // Three API calls recorded on the Usage screen (the customer picked by name) show on the customer's page.
    await go(page, '/metrics', 'Usage');
    const usageForm = page.getByRole('form', { name: 'Record usage' });
    for (let n = 0; n < 3; n++) {
      // The form resets after each success: the customer is picked again.
      await pick(usageForm, 'Customer', 'Mysore', /Mysore Silks/);
      await usageForm.getByRole('button', { name: 'Record usage' }).click();
      await usageForm.getByText('Usage of API calls recorded.').waitFor();
    }
    const usageOf = async () =>
      ((await api('GET', `/v1/subscriptions/${subscriptions[0]!.id}/usage`)).body.data.metrics as Row[]).map((m) => [m.metric_code, m.quantity, m.amount]);
    await expect.poll(usageOf).toEqual([['api_calls', 3, 150]]);
    await go(page, `/customers/${customerId}`, 'Mysore Silks');
    const usageCard = page.getByRole('region', { name: 'Usage' });
    await usageCard.getByRole('row').filter({ hasText: 'API calls' }).filter({ hasText: '₹1.50' }).waitFor();
    await check(page, 'journey-05b-customer-usage');

    // A payment recorded against the invoice, reached by its number from the customer's page.
    await page.getByRole('link', { name: invoice.number }).first().click();
    await heading(page, new RegExp(`^Invoice ${invoice.number}`));
    const payment = page.getByRole('form', { name: 'Record a payment' });
    await payment.getByLabel('Amount received').fill('1,180.00');
    await payment.getByLabel('Reference (UTR, cheque number)').fill('UTR-MYS-0001');
    await payment.getByRole('button', { name: 'Record payment' }).click();
    await page.getByText('Payment of ₹1,180.00 recorded.').waitFor();
    expect((await api('GET', `/v1/invoices/${invoiceId}`)).body.data).toMatchObject({ status: 'paid', amount_paid: 118_000 });
    const payments = (await api('GET', `/v1/payments?customer_id=${customerId}`)).body.data as Row[];
    expect(payments.map((p) => [p.amount, p.reference_number ?? null])).toEqual([[118_000, 'UTR-MYS-0001']]);

    // Half the plan line refunded: ₹500.00 + 18% = ₹590.00; its credit note credits that line.
    const refund = page.getByRole('form', { name: 'Refund' });
    const line = invoice.lines[0] as { id: string; description: string; hsn_code: string };
    await refund.getByLabel(`${line.description} (${line.hsn_code})`).fill('590.00');
    await check(page, 'journey-06-refund-by-line');
    await refund.getByRole('button', { name: 'Refund' }).click();
    await page.getByText(/^Refund of ₹590\.00 /).waitFor();
    const refunds = (await api('GET', `/v1/refunds?invoice_id=${invoiceId}`)).body.data as Row[];
    expect(refunds.map((r) => [r.amount, r.credit_note_issued])).toEqual([[59_000, true]]);
    const lineNote = (await api('GET', `/v1/credit-notes/${refunds[0]!.credit_note_id}`)).body.data;
    // ₹590.00 = ₹500.00 + CGST ₹45.00 + SGST ₹45.00 reversed, on the plan line only.
    expect(lineNote.lines.map((l: { invoice_line_id: string }) => l.invoice_line_id)).toEqual([line.id]);
    expect([lineNote.amount, lineNote.subtotal, lineNote.cgst_amount, lineNote.sgst_amount]).toEqual([59_000, 50_000, 4_500, 4_500]);

    // A credit note of ₹236.00 (₹200.00 + 18%) on the plan line, chosen by its description, is kept as balance …
    const issue = page.getByRole('form', { name: 'Issue a credit note' });
    await issue.getByLabel('Invoice line').selectOption({ label: `${line.description} (${line.hsn_code}) — ₹1,180.00 with GST` });
    await issue.getByLabel('Credit amount (incl. GST)').fill('236.00');
    await issue.getByLabel('Reason').fill('Two days of downtime');
    await issue.getByRole('button', { name: 'Issue credit note' }).click();
    await page.getByText(/^Credit note .* issued\.$/).waitFor();
    const notes = (await api('GET', `/v1/credit-notes?customer_id=${customerId}`)).body.data as Row[];
    const balanceNote = notes.find((n) => n.id !== lineNote.id)!;
    expect([balanceNote.amount, balanceNote.balance, balanceNote.status]).toEqual([23_600, 23_600, 'issued']);
    const balanceLines = (await api('GET', `/v1/credit-notes/${balanceNote.id}`)).body.data.lines as Row[];
    expect(balanceLines.map((l) => [l.invoice_line_id, l.amount])).toEqual([[line.id, 23_600]]);

    // … and ₹100.00 of it refunded from the customer's page: ₹236.00 − ₹100.00 = ₹136.00 left.
    await go(page, `/customers/${customerId}`, 'Mysore Silks');
    const fromBalance = page.getByRole('form', { name: 'Refund credit balance' });
    await fromBalance.getByLabel('From the credit note').selectOption({ label: `${balanceNote.number} — ₹236.00 unspent` });
    await fromBalance.getByLabel('Amount').fill('100.00');
    await fromBalance.getByRole('button', { name: 'Refund credit' }).click();
    await page.getByText(new RegExp(`^Refund of ₹100\\.00 from ${balanceNote.number} `)).waitFor();
    expect((await api('GET', `/v1/credit-notes/${balanceNote.id}`)).body.data.balance).toBe(13_600);
    const all = (await api('GET', `/v1/refunds?customer_id=${customerId}`)).body.data as { amount: number }[];
    expect(all.map((r) => r.amount).sort((a, b) => a - b)).toEqual([10_000, 59_000]);
    await check(page, 'journey-07-customer-after-refunds');
    await go(page, '/', 'Overview');
    await checklist.getByRole('heading', { name: 'Set up billing (4 of 5 done)' }).waitFor();
  }, 180_000);

  it('a support operator sees and does only what support may', async () => {
    // The owner invites from the Team tab; with no SMTP the link is shown on the page.
    await go(page, '/settings/team', 'Settings');
    const invite = page.getByRole('form', { name: 'Invite an operator' });
    await invite.getByLabel('E-mail').fill('sam@ledgerly.test');
    await invite.getByLabel('Role').selectOption('support');
    await invite.getByRole('button', { name: 'Send invitation' }).click();
    const link = await page.getByTestId('invitation-link').getByRole('link').getAttribute('href');
    expect(link).toMatch(/\/dashboard\/accept-invitation\?token=/);

    const support = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const p = await support.newPage();
    p.on('pageerror', (error) => pageErrors.push(error.message));
    // The link names the configured public URL; the test app listens elsewhere on loopback.
    const accept = new URL(link!);
    await p.goto(`${base}${accept.pathname}${accept.search}`);
    await p.getByLabel('Your name').fill('Sam Support');
    await p.getByLabel('Password', { exact: true }).fill('correct horse battery 7');
    await p.getByLabel('Password again').fill('correct horse battery 7');
    await p.getByRole('button', { name: 'Join' }).click();
    await p.waitForURL(/\/dashboard\/settings\/security/);
    const users = (await api('GET', '/v1/users')).body.data as { email: string; role: string }[];
    expect(users.find((u) => u.email === 'sam@ledgerly.test')?.role).toBe('support');

    // No checklist, no audit log, no team tab.
    await go(p, '/', 'Overview');
    expect(await p.getByRole('region', { name: /^Set up billing/ }).count()).toBe(0);
    expect(await p.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    await go(p, '/settings', 'Settings');
    expect(await p.getByRole('navigation', { name: 'Settings sections' }).getByRole('link', { name: 'Team' }).count()).toBe(0);

    // Support may edit a customer and take a portal link …
    await go(p, '/customers', 'Customers');
    await p.getByRole('link', { name: 'Mysore Silks' }).click();
    await heading(p, 'Mysore Silks');
    await p.getByText('Edit customer').click();
    await p.getByLabel('Phone').fill('+919845012345');
    await p.getByRole('button', { name: 'Save', exact: true }).click();
    await p.getByText('Saved.').waitFor();
    expect((await api('GET', `/v1/customers/${customerId}`)).body.data.phone).toBe('+919845012345');
    await p.getByRole('button', { name: 'Portal link' }).click();
    await p.getByText(/^Portal link \(single use\)/).waitFor();
    // … but is shown no money action.
    expect(await p.getByRole('link', { name: 'New subscription for this customer' }).count()).toBe(0);
    expect(await p.getByRole('form', { name: 'Grant credit' }).count()).toBe(0);
    expect(await p.getByRole('form', { name: 'Refund credit balance' }).count()).toBe(0);
    await check(p, 'journey-08-support-customer');
    await go(p, `/invoices/${invoiceId}`, /^Invoice /);
    for (const form of ['Record a payment', 'Issue a credit note', 'Refund']) expect(await p.getByRole('form', { name: form }).count()).toBe(0);
    await go(p, '/subscriptions', 'Subscriptions');
    expect(await p.getByText('New subscription').count()).toBe(0);
    await go(p, '/plans', 'Plans');
    await p.getByRole('link', { name: 'Team monthly' }).waitFor();
    expect(await p.getByText('New plan').count()).toBe(0);
    await check(p, 'journey-09-support-plans');

    // The server refuses what the screens do not offer: a payment sent with the support session.
    const refused = await p.evaluate(
      async (body) => {
        const csrf = /(?:^|;\s*)kosh_csrf=([^;]+)/.exec(document.cookie)?.[1] ?? '';
        const r = await fetch('/v1/payments/offline', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-csrf-token': decodeURIComponent(csrf), 'idempotency-key': crypto.randomUUID() },
          body: JSON.stringify(body),
        });
        return r.status;
      },
      { customer_id: customerId, amount: 10_000, currency: 'INR', payment_type: 'cash' },
    );
    expect(refused).toBe(403);
    expect(((await api('GET', `/v1/payments?customer_id=${customerId}`)).body.data as unknown[]).length).toBe(1);
    await support.close();
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
