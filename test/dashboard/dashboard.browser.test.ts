import { createHmac, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, chromiumSkipNote, hasChromium, screenshotAndSeriousAxeViolations, startBrowserKosh } from '../support/browser.js';
import type { Tenant, TestKosh } from '../support/harness.js';
import { startMailSink, type MailSink } from '../support/mail-sink.js';

/**
 * The dashboard end to end in Debian's chromium, against one Kosh with a real SMTP sink:
 * invite → accept → TOTP → sign in with TOTP → plan, customer, subscription → invoice → payment
 * with TDS → credit note needing approval → approved by `finance` → `support` refused by the
 * server → the audit log names each actor. Every page gets a screenshot (test-output/dashboard/)
 * and an axe-core check with no serious or critical violation, under the page's real CSP.
 */
const skipNote = chromiumSkipNote('dashboard');
const OUT = 'test-output/dashboard';

let t: TestKosh;
let browser: Browser;
let base: string;
let sink: MailSink;
let tenant: Tenant;
/** Whether the operator routes (sign-in, users, audit log) are present: the journey needs them. */
let hasOperators = false;
const cspViolations: string[] = [];
/** Failed requests the console reports (a 401 while signed out is one). */
const consoleErrors: string[] = [];

beforeAll(async () => {
  if (!hasChromium) return;
  // The SPA is built by `npm install` (prepare); build it here when dashboard/ changed since.
  buildDashboard();
  mkdirSync(OUT, { recursive: true });
  sink = await startMailSink();
  ({ t, browser, base } = await startBrowserKosh({ env: { SMTP_URL: sink.url } }));
  tenant = await t.registerTenant();
  const document = (await t.api('GET', '/openapi.json')).body as { paths: Record<string, unknown> };
  hasOperators = ['/v1/auth/sign-in', '/v1/users/invitations', '/v1/audit-log'].every((path) => path in document.paths);
  if (!hasOperators) console.warn('dashboard operator journey skipped: this build has no /v1/auth, /v1/users or /v1/audit-log routes');
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await sink?.close();
});

/** RFC 6238 (SHA-1, 30 s, 6 digits) at the server's clock. */
function totp(secretBase32: string, at: Date): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
  let bits = '';
  for (const ch of secretBase32.replace(/=+$/, '').toUpperCase()) bits += alphabet.indexOf(ch).toString(2).padStart(5, '0');
  const key = Buffer.from(bits.match(/.{8}/g)!.map((b) => parseInt(b, 2)));
  const counter = Buffer.alloc(8);
  counter.writeBigUInt64BE(BigInt(Math.floor(at.getTime() / 1000 / 30)));
  const mac = createHmac('sha1', key).update(counter).digest();
  const offset = mac[mac.length - 1]! & 0xf;
  return String((mac.readUInt32BE(offset) & 0x7fffffff) % 1_000_000).padStart(6, '0');
}

async function newPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) cspViolations.push(message.text());
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => cspViolations.push(error.message));
  return page;
}

/** Screenshot and axe-core: no serious or critical violation. axe is evaluated through the DevTools protocol: the page's CSP (script-src 'self') refuses injected script tags, as it should. */
async function check(page: Page, name: string, { idle = true }: { idle?: boolean } = {}): Promise<void> {
  const serious = await screenshotAndSeriousAxeViolations(page, `${OUT}/${name}.png`, { idle });
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([]);
}

async function drainMail(): Promise<void> {
  await t.kosh.worker.drain();
}

function linkIn(to: string, path: string): string {
  const mail = [...sink.messages].reverse().find((m) => m.envelope.to.includes(to));
  expect(mail, `an e-mail to ${to}`).toBeDefined();
  const text = `${mail!.text ?? ''}\n${mail!.html ?? ''}`;
  const match = new RegExp(`${path.replace(/[/.?]/g, '\\$&')}\\?token=([A-Za-z0-9_\\-.~%]+)`).exec(text);
  expect(match, `a ${path} link in the e-mail to ${to}`).not.toBeNull();
  return `${base}${path}?token=${match![1]}`;
}

async function acceptInvitation(page: Page, link: string, name: string, password: string): Promise<void> {
  await page.goto(link);
  await page.getByLabel('Your name').fill(name);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByLabel('Password again').fill(password);
  await page.getByRole('button', { name: 'Join' }).click();
  await page.waitForURL(/\/dashboard\/settings\/security/);
}

async function go(page: Page, path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${base}/dashboard${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

const OWNER = { email: 'owner-op@tenant.test', password: 'correct horse battery 1' };
const FINANCE = { email: 'finance-op@tenant.test', password: 'correct horse battery 2' };
const SUPPORT = { email: 'support-op@tenant.test', password: 'correct horse battery 3' };

describe.skipIf(!hasChromium)(`the dashboard in a browser${skipNote}`, () => {
  it('renders every page under its CSP with no serious axe violation, at laptop and phone width (API-key sign-in)', async () => {
    const plan = (await tenant.api('POST', '/v1/plans', { name: 'Starter', interval_unit: 'month', amount: 12_345_600, currency: 'INR' })).body.data;
    const customer = (await tenant.api('POST', '/v1/customers', { email: 'pages@customer.test', name: 'Pages Ltd' })).body.data;
    const subscription = (await tenant.api('POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).body.data;
    const invoiceId: string = subscription.latest_invoice_id;
    const context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const page = await newPage(context);
    await page.goto(`${base}/dashboard/customers`);
    await page.waitForURL(/\/dashboard\/sign-in\?next=%2Fcustomers/);
    await page.waitForLoadState('networkidle');
    // Signed out, the app asks the server nothing it would refuse: no 401 in the console.
    expect(consoleErrors.filter((m) => /401|Unauthorized/i.test(m))).toEqual([]);
    await page.getByRole('button', { name: /API key/ }).click();
    await page.getByLabel('API key').fill(tenant.key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Customers' }).waitFor();
    for (const [path, heading, name] of [
      ['', 'Overview', 'overview'],
      [`/customers/${customer.id}`, 'Pages Ltd', 'customer'],
      [`/subscriptions/${subscription.id}`, /^Subscription/, 'subscription'],
      [`/invoices/${invoiceId}`, /^Invoice INV-/, 'invoice'],
      [`/plans/${plan.id}`, 'Starter', 'plan'],
      ['/invoices?status=open', 'Invoices', 'invoices-open'],
      ['/plans', 'Plans', 'plans'],
      ['/webhooks', 'Webhooks', 'webhooks'],
      ['/dunning', 'Dunning', 'dunning'],
      ['/reconciliation', 'Reconciliation', 'reconciliation'],
      ['/settings', 'Settings', 'settings'],
      ['/settings/email', 'Settings', 'settings-email'],
      ['/sign-in', 'Sign in', 'sign-in'],
      ['/reset-password', 'Reset password', 'reset-password'],
      ['/reset-password?token=x', 'Choose a new password', 'reset-password-token'],
    ] as const) {
      await go(page, path, heading);
      await check(page, `pages-${name}`);
    }
    // An e-mail template: an edited subject shows in the server-rendered preview (sample data),
    // the HTML in a sandboxed iframe; saving stores it, resetting brings the default back.
    await go(page, '/settings/email/invoice_finalized', 'Settings');
    await page.getByLabel('Subject').fill('Your bill {{invoice.number}} from the dashboard');
    await page
      .getByTestId('preview-subject')
      .filter({ hasText: /^Your bill \S+ from the dashboard$/ })
      .waitFor();
    expect(await page.locator('iframe.mail').getAttribute('sandbox')).toBe('');
    await page.frameLocator('iframe.mail').getByText(/Dear /).waitFor();
    await check(page, 'pages-settings-email-template', { idle: false });
    await page.getByRole('button', { name: 'Save template' }).click();
    await page.getByText('Template saved.').waitFor();
    expect((await tenant.api('GET', '/v1/email-templates/invoice_finalized')).body.data).toMatchObject({
      customized: true,
      subject: 'Your bill {{invoice.number}} from the dashboard',
    });
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Reset to the default' }).click();
    await page.getByRole('button', { name: 'Reset to the default' }).waitFor({ state: 'detached' });
    // The button leaves as the page re-renders, which may come before the reset's answer: wait for the server.
    await expect.poll(async () => (await tenant.api('GET', '/v1/email-templates/invoice_finalized')).body.data.customized, { timeout: 10_000 }).toBe(false);
    // A notification toggle is saved through PATCH /v1/notification-settings.
    await go(page, '/settings/email', 'Settings');
    await page.getByLabel('E-mail: Payment receipt').check();
    await page.getByRole('button', { name: 'Save notifications' }).click();
    await page.getByText('Saved.').waitFor();
    expect((await tenant.api('GET', '/v1/notification-settings')).body.data).toMatchObject({ payment_receipt: true, invoice_finalized: false });
    // An SMS provider is connected from its form (the authkey goes once, sealed) and removed again.
    await page.getByLabel('Flow template id').fill('64f0c2a1d6fc05530b6bd3c2');
    await page.getByLabel('Authkey').fill('msg91-authkey-0123456789abcdef');
    await page.getByLabel('DLT sender ID (optional)').fill('KOSHBL');
    await page.getByRole('button', { name: 'Connect' }).last().click();
    await page.getByText('MSG91 connected').waitFor();
    await page.getByRole('cell', { name: '64f0c2a1d6fc05530b6bd3c2' }).waitFor();
    const sms = (await tenant.api('GET', '/v1/sms-connections')).body;
    expect(sms.data).toMatchObject([{ provider: 'msg91', sender: 'KOSHBL', template_id: '64f0c2a1d6fc05530b6bd3c2' }]);
    expect(JSON.stringify(sms)).not.toContain('msg91-authkey');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByRole('cell', { name: '64f0c2a1d6fc05530b6bd3c2' }).waitFor({ state: 'detached' });
    expect((await tenant.api('GET', '/v1/sms-connections')).body.data).toEqual([]);
    // Indian grouping (lakh): a ₹1,23,456.00 plan.
    await go(page, `/invoices/${invoiceId}`, /^Invoice INV-/);
    await page.getByText('₹1,23,456.00').first().waitFor();
    // Phone width: the menu opens the navigation, tables become labelled cards.
    await page.setViewportSize({ width: 390, height: 844 });
    await go(page, '/invoices', 'Invoices');
    expect(await page.getByRole('link', { name: 'Customers' }).isVisible()).toBe(false);
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('link', { name: 'Customers' }).waitFor();
    await check(page, 'pages-invoices-phone');
    await go(page, '/settings/email/invoice_finalized', 'Settings');
    await page.frameLocator('iframe.mail').getByText(/Dear /).waitFor();
    await check(page, 'pages-settings-email-template-phone', { idle: false });
    await context.close();
    expect(cspViolations).toEqual([]);
  }, 240_000);

  it('runs the operator journey end to end, refusing by role on the server and auditing every step', async (ctx) => {
    if (!hasOperators) return ctx.skip();
    // The tenant asks for credit-note approval; the first operator is invited with the API key.
    expect((await tenant.api('PATCH', '/v1/settings', { credit_note_approval_required: true })).status).toBe(200);
    const invited = await tenant.api('POST', '/v1/users/invitations', { email: OWNER.email, role: 'owner' });
    expect(invited.status).toBe(201);
    await drainMail();

    const ownerContext = await browser.newContext({ viewport: { width: 1366, height: 900 } });
    const owner = await newPage(ownerContext);

    // An expired or unknown invitation link is a clear page.
    await owner.goto(`${base}/dashboard/accept-invitation?token=not-a-real-token`);
    await owner.getByLabel('Your name').fill('Nobody');
    await owner.getByLabel('Password', { exact: true }).fill(OWNER.password);
    await owner.getByLabel('Password again').fill(OWNER.password);
    await owner.getByRole('button', { name: 'Join' }).click();
    await owner.getByRole('heading', { name: 'This link has expired' }).waitFor();
    await check(owner, '01-invitation-expired');

    // Accept → signed in → turn on TOTP.
    await acceptInvitation(owner, linkIn(OWNER.email, '/dashboard/accept-invitation'), 'Asha Owner', OWNER.password);
    await check(owner, '02-security');
    await owner.getByRole('button', { name: 'Set up two-factor' }).click();
    const secret = (await owner.getByTestId('totp-secret').textContent())!.trim();
    await owner.getByLabel('Six-digit code from the app').fill(totp(secret, t.clock.now()));
    await owner.getByRole('button', { name: 'Turn on' }).click();
    await owner.getByText('Recovery codes').waitFor();
    await check(owner, '03-totp-enabled');

    // Sign out, then in with the password and the TOTP step; a wrong code gets the generic message.
    await owner.getByRole('button', { name: 'Sign out', exact: true }).click();
    await owner.waitForURL(/\/dashboard\/sign-in/);
    await check(owner, '04-sign-in');
    await owner.getByLabel('E-mail').fill(OWNER.email);
    await owner.getByLabel('Password').fill(OWNER.password);
    await owner.getByRole('button', { name: 'Sign in' }).click();
    await owner.getByRole('heading', { name: 'Two-factor code' }).waitFor();
    const code = owner.getByLabel(/Code from your authenticator app/);
    await code.fill(totp(secret, t.clock.now()) === '000000' ? '111111' : '000000');
    await owner.getByRole('button', { name: 'Verify' }).click();
    await owner
      .getByRole('alert')
      .filter({ hasText: /invalid_credentials/ })
      .waitFor();
    await check(owner, '05-totp-step');
    // A code is accepted once (the one that turned TOTP on is spent): the next 30-second step's code.
    t.clock.advance(30_000);
    await code.fill(totp(secret, t.clock.now()));
    await owner.getByRole('button', { name: 'Verify' }).click();
    await owner.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
    await check(owner, '06-overview');

    // Team: invite finance and support through the dashboard.
    await go(owner, '/settings/team', 'Settings');
    for (const [who, role] of [
      [FINANCE.email, 'finance'],
      [SUPPORT.email, 'support'],
    ] as const) {
      await owner.getByLabel('E-mail', { exact: true }).fill(who);
      await owner.getByLabel('Role', { exact: true }).selectOption(role);
      await owner.getByRole('button', { name: 'Send invitation' }).click();
      await owner.getByText(`Invitation sent to ${who}.`).waitFor();
    }
    await owner.getByRole('cell', { name: SUPPORT.email }).waitFor();
    await check(owner, '07-team');
    await drainMail();

    // The onboarding checklist: the entity step is open until the address and GSTIN are in.
    await go(owner, '', 'Overview');
    const step = (label: string) => owner.locator('.checklist li').filter({ hasText: label });
    expect(await step('Your business').getAttribute('data-done')).toBe('false');
    await step('Your business').getByRole('link', { name: 'Edit the entity' }).click();
    const entityForm = owner.getByRole('form', { name: /^Edit / });
    await entityForm.getByLabel('GSTIN').fill('27AAPFU0939F1ZV');
    await entityForm.getByLabel('Address line 1').fill('4th floor, Tower B');
    await entityForm.getByLabel('City').fill('Pune');
    await entityForm.getByLabel('State').selectOption('27');
    await entityForm.getByLabel('Postal code').fill('411001');
    await entityForm.getByRole('button', { name: 'Save entity' }).click();
    await entityForm.getByText('Entity saved.').waitFor();
    await check(owner, '08-entity');
    const entity = (await tenant.api('GET', '/v1/entities')).body.data.find((e: { is_primary: boolean }) => e.is_primary);
    expect([entity.gstin, entity.state_code]).toEqual(['27AAPFU0939F1ZV', '27']);
    expect(entity.address).toMatchObject({ line1: '4th floor, Tower B', city: 'Pune', state_code: '27', postal_code: '411001', country: 'IN' });
    // The test gateway, from the checklist's link.
    await go(owner, '', 'Overview');
    await step('A payment gateway').getByRole('link', { name: 'Connect a gateway' }).click();
    await owner.getByRole('button', { name: 'Connect gateway' }).click();
    await owner.getByText('test connected.').waitFor();
    expect((await tenant.api('GET', '/v1/gateway-connections')).body.data.map((g: { provider: string }) => g.provider)).toEqual(['test']);

    // A plan, a customer with a billing address, and a subscription picked by names.
    await go(owner, '/plans', 'Plans');
    await owner.getByText('New plan').click();
    await owner.getByLabel('Name', { exact: true }).fill('Pro monthly');
    await owner.getByLabel(/^Price/).fill('11,800.00');
    await owner.getByLabel('SAC/HSN code').fill('998314');
    await owner.getByRole('button', { name: 'Create plan' }).click();
    await owner.getByRole('heading', { level: 1, name: 'Pro monthly' }).waitFor();
    await check(owner, '08-plan');
    const planId = owner.url().split('/').pop()!;

    await go(owner, '/customers', 'Customers');
    await owner.getByText('New customer').click();
    await owner.getByLabel('E-mail', { exact: true }).fill('buyer@customer.test');
    await owner.getByLabel('Name', { exact: true }).fill('Buyer Pvt Ltd');
    await owner.getByLabel('Address line 1', { exact: true }).fill('12 MG Road');
    await owner.getByLabel('City', { exact: true }).fill('Bengaluru');
    await owner.getByLabel('State', { exact: true }).selectOption('29');
    await owner.getByLabel('Postal code', { exact: true }).fill('560001');
    await owner.getByRole('button', { name: 'Create customer' }).click();
    await owner.getByRole('heading', { level: 1, name: 'Buyer Pvt Ltd' }).waitFor();
    await owner.getByText('12 MG Road, Bengaluru, Karnataka (29) 560001, IN').waitFor();
    await check(owner, '09-customer');
    const customerId = owner.url().split('/').pop()!;
    expect((await tenant.api('GET', `/v1/customers/${customerId}`)).body.data.billing_address).toEqual({
      line1: '12 MG Road',
      line2: null,
      city: 'Bengaluru',
      state_code: '29',
      postal_code: '560001',
      country: 'IN',
    });

    // Subscribe by typing parts of names and choosing from the server's search (no id anywhere).
    await go(owner, '/subscriptions', 'Subscriptions');
    await owner.getByText('New subscription').click();
    const newSubscription = owner.locator('details.create');
    await newSubscription.getByRole('combobox', { name: 'Customer' }).fill('Buyer');
    await newSubscription.getByRole('option', { name: /Buyer Pvt Ltd/ }).click();
    await newSubscription.getByRole('combobox', { name: 'Plan' }).fill('Pro mon');
    await newSubscription.getByRole('option', { name: /Pro monthly/ }).click();
    await newSubscription.getByText('Chosen: Pro monthly').waitFor();
    await check(owner, '10-new-subscription');
    await owner.getByRole('button', { name: 'Create subscription' }).click();
    await owner.getByRole('heading', { level: 1, name: 'Subscription' }).waitFor();
    await owner.getByRole('link', { name: 'Buyer Pvt Ltd' }).waitFor();
    await owner.getByRole('link', { name: 'Pro monthly' }).waitFor();
    await check(owner, '10-subscription');
    const subscriptions = (await tenant.api('GET', `/v1/subscriptions?customer_id=${customerId}`)).body.data;
    expect(subscriptions.map((x: { plan_id: string; quantity: number }) => [x.plan_id, x.quantity])).toEqual([[planId, 1]]);
    // The list shows the customer, the plan, the amount and the next billing date.
    await go(owner, '/subscriptions', 'Subscriptions');
    const row = owner.getByRole('row').filter({ hasText: 'Buyer Pvt Ltd' });
    await row.getByText('Pro monthly').waitFor();
    await row.getByText('₹11,800.00 / month').waitFor();

    // The invoice, then a payment with TDS.
    await go(owner, `/subscriptions/${subscriptions[0].id}`, 'Subscription');
    await owner.getByRole('link', { name: /^INV/ }).first().click();
    await owner.getByRole('heading', { level: 1, name: /^Invoice / }).waitFor();
    const invoiceId = owner.url().split('/').pop()!;
    const invoice = (await tenant.api('GET', `/v1/invoices/${invoiceId}`)).body.data;
    expect(invoice.status).toBe('open');
    // Indian grouping in the entity's time zone: ₹13,924.00 (11,800 + 18% GST).
    await owner
      .getByText(new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR' }).format(invoice.total / 100))
      .first()
      .waitFor();
    await check(owner, '11-invoice');
    const tds = 118_000; // ₹1,180.00: 10% of the taxable value (194J)
    await owner.getByLabel('Amount received').fill(((invoice.total - tds) / 100).toFixed(2));
    await owner.getByLabel('TDS deducted by the customer').fill((tds / 100).toFixed(2));
    await owner.getByLabel('Reference (UTR, cheque number)').fill('UTR123456');
    await owner.getByRole('button', { name: 'Record payment' }).click();
    await owner.getByText(/Payment of .* recorded with .* TDS/).waitFor();
    const paid = (await tenant.api('GET', `/v1/invoices/${invoiceId}`)).body.data;
    expect([paid.status, paid.amount_tds]).toEqual(['paid', tds]);
    expect((await tenant.api('GET', `/v1/payments?invoice_id=${invoiceId}`)).body.data).toHaveLength(1);
    // The checklist is done: it is gone from the overview.
    await go(owner, '', 'Overview');
    await owner.getByRole('heading', { name: /^Set up billing/ }).waitFor({ state: 'detached' });
    await go(owner, `/invoices/${invoiceId}`, /^Invoice /);

    // A credit note that needs approval.
    await owner.getByLabel('Credit amount (incl. GST)').fill('1,180.00');
    await owner.getByLabel('Reason', { exact: true }).fill('Service credit');
    await owner.getByRole('button', { name: 'Issue credit note' }).click();
    await owner.getByText(/is waiting for approval/).waitFor();
    await check(owner, '12-invoice-paid');
    const notes = (await tenant.api('GET', `/v1/credit-notes?invoice_id=${invoiceId}`)).body.data;
    expect(notes.map((n: { status: string }) => n.status)).toEqual(['pending_approval']);
    const creditNoteId: string = notes[0].id;

    // Finance accepts its invitation and approves.
    const financeContext = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const finance = await newPage(financeContext);
    await acceptInvitation(finance, linkIn(FINANCE.email, '/dashboard/accept-invitation'), 'Farah Finance', FINANCE.password);
    // A tab a role cannot use is not shown: finance has no API keys or Team tab.
    await go(finance, '/settings', 'Settings');
    await finance.getByRole('link', { name: 'Entities' }).waitFor();
    expect(await finance.getByRole('link', { name: 'API keys' }).count()).toBe(0);
    expect(await finance.getByRole('link', { name: 'Team' }).count()).toBe(0);
    await go(finance, '/credit-notes?status=pending_approval', 'Credit notes');
    await check(finance, '13-approval-queue');
    await finance.getByRole('link', { name: notes[0].number ?? /^Pending, / }).click();
    await finance.getByRole('button', { name: 'Approve' }).click();
    await finance.getByText('Approved.').waitFor();
    await check(finance, '14-credit-note-approved');
    expect((await tenant.api('GET', `/v1/credit-notes/${creditNoteId}`)).body.data.status).toBe('issued');

    // Support: no Approve button, and the server refuses the route itself with its session cookie.
    const second = await tenant.api('POST', '/v1/credit-notes', { customer_id: customerId, invoice_id: invoiceId, amount: 11_800, reason: 'second' });
    expect([second.status, second.body.data.status]).toEqual([201, 'pending_approval']);
    const supportContext = await browser.newContext({ viewport: { width: 390, height: 844 } }); // a phone
    const support = await newPage(supportContext);
    await acceptInvitation(support, linkIn(SUPPORT.email, '/dashboard/accept-invitation'), 'Sam Support', SUPPORT.password);
    await go(support, `/credit-notes/${second.body.data.id}`, /^Credit note/);
    expect(await support.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await check(support, '15-support-phone-credit-note');
    const csrf = (await supportContext.cookies()).find((c) => c.name === 'kosh_csrf')?.value;
    expect(csrf).toBeTruthy();
    const refused = await supportContext.request.post(`${base}/v1/credit-notes/${second.body.data.id}/approve`, {
      headers: { 'x-csrf-token': csrf!, 'idempotency-key': randomUUID(), origin: base },
    });
    expect(refused.status()).toBe(403);
    const refusal = (await refused.json()) as { error: { code: string; reason: string; message: string; request_id: string } };
    expect([refusal.error.code, refusal.error.reason]).toEqual(['unauthorized', 'role_forbidden']);
    expect(refusal.error.request_id).toBeTruthy();
    expect((await tenant.api('GET', `/v1/credit-notes/${second.body.data.id}`)).body.data.status).toBe('pending_approval');

    // The audit log names the actor of each step.
    const users = (await tenant.api('GET', '/v1/users')).body.data as { id: string; email: string }[];
    const idOf = (email: string) => users.find((u) => u.email === email)!.id;
    const log = (await tenant.api('GET', '/v1/audit-log?limit=100')).body.data as {
      actor: { type: string; id: string };
      action: string;
      object_id: string | null;
    }[];
    const by = (objectId: string, action: RegExp) => log.find((e) => e.object_id === objectId && action.test(e.action))?.actor;
    expect(by(planId, /plan/)).toMatchObject({ type: 'user', id: idOf(OWNER.email) });
    expect(by(customerId, /customer/)).toMatchObject({ type: 'user', id: idOf(OWNER.email) });
    expect(by(creditNoteId, /approve/)).toMatchObject({ type: 'user', id: idOf(FINANCE.email) });
    expect(log.find((e) => e.object_id === second.body.data.id && /approve/.test(e.action))).toBeUndefined();
    expect(log.some((e) => e.actor.type === 'api_key' && /setting/.test(e.action))).toBe(true);
    await go(owner, '/audit-log', 'Audit log');
    await owner
      .getByRole('cell', { name: /Farah Finance|finance-op@tenant\.test/ })
      .first()
      .waitFor();
    await check(owner, '16-audit-log');

    // Every other page renders and passes axe.
    for (const [path, heading, name] of [
      ['/customers', 'Customers', '17-customers'],
      ['/subscriptions', 'Subscriptions', '18-subscriptions'],
      ['/invoices', 'Invoices', '19-invoices'],
      ['/payments', 'Payments', '20-payments'],
      ['/credit-notes', 'Credit notes', '21-credit-notes'],
      ['/webhooks', 'Webhooks', '22-webhooks'],
      ['/dunning', 'Dunning', '23-dunning'],
      ['/reconciliation', 'Reconciliation', '24-reconciliation'],
      ['/gst-returns', 'GST returns', '25-gst-returns'],
      ['/analytics', 'Analytics', '26-analytics'],
      ['/settings', 'Settings', '27-settings'],
      ['/settings/entities', 'Settings', '28-entities'],
      ['/settings/gateways', 'Settings', '28-gateways'],
      ['/settings/api-keys', 'Settings', '29-api-keys'],
      ['/settings/email', 'Settings', '31-settings-email'],
    ] as const) {
      await go(owner, path, heading);
      await check(owner, name);
    }
    await go(owner, `/payments`, 'Payments');
    await owner.getByRole('link', { name: 'UTR123456' }).click();
    await owner.getByRole('heading', { level: 1, name: /^Payment/ }).waitFor();
    await check(owner, '30-payment');

    expect(cspViolations).toEqual([]);
  }, 300_000);

  it('serves the app shell for client routes and 404s a missing asset', async () => {
    const page = await fetch(`${base}/dashboard/invoices/anything`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    expect(await page.text()).toContain('<div id="root">');
    expect((await fetch(`${base}/dashboard/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${base}/favicon.ico`)).status).toBe(200);
  });
});
