import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gstinFor } from '../../../test/support/billing.js';
import { startMailSink, type MailSink } from '../../../test/support/mail-sink.js';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { emitEvent } from '../../platform/events/events.js';
import { runDueDunningSteps, scanOverdueInvoices } from '../../flows/dunning/run-dunning.js';
import { DUNNING_EMAIL_JOB, sendDunningEmails } from '../../flows/dunning/dunning-mail.js';

let sink: MailSink;
let t: TestKosh;

const HOUR = 3_600_000;

async function ok(tenant: Tenant, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, body?: unknown) {
  const res = await tenant.api(method, url, body);
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${res.text}`);
  return res.body;
}

async function advance(hours: number) {
  t.clock.set(new Date(t.clock.now().getTime() + hours * HOUR));
  await t.kosh.worker.drain();
  await t.kosh.worker.drain();
}

/** A tenant whose default campaign is replaced by `steps`, with one customer. */
async function tenantWithCampaign(
  steps: { delay_hours: number; channel: string; is_payment_wall?: boolean; subject?: string; body?: string; template_name?: string }[],
  extra: Record<string, unknown> = {},
) {
  const tenant = await t.registerTenant({ gstin: gstinFor('29') }); // registered for GST: ₹1,000.00 + 18 % = ₹1,180.00
  const campaign = (await ok(tenant, 'POST', '/v1/dunning-campaigns', { name: 'Test campaign', is_default: true, trigger_event: 'invoice_overdue', ...extra }))
    .data;
  for (const step of steps) await ok(tenant, 'POST', `/v1/dunning-campaigns/${campaign.id}/steps`, step);
  const customer = (await ok(tenant, 'POST', '/v1/customers', { email: `payer-${campaign.id.slice(-6)}@dunning.test`, name: 'Priya Payer' })).data;
  return { tenant, campaign, customer };
}

async function overdueInvoice(tenant: Tenant, customerId: string, dueInHours: number) {
  const due = new Date(t.clock.now().getTime() + dueInHours * HOUR).toISOString();
  return (
    await ok(tenant, 'POST', '/v1/invoices', {
      customer_id: customerId,
      currency: 'INR',
      due_date: due,
      lines: [{ description: 'Service', quantity: 1, unit_amount: 100000, hsn_code: '998314' }],
    })
  ).data;
}

async function executionsOf(tenant: Tenant, invoiceId: string) {
  return (await ok(tenant, 'GET', `/v1/dunning-executions?invoice_id=${invoiceId}`)).data;
}

beforeAll(async () => {
  sink = await startMailSink();
  t = await startTestKosh({ env: { SMTP_URL: sink.url, MAIL_FROM: 'Kosh Billing <billing@kosh.test>', KOSH_RAZORPAY_API_BASE: 'http://127.0.0.1:9' } });
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
});

afterAll(async () => {
  await t?.close();
  await sink?.close();
});

describe('dunning campaigns', () => {
  it('gives a new tenant a default campaign: e-mail, retry at 1 day, e-mail at 3, retry at 5, payment wall at 7', async () => {
    const tenant = await t.registerTenant();
    const res = await tenant.http.GET('/v1/dunning-campaigns');
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    const campaign = res.body.data[0];
    expect(campaign).toMatchObject({ is_default: true, is_active: true, trigger_event: 'payment_failed', active_subscriptions: 0 });
    expect(
      campaign!.steps.map((s: { delay_hours: number; channel: string; is_payment_wall: boolean; step_order: number }) => [
        s.step_order,
        s.delay_hours,
        s.channel,
        s.is_payment_wall,
      ]),
    ).toEqual([
      [1, 0, 'email', false],
      [2, 24, 'retry_payment', false],
      [3, 72, 'email', false],
      [4, 120, 'retry_payment', false],
      [5, 168, 'email', true],
    ]);
  });

  describe('POST /v1/dunning-campaigns', () => {
    it('creates a campaign from SPEC 4.6 formal body with the second description defaults and no steps', async () => {
      const tenant = await t.registerTenant();
      const res = await tenant.http.POST('/v1/dunning-campaigns', { body: { name: 'Gentle', trigger_event: 'payment_failed' } });
      expect(res.status).toBe(201);
      expect(res.body.data).toMatchObject({
        tenant_id: tenant.tenantId,
        name: 'Gentle',
        description: '',
        is_active: true,
        trigger_event: 'payment_failed',
        is_default: false,
        payment_wall_enabled: false,
        payment_wall_grace_days: 3,
        active_subscriptions: 0,
        steps: [],
      });
    });

    it('keeps one default: making another default unsets the old one', async () => {
      const tenant = await t.registerTenant();
      const created = (await ok(tenant, 'POST', '/v1/dunning-campaigns', { name: 'Firm', is_default: true })).data;
      const all = (await ok(tenant, 'GET', '/v1/dunning-campaigns')).data;
      expect(all.filter((c: { is_default: boolean }) => c.is_default).map((c: { id: string }) => c.id)).toEqual([created.id]);
    });

    it.each([
      [{}, 'name missing'],
      [{ name: 'X', trigger_event: 'sometimes' }, 'unknown trigger'],
      [{ name: 'X', payment_wall_grace_days: -1 }, 'negative grace'],
    ])('refuses %j (%s) with 400', async (body, _why) => {
      const tenant = await t.registerTenant();
      expect((await tenant.api('POST', '/v1/dunning-campaigns', body)).status).toBe(400);
    });
  });

  describe('steps', () => {
    it('assigns step_order, updates and deletes steps', async () => {
      const tenant = await t.registerTenant();
      const campaign = (await ok(tenant, 'POST', '/v1/dunning-campaigns', { name: 'Steps' })).data;
      const first = (await ok(tenant, 'POST', `/v1/dunning-campaigns/${campaign.id}/steps`, { delay_hours: 0, channel: 'email', subject: 'Hi' })).data;
      const second = (await ok(tenant, 'POST', `/v1/dunning-campaigns/${campaign.id}/steps`, { delay_hours: 48, channel: 'sms' })).data;
      expect([first.step_order, second.step_order]).toEqual([1, 2]);
      expect((await ok(tenant, 'PATCH', `/v1/dunning-campaigns/${campaign.id}/steps/${second.id}`, { delay_hours: 72 })).data.delay_hours).toBe(72);
      await ok(tenant, 'DELETE', `/v1/dunning-campaigns/${campaign.id}/steps/${first.id}`);
      expect((await ok(tenant, 'GET', `/v1/dunning-campaigns/${campaign.id}`)).data.steps.map((s: { id: string }) => s.id)).toEqual([second.id]);
    });

    it.each([[{ delay_hours: -1, channel: 'email' }], [{ delay_hours: 2161, channel: 'email' }], [{ delay_hours: 1, channel: 'pigeon' }]])(
      'refuses %j with 400',
      async (body) => {
        const tenant = await t.registerTenant();
        const campaign = (await ok(tenant, 'POST', '/v1/dunning-campaigns', { name: 'Bad steps' })).data;
        expect((await tenant.api('POST', `/v1/dunning-campaigns/${campaign.id}/steps`, body)).status).toBe(400);
      },
    );

    it.each([
      ['a body that does not compile', { body: 'Hello {{customer.name}},\n{{#if pay_url}}Pay here' }, 'body'],
      ['a body that calls log (forged log lines)', { body: '{{log "x\n{\\"level\\":60,\\"msg\\":\\"forged\\"}"}}' }, 'body'],
      ['a subject with a partial', { subject: '{{> header}} Payment due' }, 'subject'],
    ])('refuses a step with %s with 400 when it is added or changed, and keeps the step as it was', async (_what, template, field) => {
      const tenant = await t.registerTenant();
      const campaign = (await ok(tenant, 'POST', '/v1/dunning-campaigns', { name: 'Templates' })).data;
      const added = await tenant.http.POST('/v1/dunning-campaigns/{id}/steps', {
        path: { id: campaign.id },
        body: { delay_hours: 0, channel: 'email', ...template },
      });
      expect(added.status, added.text).toBe(400);
      expect(added.error!).toMatchObject({ code: 'validation_failed', reason: 'template_invalid', details: [{ field }] });
      const step = (await ok(tenant, 'POST', `/v1/dunning-campaigns/${campaign.id}/steps`, { delay_hours: 0, channel: 'sms', body: 'Pay {{invoice.number}}' }))
        .data;
      const changed = await tenant.http.PATCH('/v1/dunning-campaigns/{id}/steps/{step_id}', { path: { id: campaign.id, step_id: step.id }, body: template });
      expect(changed.status, changed.text).toBe(400);
      const steps = (await ok(tenant, 'GET', `/v1/dunning-campaigns/${campaign.id}`)).data.steps;
      expect(steps.map((s: { body: string }) => s.body)).toEqual(['Pay {{invoice.number}}']);
    });

    it('answers an unknown campaign or step with 404', async () => {
      const tenant = await t.registerTenant();
      const campaign = (await ok(tenant, 'POST', '/v1/dunning-campaigns', { name: 'X' })).data;
      const missing = '00000000-0000-7000-8000-000000000000';
      expect((await tenant.http.POST('/v1/dunning-campaigns/{id}/steps', { path: { id: missing }, body: { delay_hours: 1, channel: 'email' } })).status).toBe(
        404,
      );
      expect(
        (await tenant.http.PATCH('/v1/dunning-campaigns/{id}/steps/{step_id}', { path: { id: campaign.id, step_id: missing }, body: { delay_hours: 1 } }))
          .status,
      ).toBe(404);
    });
  });
});

describe('dunning an overdue invoice', () => {
  it('puts a hosted checkout link for the invoice in each dunning e-mail, and the link pays it', async () => {
    const { tenant, customer } = await tenantWithCampaign([
      { delay_hours: 0, channel: 'email', template_name: 'dunning_reminder' },
      { delay_hours: 48, channel: 'email', template_name: 'dunning_final_notice' },
      { delay_hours: 96, channel: 'email' },
    ]);
    const invoice = await overdueInvoice(tenant, customer.id, 24);
    const mailsTo = () => sink.messages.filter((m) => m.envelope.to.includes(customer.email));
    const linkOf = (text: string | undefined) =>
      /https?:\/\/[^/\s]+(\/checkout\/[^\s"<)]+)/
        .exec(text ?? '')?.[1]
        ?.replace(/&amp;/g, '&')
        .replace(/&#x3D;/g, '=');

    await advance(25); // overdue: the reminder
    await advance(48); // the final notice
    const [reminder, final] = mailsTo();
    expect(reminder?.subject).toMatch(new RegExp(`^Payment due: invoice ${invoice.number} from Tenant \\d+$`));
    expect(final?.subject).toContain('Final notice');
    for (const mail of [reminder!, final!]) {
      const link = linkOf(mail.text);
      expect(link, mail.text).toBeDefined();
      expect(mail.html).toContain('Pay invoice');
      expect(linkOf(mail.html)).toBe(link);
    }
    // Each step has its own checkout session; both open the invoice's page.
    expect(linkOf(reminder!.text)).not.toBe(linkOf(final!.text));
    const page = await t.call({ method: 'GET', url: linkOf(final!.text)! });
    expect(page.status).toBe(200);
    expect(page.text).toContain(invoice.number);
    const actions = (await executionsOf(tenant, invoice.id))[0].actions as { detail: string; outcome: string }[];
    expect(actions.map((a) => [a.outcome, a.detail])).toEqual([
      ['succeeded', `e-mailed ${customer.email} with a pay link`],
      ['succeeded', `e-mailed ${customer.email} with a pay link`],
    ]);

    // A link lives 24 h (CHECKOUT_TTL_MS): the reminder's is gone, the final notice's pays the invoice; dunning stops, no third e-mail.
    expect((await t.call({ method: 'GET', url: linkOf(reminder!.text)! })).status).toBe(404);
    const paid = await t.call({
      method: 'POST',
      url: linkOf(final!.text)!,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'card_number=4242424242424242',
    });
    expect(paid.status).toBe(303);
    await t.kosh.worker.drain();
    expect((await ok(tenant, 'GET', `/v1/invoices/${invoice.id}`)).data.status).toBe('paid');
    expect((await executionsOf(tenant, invoice.id))[0].status).toBe('recovered');
    await advance(100);
    expect(mailsTo()).toHaveLength(2);
  });

  it('sends no reminder for an invoice paid between the step and its e-mail job', async () => {
    const { tenant, customer } = await tenantWithCampaign([{ delay_hours: 0, channel: 'email' }]);
    const invoice = await overdueInvoice(tenant, customer.id, 24);
    t.clock.set(new Date(t.clock.now().getTime() + 25 * HOUR));
    const env = { db: t.kosh.deps.db, clock: t.clock, config: t.config, scope: t.kosh.deps.scope };
    await scanOverdueInvoices(env.db, t.config.mode, t.clock.now());
    await runDueDunningSteps(env); // the step ran: its e-mail job is queued, not run
    await ok(tenant, 'POST', '/v1/payments/offline', {
      customer_id: customer.id,
      invoice_id: invoice.id,
      payment_type: 'bank_transfer',
      amount: invoice.amount_due,
    });
    await t.kosh.worker.drain();
    expect(sink.messages.filter((m) => m.envelope.to.includes(customer.email))).toHaveLength(0);
    const [execution] = await executionsOf(tenant, invoice.id);
    expect(execution.actions.map((a: { outcome: string; detail: string }) => [a.outcome, a.detail])).toEqual([['skipped', 'invoice is paid; no e-mail sent']]);
  });

  it('sends a batch of 30 due reminders from one job, each with its own working link, once even when the job runs twice', async () => {
    // A second step keeps the executions active (a last step would exhaust them and mark the invoices uncollectible first).
    const { tenant, customer: first } = await tenantWithCampaign([
      { delay_hours: 0, channel: 'email' },
      { delay_hours: 96, channel: 'email' },
    ]);
    const customers = [first];
    for (let i = 1; i < 30; i += 1)
      customers.push((await ok(tenant, 'POST', '/v1/customers', { email: `batch-${i}-${first.id.slice(-6)}@dunning.test`, name: `Batch ${i}` })).data);
    const invoices = [];
    for (const c of customers) invoices.push(await overdueInvoice(tenant, c.id, 24));
    const env = { db: t.kosh.deps.db, clock: t.clock, config: t.config, secrets: t.kosh.deps.secrets, scope: t.kosh.deps.scope };
    t.clock.set(new Date(t.clock.now().getTime() + 25 * HOUR));
    await scanOverdueInvoices(env.db, t.config.mode, t.clock.now());
    await runDueDunningSteps(env, 1_000); // one runner batch: one e-mail job for the tenant's 30 steps
    const jobs = await env.db.selectFrom('jobs').selectAll().where('kind', '=', DUNNING_EMAIL_JOB).where('tenant_id', '=', tenant.tenantId).execute();
    expect(jobs).toHaveLength(1);
    expect((jobs[0]!.payload as { emails: unknown[] }).emails).toHaveLength(30);
    await sendDunningEmails(jobs[0]!, env);
    await sendDunningEmails(jobs[0]!, env); // a rerun (the worker died after commit) sends nothing more
    await t.kosh.worker.drain(); // the queued job runs a third time, and the outbox delivers
    await t.kosh.worker.drain();

    const addresses = new Set(customers.map((c) => c.email as string));
    const mails = sink.messages.filter((m) => m.envelope.to.some((to) => addresses.has(to)));
    expect(mails).toHaveLength(30);
    expect(new Set(mails.map((m) => m.envelope.to[0])).size).toBe(30);
    const links = mails.map((m) => /https?:\/\/[^/\s]+(\/checkout\/[^\s"<)]+)/.exec(m.text ?? '')?.[1]);
    expect(new Set(links).size).toBe(30);
    for (const [i, mail] of mails.entries()) {
      const invoice = invoices[customers.findIndex((c) => c.email === mail.envelope.to[0])];
      expect(mail.subject).toContain(invoice.number);
      const page = await t.call({ method: 'GET', url: links[i]! });
      expect(page.status).toBe(200);
      expect(page.text).toContain(invoice.number);
    }
    for (const [i, invoice] of invoices.entries()) {
      const [execution] = await executionsOf(tenant, invoice.id);
      expect(execution.actions.map((a: { outcome: string; detail: string }) => [a.outcome, a.detail])).toEqual([
        ['succeeded', `e-mailed ${customers[i].email} with a pay link`],
      ]);
    }
  });

  it('sends the rest of a batch with their links when one invoice gets no checkout, and that one without a link, saying why', async () => {
    const { tenant, customer: inr } = await tenantWithCampaign([
      { delay_hours: 0, channel: 'email' },
      { delay_hours: 96, channel: 'email' },
    ]);
    // USD goes to a Razorpay connection whose API refuses connections (KOSH_RAZORPAY_API_BASE below): its checkout fails.
    await ok(tenant, 'POST', '/v1/gateway-connections', {
      provider: 'razorpay',
      credentials: { key_id: 'rzp_test_x', key_secret: 'secret', webhook_secret: 'whsec' },
      currencies: ['USD'],
    });
    const usd = (await ok(tenant, 'POST', '/v1/customers', { email: `usd-${inr.id.slice(-6)}@dunning.test`, name: 'Dollar Payer' })).data;
    const inrInvoice = await overdueInvoice(tenant, inr.id, 24);
    const usdInvoice = (
      await ok(tenant, 'POST', '/v1/invoices', {
        customer_id: usd.id,
        currency: 'USD',
        exchange_rate: '83.5',
        due_date: new Date(t.clock.now().getTime() + 24 * HOUR).toISOString(),
        lines: [{ description: 'Service', quantity: 1, unit_amount: 10000, hsn_code: '998314' }],
      })
    ).data;
    await advance(25);
    const [inrMail] = sink.messages.filter((m) => m.envelope.to.includes(inr.email));
    const [usdMail] = sink.messages.filter((m) => m.envelope.to.includes(usd.email));
    expect(inrMail?.text).toMatch(/\/checkout\//);
    expect(usdMail?.text).not.toMatch(/\/checkout\//);
    expect(usdMail?.text).toContain('Please pay it at your earliest convenience');
    expect((await executionsOf(tenant, inrInvoice.id))[0].actions[0].detail).toBe(`e-mailed ${inr.email} with a pay link`);
    expect((await executionsOf(tenant, usdInvoice.id))[0].actions[0]).toMatchObject({
      outcome: 'succeeded',
      detail: expect.stringMatching(new RegExp(`^e-mailed ${usd.email} \\(no pay link: .+\\)$`)),
    });
  });

  it('e-mails, raises the payment wall, and stops at once when the customer pays by bank transfer', async () => {
    const { tenant, campaign, customer } = await tenantWithCampaign([
      {
        delay_hours: 0,
        channel: 'email',
        subject: 'Invoice {{invoice.number}} is overdue',
        body: 'Dear {{customer.name}}, please pay {{invoice.amount_due}}.',
      },
      { delay_hours: 24, channel: 'in_app' },
      { delay_hours: 48, channel: 'email', is_payment_wall: true },
      { delay_hours: 96, channel: 'email' },
    ]);
    const invoice = await overdueInvoice(tenant, customer.id, 24);
    const mailsBefore = sink.messages.length;

    await advance(25); // overdue now: the scan starts dunning, the first step e-mails
    const [execution] = await executionsOf(tenant, invoice.id);
    expect(execution).toMatchObject({ campaign_id: campaign.id, trigger_event: 'invoice_overdue', status: 'active', steps_done: 1 });
    const reminder = sink.messages.slice(mailsBefore).find((m) => m.envelope.to.includes(customer.email));
    expect(reminder?.subject).toBe(`Invoice ${invoice.number} is overdue`);
    expect(reminder?.text).toContain('Dear Priya Payer, please pay INR 1,180.00.');
    expect(reminder?.html).toContain('Dear Priya Payer');

    await advance(24);
    await advance(24);
    const walled = (await executionsOf(tenant, invoice.id))[0];
    expect(walled.actions.map((a: { channel: string; outcome: string }) => [a.channel, a.outcome])).toEqual([
      ['email', 'succeeded'],
      ['in_app', 'succeeded'],
      ['email', 'succeeded'],
    ]);
    expect(walled.payment_wall_active).toBe(true);
    const access = (await ok(tenant, 'GET', `/v1/customers/${customer.id}/access`)).data;
    expect(access).toMatchObject({ blocked: true, reason: 'payment_wall', invoice_ids: [invoice.id] });
    const events = (await ok(tenant, 'GET', '/v1/events?type=dunning.payment_wall_activated')).data;
    expect(events).toHaveLength(1);

    await ok(tenant, 'POST', '/v1/payments/offline', {
      customer_id: customer.id,
      invoice_id: invoice.id,
      payment_type: 'bank_transfer',
      amount: invoice.amount_due,
    });
    const recovered = (await executionsOf(tenant, invoice.id))[0];
    expect(recovered).toMatchObject({ status: 'recovered', payment_wall_active: false });
    expect((await ok(tenant, 'GET', `/v1/customers/${customer.id}/access`)).data).toEqual({
      blocked: false,
      reason: null,
      invoice_ids: [],
      blocked_since: null,
    });
    expect((await ok(tenant, 'GET', '/v1/events?type=dunning.payment_wall_lifted')).data).toHaveLength(1);

    const mailsAfterPayment = sink.messages.filter((m) => m.envelope.to.includes(customer.email)).length;
    await advance(200);
    expect(sink.messages.filter((m) => m.envelope.to.includes(customer.email)).length).toBe(mailsAfterPayment);
    expect((await executionsOf(tenant, invoice.id))[0].actions).toHaveLength(3);

    const overview = (await ok(tenant, 'GET', '/v1/analytics/dunning/overview')).data;
    expect(overview).toMatchObject({ total_retries: 3, total_successes: 1, successful_retries: 1, success_rate: 0.3333, recovery_rate: 0.3333 });
    expect(overview.by_action).toHaveLength(3);
  });

  it('applies steps added to the campaign mid-execution after the ones already run', async () => {
    const { tenant, campaign, customer } = await tenantWithCampaign([{ delay_hours: 0, channel: 'in_app' }]);
    const invoice = await overdueInvoice(tenant, customer.id, 1);
    await ok(tenant, 'POST', `/v1/dunning-campaigns/${campaign.id}/steps`, { delay_hours: 10, channel: 'sms' });
    await advance(2);
    await advance(12);
    const execution = (await executionsOf(tenant, invoice.id))[0];
    expect(execution.actions.map((a: { channel: string; outcome: string; detail: string }) => [a.channel, a.outcome])).toEqual([
      ['in_app', 'succeeded'],
      ['sms', 'skipped'],
    ]);
    expect(execution.actions[1].detail).toBe('no SMS provider is configured');
    expect(execution.status).toBe('exhausted');
  });

  it('marks the invoice uncollectible when the campaign is exhausted, and the subscription becomes unpaid', async () => {
    const { tenant, customer } = await tenantWithCampaign([{ delay_hours: 0, channel: 'email' }], { exhausted_action: 'mark_unpaid' });
    const plan = (await ok(tenant, 'POST', '/v1/plans', { name: 'Monthly', code: 'monthly', interval_unit: 'month', amount: 50000, currency: 'INR' })).data;
    const subscription = (await ok(tenant, 'POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id })).data;
    const first = (await ok(tenant, 'GET', `/v1/invoices?subscription_id=${subscription.id}`)).data[0];
    t.clock.set(new Date(new Date(first.due_date).getTime() + HOUR));
    await advance(1);
    const execution = (await executionsOf(tenant, first.id))[0];
    expect(execution.status).toBe('exhausted');
    expect((await ok(tenant, 'GET', `/v1/invoices/${first.id}`)).data.status).toBe('uncollectible');
    // The campaign's last step is an e-mail: the run that queued it also exhausted the execution and
    // marked the invoice uncollectible, and the e-mail still goes, with a link that pays the invoice.
    expect(execution.actions[0]).toMatchObject({ channel: 'email', outcome: 'succeeded' });
    expect(execution.actions[0].detail).toContain('with a pay link');
    const mail = sink.messages.find((m) => m.envelope.to.includes(customer.email) && /\/checkout\//.test(m.text ?? ''));
    expect(mail, "the last step's e-mail with its pay link").toBeDefined();
    await advance(1);
    expect((await ok(tenant, 'GET', `/v1/subscriptions/${subscription.id}`)).data.status).toBe('unpaid');
  });

  it('starts in the same transaction as invoice.payment_failed, once per invoice', async () => {
    const { tenant, customer } = await tenantWithCampaign([{ delay_hours: 5, channel: 'in_app' }], { trigger_event: 'payment_failed' });
    const invoice = await overdueInvoice(tenant, customer.id, 240);
    for (let i = 0; i < 2; i += 1) {
      await t.kosh.deps.db
        .transaction()
        .execute((tx) =>
          emitEvent({ tx, tenantId: tenant.tenantId, now: t.clock.now() }, 'invoice.payment_failed', { id: invoice.id, customer_id: customer.id }),
        );
    }
    const executions = await executionsOf(tenant, invoice.id);
    expect(executions).toHaveLength(1);
    expect(executions[0]).toMatchObject({ trigger_event: 'payment_failed', status: 'active', steps_done: 0 });
  });

  it('lists overdue invoices oldest first with their dunning state', async () => {
    const { tenant, customer } = await tenantWithCampaign([{ delay_hours: 1000, channel: 'email' }]);
    const older = await overdueInvoice(tenant, customer.id, 1);
    const newer = await overdueInvoice(tenant, customer.id, 2);
    await advance(3);
    const res = await tenant.http.GET('/v1/collections');
    expect(res.status).toBe(200);
    expect(res.body.data.map((i: { invoice_id: string }) => i.invoice_id)).toEqual([older.id, newer.id]);
    expect(res.body.data[0]!.dunning).toMatchObject({ status: 'active', steps_done: 0 });
    expect(res.body.data[0]!.dunning!.next_step_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(res.body).toMatchObject({ has_more: false, total_count: 2 });
    // Pages and cursors (the invoice id), oldest due first.
    const first = await tenant.http.GET('/v1/collections', { query: { limit: 1 } });
    expect(first.body).toMatchObject({ has_more: true, total_count: 2 });
    expect(first.body.data.map((i: { invoice_id: string }) => i.invoice_id)).toEqual([older.id]);
    const next = await tenant.http.GET('/v1/collections', { query: { limit: 1, starting_after: older.id } });
    expect(next.body).toMatchObject({ has_more: false, total_count: 2 });
    expect(next.body.data.map((i: { invoice_id: string }) => i.invoice_id)).toEqual([newer.id]);
    const previous = await tenant.http.GET('/v1/collections', { query: { ending_before: newer.id } });
    expect(previous.body.data.map((i: { invoice_id: string }) => i.invoice_id)).toEqual([older.id]);
  });

  it('refuses to delete a campaign that is dunning invoices unless told to cancel them', async () => {
    const { tenant, campaign, customer } = await tenantWithCampaign([{ delay_hours: 1000, channel: 'email' }]);
    const invoice = await overdueInvoice(tenant, customer.id, 1);
    await advance(2);
    const refused = await tenant.http.DELETE('/v1/dunning-campaigns/{id}', { path: { id: campaign.id } });
    expect(refused.status).toBe(409);
    expect(refused.error!.reason).toBe('campaign_has_active_executions');
    expect((await tenant.http.DELETE('/v1/dunning-campaigns/{id}', { path: { id: campaign.id }, query: { cancel_executions: 'true' } })).status).toBe(200);
    expect((await executionsOf(tenant, invoice.id))[0].status).toBe('canceled');
  });
});

describe('GET /v1/analytics/dunning/overview', () => {
  it.each([['?start_date=2026-13-01'], ['?end_date=yesterday'], ['?start_date=2026-05-01&end_date=2026-04-01']])('refuses %s with 400', async (query) => {
    const tenant = await t.registerTenant();
    expect((await tenant.api('GET', `/v1/analytics/dunning/overview${query}`)).status).toBe(400);
  });
});

describe('which invoices a campaign dunns', () => {
  it('leaves overdue invoices alone when the default campaign dunns failed charges only', async () => {
    const { tenant, customer } = await tenantWithCampaign([{ delay_hours: 0, channel: 'in_app' }], { trigger_event: 'payment_failed' });
    const invoice = await overdueInvoice(tenant, customer.id, 1);
    await advance(2);
    expect(await executionsOf(tenant, invoice.id)).toEqual([]);
  });
});

describe('dunning a failed automatic charge', () => {
  it('retries on the default card and recovers when the second retry succeeds on the card the customer added', async () => {
    const tenant = await t.registerTenant();
    const customer = (await ok(tenant, 'POST', '/v1/customers', { email: 'card-holder@dunning.test', name: 'Card Holder' })).data;
    await ok(tenant, 'POST', `/v1/customers/${customer.id}/payment-methods`, { token: 'tok_chargeDeclinedInsufficientFunds' });
    const plan = (await ok(tenant, 'POST', '/v1/plans', { name: 'Auto', code: 'auto', interval_unit: 'month', amount: 100000, currency: 'INR' })).data;
    const subscription = (
      await ok(tenant, 'POST', '/v1/subscriptions', { customer_id: customer.id, plan_id: plan.id, collection_method: 'charge_automatically' })
    ).data;
    await advance(0.01); // the charge job runs and fails: invoice.payment_failed starts dunning
    const invoice = (await ok(tenant, 'GET', `/v1/invoices?subscription_id=${subscription.id}`)).data[0];
    expect(invoice.status).toBe('open');
    let [execution] = await executionsOf(tenant, invoice.id);
    expect(execution).toMatchObject({ trigger_event: 'payment_failed', status: 'active' });

    await advance(25); // first retry (24 h): the same card fails again
    execution = (await executionsOf(tenant, invoice.id))[0];
    expect(execution.actions.map((a: { channel: string }) => a.channel)).toEqual(['email', 'retry_payment']);
    expect((await ok(tenant, 'GET', `/v1/invoices/${invoice.id}`)).data.status).toBe('open');

    await ok(tenant, 'POST', `/v1/customers/${customer.id}/payment-methods`, { token: 'tok_visa', set_default: true });
    await advance(48); // the 72 h e-mail
    // The second retry is due from 120 h, in the slot Thompson sampling drew once the first retry's
    // failure was learned (decision 0310): up to a day later. It charges the new card.
    const due = Date.parse((await executionsOf(tenant, invoice.id))[0].next_step_at);
    expect(due).toBeGreaterThanOrEqual(Date.parse(execution.started_at) + 120 * HOUR);
    await advance((due - t.clock.now().getTime()) / HOUR + 0.01);
    const paid = (await ok(tenant, 'GET', `/v1/invoices/${invoice.id}`)).data;
    expect(paid.status).toBe('paid');
    execution = (await executionsOf(tenant, invoice.id))[0];
    expect(execution.status).toBe('recovered');
    expect(execution.actions.map((a: { channel: string }) => a.channel)).toEqual(['email', 'retry_payment', 'email', 'retry_payment']);
    const attempts = (await ok(tenant, 'GET', `/v1/invoices/${invoice.id}/payment-attempts`)).data;
    expect(attempts.map((a: { status: string }) => a.status).sort()).toEqual(['failed', 'failed', 'succeeded']);
  });
});
