import { mkdirSync } from 'node:fs';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDashboard, chromiumSkipNote, hasChromium, screenshotAndSeriousAxeViolations, startBrowserKosh, signInWithApiKey } from '../support/browser.js';
import type { Tenant, TestKosh } from '../support/harness.js';

/**
 * The plan edit screen and the usage screen in Chromium, each result checked over the API: a plan
 * renamed, its price changed (the old one archived), a metered price added on a metric made on the
 * usage screen (with a property summed), a price archived, the plan archived; a test card added on
 * the customer's page and an invoice charged now with it (the method picked by name), TDS certified
 * on another invoice; the top bar names the tenant, not its id. Screenshots in test-output/plans/, no serious or critical axe violation.
 */
const skipNote = chromiumSkipNote('dashboard plans and usage');
const OUT = 'test-output/plans';

let t: TestKosh;
let browser: Browser;
let base: string;
let tenant: Tenant;
let context: BrowserContext;
let page: Page;
const pageErrors: string[] = [];
let planId: string;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API bodies are checked field by field below
type Row = Record<string, any>;

async function check(p: Page, name: string): Promise<void> {
  const serious = await screenshotAndSeriousAxeViolations(p, `${OUT}/${name}.png`);
  expect(serious, `${name}: ${JSON.stringify(serious)}`).toEqual([]);
}

async function go(p: Page, path: string, heading: string | RegExp): Promise<void> {
  await p.goto(`${base}/dashboard${path}`);
  await p.getByRole('heading', { level: 1, name: heading }).waitFor();
}

beforeAll(async () => {
  if (!hasChromium) return;
  buildDashboard();
  mkdirSync(OUT, { recursive: true });
  ({ t, browser, base } = await startBrowserKosh());
  tenant = await t.registerTenant({ name: 'Chai Point Analytics' });
  planId = (await tenant.api('POST', '/v1/plans', { name: 'Starter', interval_unit: 'month', amount: 99_900, currency: 'INR', hsn_code: '998314' })).body.data
    .id;
  context = await browser.newContext({ viewport: { width: 1366, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await signInWithApiKey(page, base, tenant.key);
}, 240_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)(`plan edit and usage screens in a browser${skipNote}`, () => {
  it('names the tenant in the top bar, not its id', async () => {
    await expect.poll(() => page.getByTestId('tenant-name').textContent()).toBe('Chai Point Analytics');
    expect((await tenant.api('GET', '/v1/settings')).body.data.tenant_name).toBe('Chai Point Analytics');
  });

  it('creates a metric summing a property, then renames a plan, changes its price, adds a metered price, archives a price and the plan', async () => {
    await go(page, '/metrics', 'Usage');
    const metricForm = page.getByRole('form', { name: 'New billable metric' });
    await metricForm.getByLabel('Name').fill('Tokens');
    await metricForm.getByLabel('Code').fill('tokens');
    await metricForm.getByLabel('Aggregation').selectOption('sum');
    await metricForm.getByLabel('Property').fill('count');
    await metricForm.getByRole('button', { name: 'Create metric' }).click();
    await page.getByRole('cell', { name: 'sum of count' }).waitFor();
    // The form reset after the success: the aggregation is back to a count, without its property.
    expect(await metricForm.getByLabel('Property').count()).toBe(0);
    await check(page, '01-metrics');
    expect(((await tenant.api('GET', '/v1/billable-metrics')).body.data as Row[]).map((m) => [m.code, m.aggregation, m.field])).toEqual([
      ['tokens', 'sum', 'count'],
    ]);

    await go(page, '/plans', 'Plans');
    await page.getByRole('link', { name: 'Starter' }).click();
    await page.getByRole('heading', { level: 1, name: 'Starter' }).waitFor();
    const edit = page.getByRole('form', { name: 'Edit plan' });
    await edit.getByLabel('Plan name').fill('Starter monthly');
    await edit.getByLabel('Description').fill('For small teams');
    await edit.getByRole('button', { name: 'Save plan' }).click();
    await page.getByRole('heading', { level: 1, name: 'Starter monthly' }).waitFor();

    const price = page.getByRole('form', { name: 'Add or change a price' });
    await price.getByLabel('New price').fill('1,199.00');
    await price.getByRole('button', { name: 'Add price' }).click();
    await page.getByText('Price ₹1,199.00 / month added; the price it replaces is archived.').waitFor();
    await price.getByLabel('Kind of price').selectOption('metered');
    await price.getByLabel('Billable metric').selectOption({ label: 'Tokens (sum of count)' });
    await price.getByLabel('Price per unit').fill('0.20');
    await price.getByLabel('Units per package').fill('1000');
    await price.getByRole('button', { name: 'Add price' }).click();
    await page.getByText('Price ₹0.20 per 1000 units of tokens / month added; the price it replaces is archived.').waitFor();
    await check(page, '02-plan-edit');
    let plan = (await tenant.api('GET', `/v1/plans/${planId}`)).body.data;
    expect([plan.name, plan.description]).toEqual(['Starter monthly', 'For small teams']);
    const prices = () => (plan.prices as Row[]).map((x) => [x.billing_scheme, x.amount, x.package_size, x.metric_code, x.active]).sort();
    expect(prices()).toEqual([
      ['metered', 20, 1000, 'tokens', true],
      ['per_unit', 119_900, null, null, true],
      ['per_unit', 99_900, null, null, false],
    ]);

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Archive the INR tokens price' }).click();
    await page.getByText('Price archived.').waitFor();
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Archive plan' }).click();
    await page.getByText('Starter monthly archived.').waitFor();
    plan = (await tenant.api('GET', `/v1/plans/${planId}`)).body.data;
    expect(plan.active).toBe(false);
    expect(prices().find((x) => x[0] === 'metered')).toEqual(['metered', 20, 1000, 'tokens', false]);
    // An archived plan is offered to no new subscription.
    await go(page, '/subscriptions?new=1', 'Subscriptions');
    const newSubscription = page.locator('details.create');
    await newSubscription.getByRole('combobox', { name: 'Plan' }).fill('Starter');
    await newSubscription.getByRole('option', { name: 'Nothing matches' }).waitFor();
    expect(pageErrors).toEqual([]);
  }, 120_000);
  it('adds a test card on the customer page, charges an invoice now with it, and records a TDS certificate on another', async () => {
    expect((await tenant.api('POST', '/v1/gateway-connections', { provider: 'test' })).status).toBe(201);
    const customer = (await tenant.api('POST', '/v1/customers', { email: 'ap@dosa-labs.test', name: 'Dosa Labs' })).body.data;
    const invoice = async (description: string) =>
      (
        await tenant.api('POST', '/v1/invoices', {
          customer_id: customer.id,
          currency: 'INR',
          lines: [{ description, unit_amount: 1_000_000, quantity: 1, hsn_code: '998314' }],
        })
      ).body.data;
    const charged = await invoice('Implementation');
    const certified = await invoice('Training');
    // The tenant has no GSTIN: no GST is charged.
    expect([charged.status, charged.total]).toEqual(['open', 1_000_000]);

    await go(page, `/customers/${customer.id}`, 'Dosa Labs');
    const card = page.getByRole('form', { name: 'Add a test card' });
    await card.getByLabel('Test card').selectOption({ label: 'Visa that pays' });
    await card.getByRole('button', { name: 'Add test card' }).click();
    await card.getByText(/ending 4242 \(test\), default added\.$/).waitFor();
    await page
      .getByRole('region', { name: 'Payment methods' })
      .getByRole('cell', { name: /ending 4242/ })
      .waitFor();
    await check(page, '03-payment-methods');

    await go(page, `/invoices/${charged.id}`, `Invoice ${charged.number}`);
    const charge = page.getByRole('form', { name: 'Charge now' });
    // The customer's one method is offered by name: brand and last four digits.
    expect(await charge.getByLabel('Payment method').locator('option:checked').textContent()).toBe('visa ending 4242 (test), default');
    await charge.getByRole('button', { name: 'Charge ₹10,000.00' }).click();
    await page.getByText('Charged ₹10,000.00.').waitFor();
    await page.getByRole('cell', { name: 'succeeded' }).waitFor();
    expect((await tenant.api('GET', `/v1/invoices/${charged.id}`)).body.data).toMatchObject({ status: 'paid', amount_paid: 1_000_000 });

    await go(page, `/invoices/${certified.id}`, `Invoice ${certified.number}`);
    const tds = page.getByRole('form', { name: 'Record a TDS certificate' });
    await tds.getByLabel('TDS amount').fill('1,000.00');
    await tds.getByLabel('Certificate number').fill('CERT-131-0001');
    await tds.getByLabel('Section or payment code').selectOption('1026');
    await check(page, '04-charge-and-tds');
    await tds.getByRole('button', { name: 'Record TDS' }).click();
    await page.getByText('TDS of ₹1,000.00 recorded.').waitFor();
    const after = (await tenant.api('GET', `/v1/invoices/${certified.id}`)).body.data;
    expect([after.amount_tds, after.amount_due]).toEqual([100_000, 900_000]);
    expect(pageErrors).toEqual([]);
  }, 120_000);
});
