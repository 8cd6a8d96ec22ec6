import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMailSink, type MailSink, type ReceivedMail } from '../../../test/support/mail-sink.js';
import { startTestKosh, type Tenant, type TestKosh } from '../../../test/support/harness.js';
import { startTwilioServer, type TwilioServer } from '../../../test/support/twilio-server.js';
import { startMsg91Server, type Msg91Server } from '../../../test/support/msg91-server.js';
import { createCustomer, createInvoice, gstinFor } from '../../../test/support/billing.js';
import { scanEndingTrials } from '../../flows/notifications/notify-customers.js';
import { TEMPLATE_NAMES, msg91Provider, twilioProvider } from './index.js';

/** The tenants are registered for GST, so their invoices carry 18 % (₹100.00 → INR 118.00). */
const GSTIN = gstinFor('29');

let sink: MailSink;
let twilio: TwilioServer;
let msg91: Msg91Server;
let t: TestKosh;

const HOUR = 3_600_000;

type Msg91Connection = { provider: 'msg91'; sender?: string; credentials: { auth_key: string; template_id: string } };

/** The body of a successful answer (a status of 300 or more throws). */
async function ok<B>(request: Promise<{ status: number; text: string; body: B }>): Promise<B> {
  const res = await request;
  if (res.status >= 300) throw new Error(`${res.status} ${res.text}`);
  return res.body;
}

async function drain() {
  await t.kosh.worker.drain();
  await t.kosh.worker.drain();
}

/** Mails to `to` that arrived since `from` (an index into the sink). */
const mailsTo = (to: string, from = 0): ReceivedMail[] => sink.messages.slice(from).filter((m) => m.envelope.to.includes(to));

beforeAll(async () => {
  sink = await startMailSink();
  twilio = await startTwilioServer();
  msg91 = await startMsg91Server();
  t = await startTestKosh({
    env: {
      SMTP_URL: sink.url,
      MAIL_FROM: 'Kosh Billing <billing@kosh.test>',
      KOSH_TWILIO_API_BASE: twilio.url,
      KOSH_MSG91_API_BASE: msg91.url,
      KOSH_PUBLIC_URL: 'http://127.0.0.1:9',
    },
  });
  t.clock.set(new Date('2026-04-01T09:00:00Z'));
});

afterAll(async () => {
  await t?.close();
  await sink?.close();
  await twilio?.close();
  await msg91?.close();
});

describe('e-mail templates', () => {
  it('lists every default, overrides one, refuses a template that does not compile with its line, and resets', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN });
    const list = await ok(tenant.http.GET('/v1/email-templates'));
    expect(list.data.map((x: { name: string }) => x.name)).toEqual([...TEMPLATE_NAMES]);
    for (const template of list.data) {
      expect(template.customized).toBe(false);
      expect(template.html).toContain('{{tenant.name}}');
      expect(template.text).toContain('{{tenant.name}}');
    }

    const put = await ok(
      tenant.http.PUT('/v1/email-templates/{name}', {
        path: { name: 'invoice_finalized' },
        body: { subject: 'Bill {{invoice.number}}', html: '<p>Hi {{customer.name}}</p>' },
      }),
    );
    expect(put.data).toMatchObject({ name: 'invoice_finalized', subject: 'Bill {{invoice.number}}', text: null, customized: true });
    expect((await ok(tenant.http.GET('/v1/email-templates/{name}', { path: { name: 'invoice_finalized' } }))).data.customized).toBe(true);

    const broken = await tenant.api('PUT', '/v1/email-templates/payment_receipt', { subject: 'ok', html: '<p>\n{{#if customer.name}}\n<b>open block</b>\n' });
    expect(broken.status).toBe(400);
    expect(broken.body.error.details[0].field).toBe('html');
    expect(broken.body.error.details[0].message).toMatch(/line \d+/);
    expect(broken.body.error.request_id).toBeTruthy();
    const helper = await tenant.api('PUT', '/v1/email-templates/payment_receipt', {
      subject: '{{lookup customer "name"}} {{unknownHelper x}}',
      html: '<p></p>',
    });
    expect(helper.status).toBe(400);
    expect((await tenant.api('PUT', '/v1/email-templates/nope', { subject: 'a', html: 'b' })).status).toBe(400);
    expect((await tenant.api('PUT', '/v1/email-templates/payment_receipt', { subject: '', html: 'b' })).status).toBe(400);

    const reset = await ok(tenant.http.DELETE('/v1/email-templates/{name}', { path: { name: 'invoice_finalized' } }));
    expect(reset.data.customized).toBe(false);
    expect(reset.data.subject).toBe('Invoice {{invoice.number}} from {{tenant.name}}');
  });

  it('previews with sample data or a real invoice, escapes HTML, and reports missing variables', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'Chai & Co <Ltd>' });
    const sample = (await ok(tenant.http.POST('/v1/email-templates/{name}/preview', { path: { name: 'payment_failed' }, body: {} }))).data;
    expect(sample.data_source).toBe('sample');
    expect(sample.subject).toBe('Payment failed for invoice INV-000042 from Chai & Co <Ltd>');
    expect(sample.html).toContain('Chai &amp; Co &lt;Ltd&gt;');
    expect(sample.text).toContain('Chai & Co <Ltd>');
    expect(sample.missing_variables).toEqual([]);

    const customer = await createCustomer(tenant, { name: 'Asha Rao' });
    const invoice = await createInvoice(tenant, customer, [10_000]);
    const real = (
      await ok(
        tenant.http.POST('/v1/email-templates/{name}/preview', {
          path: { name: 'invoice_finalized' },
          body: {
            invoice_id: invoice.id,
            html: '<p>{{customer.name}} owes {{invoice.amount_due}} {{customer.nickname}}</p>',
          },
        }),
      )
    ).data;
    expect(real.data_source).toBe('invoice');
    expect(real.subject).toBe(`Invoice ${invoice.number} from Chai & Co <Ltd>`);
    expect(real.html).toBe('<p>Asha Rao owes INR 118.00 </p>');
    expect(real.text).toBe('Asha Rao owes INR 118.00');
    expect(real.missing_variables).toEqual(['customer.nickname']);
    // The saved template was not changed by the preview.
    expect((await ok(tenant.http.GET('/v1/email-templates/{name}', { path: { name: 'invoice_finalized' } }))).data.customized).toBe(false);

    expect(
      (
        await tenant.http.POST('/v1/email-templates/{name}/preview', {
          path: { name: 'invoice_finalized' },
          body: { invoice_id: '0195f1a2-0000-7000-8000-000000000000' },
        })
      ).status,
    ).toBe(404);
    const bad = await tenant.api('POST', '/v1/email-templates/invoice_finalized/preview', { subject: '{{#each}}' });
    expect(bad.status).toBe(400);
  });
});

describe('e-mail templates in the sandbox', () => {
  const forged = '{{log "ok\n{\\"level\\":60,\\"msg\\":\\"forged\\"}" level="error"}}';

  it('refuses a template that calls log, when saved and when previewed, with 400', async () => {
    const tenant = await t.registerTenant();
    for (const [method, url] of [
      ['PUT', '/v1/email-templates/payment_receipt'],
      ['POST', '/v1/email-templates/payment_receipt/preview'],
    ] as const) {
      const res = await tenant.api(method, url, { subject: 'Receipt', html: `<p>${forged}</p>` });
      expect(res.status, res.text).toBe(400);
      expect(res.body.error).toMatchObject({ reason: 'template_invalid', details: [{ field: 'html' }] });
    }
    expect((await ok(tenant.http.GET('/v1/email-templates/{name}', { path: { name: 'payment_receipt' } }))).data.customized).toBe(false);
  });

  it('previews prototype properties as empty values', async () => {
    const tenant = await t.registerTenant();
    const res = await ok(
      tenant.http.POST('/v1/email-templates/{name}/preview', {
        path: { name: 'payment_receipt' },
        body: {
          subject: 'R{{constructor.name}}{{customer.__proto__}}',
          html: '<p>[{{customer.constructor}}]</p>',
        },
      }),
    );
    expect(res.data).toMatchObject({ subject: 'R', html: '<p>[]</p>' });
  });
});

describe('customer notifications', () => {
  it('are off until the tenant turns them on', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN });
    expect((await ok(tenant.http.GET('/v1/notification-settings'))).data).toEqual({
      invoice_finalized: false,
      payment_receipt: false,
      payment_failed: false,
      trial_ending: false,
      credit_note_issued: false,
    });
    const email = 'quiet@example.in';
    const customer = await createCustomer(tenant, { email });
    const before = sink.messages.length;
    await createInvoice(tenant, customer, [5_000]);
    await drain();
    expect(mailsTo(email, before)).toHaveLength(0);
    expect((await tenant.api('PATCH', '/v1/notification-settings', { invoice_finalized: 'yes' })).status).toBe(400);
    expect((await tenant.api('PATCH', '/v1/notification-settings', { unknown: true })).status).toBe(400);
  });

  it('e-mails the finalized invoice with its PDF, once, even when the job runs again', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'Kaveri Cloud' });
    await ok(tenant.http.PATCH('/v1/notification-settings', { body: { invoice_finalized: true } }));
    const email = 'finalized@example.in';
    const customer = await createCustomer(tenant, { email, name: 'Ravi Kumar' });
    const before = sink.messages.length;
    const invoice = await createInvoice(tenant, customer, [10_000]);
    await drain();
    const mails = mailsTo(email, before);
    expect(mails).toHaveLength(1);
    const mail = mails[0]!;
    expect(mail.subject).toBe(`Invoice ${invoice.number} from Kaveri Cloud`);
    expect(mail.headers.from).toBe('Kaveri Cloud <billing@kosh.test>');
    expect(mail.text).toContain('Dear Ravi Kumar');
    expect(mail.text).toContain('INR 118.00');
    expect(mail.html).toContain(`<strong>${invoice.number}</strong>`);
    expect(mail.attachments).toHaveLength(1);
    expect(mail.attachments[0]!.contentType).toBe('application/pdf');
    expect(mail.attachments[0]!.content.subarray(0, 5).toString()).toBe('%PDF-');

    // The notification job runs again (a worker died before recording it done): no second mail.
    const db = t.kosh.deps.db;
    await db
      .updateTable('jobs')
      .set({ state: 'pending', run_at: t.clock.now() })
      .where('kind', '=', 'notifications.send')
      .where('tenant_id', '=', tenant.tenantId)
      .execute();
    await drain();
    expect(mailsTo(email, before)).toHaveLength(1);
    const log = await db.selectFrom('notifications').selectAll().where('tenant_id', '=', tenant.tenantId).execute();
    expect(log).toMatchObject([{ notification: 'invoice_finalized', status: 'queued', recipient: email, channel: 'email' }]);
  });

  it("renders the tenant's own template", async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'Override Ltd' });
    await ok(tenant.http.PATCH('/v1/notification-settings', { body: { invoice_finalized: true } }));
    await ok(
      tenant.http.PUT('/v1/email-templates/{name}', {
        path: { name: 'invoice_finalized' },
        body: {
          subject: 'Your bill {{invoice.number}}',
          html: '<h1>{{tenant.name}}</h1><p>Pay {{invoice.amount_due}} please, {{customer.name}}.</p>',
        },
      }),
    );
    const email = 'override@example.in';
    const customer = await createCustomer(tenant, { email, name: '<Meera>' });
    const before = sink.messages.length;
    const invoice = await createInvoice(tenant, customer, [1_000]);
    await drain();
    const [mail] = mailsTo(email, before);
    expect(mail!.subject).toBe(`Your bill ${invoice.number}`);
    expect(mail!.html).toContain('<p>Pay INR 11.80 please, &lt;Meera&gt;.</p>');
    // No text template given: the text part is made from the HTML.
    expect(mail!.text).toContain('Pay INR 11.80 please, <Meera>.');
  });

  it('sends a receipt for a payment and a notice for an issued credit note', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'Receipts Inc' });
    await ok(tenant.http.PATCH('/v1/notification-settings', { body: { payment_receipt: true, credit_note_issued: true } }));
    const email = 'receipt@example.in';
    const customer = await createCustomer(tenant, { email });
    const invoice = await createInvoice(tenant, customer, [10_000]);
    const before = sink.messages.length;
    const payment = (
      await ok(
        tenant.http.POST('/v1/payments/offline', { body: { customer_id: customer, invoice_id: invoice.id, amount: 5_000, payment_type: 'bank_transfer' } }),
      )
    ).data;
    const note = (
      await ok(tenant.http.POST('/v1/credit-notes', { body: { customer_id: customer, invoice_id: invoice.id, amount: 1_180, reason: 'service credit' } }))
    ).data;
    await drain();
    const mails = mailsTo(email, before);
    expect(mails.map((m) => m.subject).sort()).toEqual([`Credit note ${note.number} from Receipts Inc`, 'Receipt: INR 50.00 received by Receipts Inc']);
    const receipt = mails.find((m) => m.subject.startsWith('Receipt'))!;
    expect(receipt.text).toContain(payment.id);
    expect(receipt.text).toContain(`for invoice ${invoice.number}`);
    const credit = mails.find((m) => m.subject.startsWith('Credit note'))!;
    expect(credit.text).toContain(`against invoice ${invoice.number}`);
    expect(credit.text).toContain('Reason: service credit');
  });

  it('tells the customer a charge failed, with a hosted checkout link that pays the invoice', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'Declines Pvt Ltd' });
    await ok(tenant.http.PATCH('/v1/notification-settings', { body: { payment_failed: true } }));
    // Only this notice: the default dunning campaign's first e-mail is not the subject here.
    const campaigns = (await ok(tenant.http.GET('/v1/dunning-campaigns'))).data;
    await ok(tenant.http.PATCH('/v1/dunning-campaigns/{id}', { path: { id: campaigns[0]!.id }, body: { is_active: false } }));
    const email = 'declined@example.in';
    const customer = await createCustomer(tenant, { email });
    await ok(tenant.http.POST('/v1/customers/{id}/payment-methods', { path: { id: customer }, body: { token: 'tok_chargeDeclined' } }));
    const before = sink.messages.length;
    const invoice = await createInvoice(tenant, customer, [20_000], { collection_method: 'charge_automatically' });
    await drain();
    const mails = mailsTo(email, before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe(`Payment failed for invoice ${invoice.number} from Declines Pvt Ltd`);
    const link = /http:\/\/127\.0\.0\.1:9(\/checkout\/[^\s"<)]+)/.exec(mails[0]!.text!);
    expect(link, mails[0]!.text).not.toBeNull();
    expect(mails[0]!.html).toContain('Pay invoice');
    const page = await t.call({ method: 'GET', url: link![1]!.replace(/&amp;/g, '&') });
    expect(page.status).toBe(200);
    expect(page.text).toContain(invoice.number);
  });

  it('warns of a trial ending in 3 days, once per trial end', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'Trials Co' });
    await ok(tenant.http.PATCH('/v1/notification-settings', { body: { trial_ending: true } }));
    const email = 'trial@example.in';
    const customer = await createCustomer(tenant, { email, name: 'Tara' });
    const plan = (await ok(tenant.http.POST('/v1/plans', { body: { name: 'Growth', interval: 'month', prices: [{ currency: 'INR', amount: 99_900 }] } }))).data;
    const subscription = (await ok(tenant.http.POST('/v1/subscriptions', { body: { customer_id: customer, plan_id: plan.id, trial_days: 10 } }))).data;
    const env = { db: t.kosh.deps.db, config: t.config, secrets: t.kosh.deps.secrets, clock: t.clock, scope: t.kosh.deps.scope };
    const before = sink.messages.length;
    const start = t.clock.now();
    expect(await scanEndingTrials(env)).toBe(0);
    t.clock.set(new Date(start.getTime() + 7 * 24 * HOUR + HOUR));
    expect(await scanEndingTrials(env)).toBe(1);
    expect(await scanEndingTrials(env)).toBe(0);
    await drain();
    const mails = mailsTo(email, before);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.subject).toBe(`Your Growth trial with Trials Co ends on ${subscription.trial_end!.slice(0, 10)}`);
    t.clock.set(start);
  });
});

describe('SMS for dunning', () => {
  async function smsTenant(
    connect: { token?: string; body?: Msg91Connection } | null,
    text = '{{tenant.name}}: pay {{invoice.number}} ({{invoice.amount_due}})',
  ) {
    const tenant = await t.registerTenant({ gstin: GSTIN, name: 'SMS Tenant' });
    if (connect?.body) {
      const created = await tenant.http.POST('/v1/sms-connections', { body: connect.body });
      expect(created.status, created.text).toBe(201);
    } else if (connect) {
      const created = await tenant.http.POST('/v1/sms-connections', {
        body: {
          provider: 'twilio',
          sender: '+15005550006',
          credentials: { account_sid: twilio.accountSid, auth_token: connect.token ?? twilio.authToken },
        },
      });
      expect(created.status, created.text).toBe(201);
      expect(created.text).not.toContain(twilio.authToken);
      expect(created.body.data.account_sid).toBe(`…${twilio.accountSid.slice(-4)}`);
    }
    const campaign = (await ok(tenant.http.POST('/v1/dunning-campaigns', { body: { name: 'SMS', is_default: true, trigger_event: 'invoice_overdue' } }))).data;
    await ok(
      tenant.http.POST('/v1/dunning-campaigns/{id}/steps', {
        path: { id: campaign.id },
        body: {
          delay_hours: 0,
          channel: 'sms',
          body: text,
        },
      }),
    );
    const customer = await createCustomer(tenant, { phone: '+919812345678' });
    const due = new Date(t.clock.now().getTime() - HOUR).toISOString();
    const invoice = await createInvoice(tenant, customer, [10_000], { due_date: new Date(t.clock.now().getTime() + HOUR).toISOString() });
    void due;
    t.clock.set(new Date(t.clock.now().getTime() + 2 * HOUR));
    await drain();
    // The overdue scan runs every 15 minutes: give it its slot.
    t.clock.set(new Date(t.clock.now().getTime() + 16 * 60_000));
    await drain();
    const executions = (await ok(tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoice.id } }))).data;
    return { tenant, invoice, action: executions[0]?.actions[0] };
  }

  it('sends through Twilio with Basic auth and records the message id; the token is stored sealed', async () => {
    const before = twilio.messages.length;
    const { tenant, invoice, action } = await smsTenant({});
    expect(twilio.messages.slice(before)).toEqual([
      expect.objectContaining({ to: '+919812345678', from: '+15005550006', body: `SMS Tenant: pay ${invoice.number} (INR 118.00)` }),
    ]);
    expect(action).toMatchObject({ channel: 'sms', outcome: 'succeeded' });
    expect(action!.detail).toMatch(/^SMS SM[0-9a-f]{32} accepted by twilio for \+919812345678/);
    const row = await t.kosh.deps.db.selectFrom('sms_connections').selectAll().where('tenant_id', '=', tenant.tenantId).executeTakeFirstOrThrow();
    expect(row.credentials_sealed).not.toContain(twilio.authToken);
    expect((await ok(tenant.http.GET('/v1/sms-connections'))).data).toHaveLength(1);
  });

  it("records the provider's refusal as a failed action", async () => {
    const { action } = await smsTenant({ token: 'wrong-token-0123456789' });
    expect(action).toMatchObject({ channel: 'sms', outcome: 'failed' });
    expect(action!.detail).toContain('HTTP 401, code 20003');
  });

  const msg91Connection = (authKey = msg91.authKey): Msg91Connection => ({
    provider: 'msg91',
    sender: 'KOSHBL',
    credentials: { auth_key: authKey, template_id: msg91.templateId },
  });
  const actionOf = async (tenant: Tenant, invoiceId: string) =>
    (await ok(tenant.http.GET('/v1/dunning-executions', { query: { invoice_id: invoiceId } }))).data[0]!.actions[0] as { outcome: string; detail: string };

  it('sends through MSG91 Flow with the authkey header and a JSON body; the key is stored sealed and never returned', async () => {
    const before = msg91.requests.length;
    const { tenant, invoice, action } = await smsTenant({ body: msg91Connection() });
    const requests = msg91.requests.slice(before);
    expect(requests).toHaveLength(1);
    expect(requests[0]!.path).toBe('/api/v5/flow/');
    expect(requests[0]!.headers.authkey).toBe(msg91.authKey);
    expect(requests[0]!.body).toEqual({
      template_id: msg91.templateId,
      sender: 'KOSHBL',
      short_url: '0',
      recipients: [{ mobiles: '919812345678', content: `SMS Tenant: pay ${invoice.number} (INR 118.00)` }],
    });
    const message = msg91.messages.at(-1)!;
    expect(action).toMatchObject({
      channel: 'sms',
      outcome: 'succeeded',
      detail: `SMS ${message.request_id} accepted by msg91 for +919812345678 (accepted) with a pay link`,
    });
    const listed = await tenant.http.GET('/v1/sms-connections');
    expect(listed.body.data).toEqual([expect.objectContaining({ provider: 'msg91', sender: 'KOSHBL', account_sid: null, template_id: msg91.templateId })]);
    expect(listed.text).not.toContain(msg91.authKey);
    const row = await t.kosh.deps.db.selectFrom('sms_connections').selectAll().where('tenant_id', '=', tenant.tenantId).executeTakeFirstOrThrow();
    expect(row.credentials_sealed).not.toContain(msg91.authKey);
  });

  it("records MSG91's refusal (4xx) as failed with its message, without retrying", async () => {
    const before = msg91.requests.length;
    const { tenant, invoice, action } = await smsTenant({ body: msg91Connection('0123456789abcdef-wrong') });
    expect(action).toMatchObject({ outcome: 'failed', detail: 'MSG91 refused (HTTP 401, code 401): Authentication failure' });
    t.clock.set(new Date(t.clock.now().getTime() + HOUR));
    await drain();
    expect(msg91.requests.length - before).toBe(1);
    expect((await actionOf(tenant, invoice.id)).outcome).toBe('failed');
  });

  it('retries a transient failure (5xx) with backoff until the provider accepts', async () => {
    msg91.fault({ method: 'POST', path: '/api/v5/flow', kind: 'status', status: 503, times: 2 });
    const before = msg91.requests.length;
    const { tenant, invoice, action } = await smsTenant({ body: msg91Connection() });
    expect(action!.outcome).toBe('succeeded');
    // The first attempt failed while the scan's slot was given (smsTenant moves the clock on): at least one retry is pending.
    expect(action!.detail).toMatch(
      /^SMS to \+919812345678 not yet accepted \(attempt [12] of 5, retrying\): MSG91 refused \(HTTP 503\): Internal Server Error$/,
    );
    for (const seconds of [1, 2, 4]) {
      t.clock.set(new Date(t.clock.now().getTime() + seconds * 1_000));
      await drain();
    }
    expect(msg91.requests.length - before).toBe(3);
    expect((await actionOf(tenant, invoice.id)).detail).toMatch(/^SMS [0-9a-f]{24} accepted by msg91 for \+919812345678/);
  });

  it('carries a pay link that opens the checkout of the invoice; a retried message keeps its one link', async () => {
    twilio.fault({ method: 'POST', path: /Messages\.json$/, kind: 'status', status: 503, times: 1 });
    const before = twilio.messages.length;
    const attemptsBefore = twilio.requests.length;
    const { tenant, invoice } = await smsTenant({}, 'Pay {{invoice.number}}: {{pay_url}}');
    for (const seconds of [1, 2]) {
      t.clock.set(new Date(t.clock.now().getTime() + seconds * 1_000));
      await drain();
    }
    expect(twilio.requests.length - attemptsBefore).toBe(2);
    const sent = twilio.messages.slice(before);
    expect(sent).toHaveLength(1);
    const link = /^Pay [^:]+: http:\/\/127\.0\.0\.1:9(\/checkout\/\S+)$/.exec(sent[0]!.body)?.[1];
    expect(link, sent[0]!.body).toBeDefined();
    const page = await t.call({ method: 'GET', url: link! });
    expect(page.status).toBe(200);
    expect(page.text).toContain(invoice.number);
    const sessions = await t.kosh.deps.db
      .selectFrom('checkout_sessions')
      .select('id')
      .where('tenant_id', '=', tenant.tenantId)
      .where('invoice_id', '=', invoice.id)
      .execute();
    expect(sessions).toHaveLength(1);
    expect((await actionOf(tenant, invoice.id)).detail).toMatch(/^SMS SM[0-9a-f]{32} accepted by twilio for \+919812345678 \(queued\) with a pay link$/);
  });

  it('sends nothing on a retry once the invoice is paid', async () => {
    // Refused until the payment below; smsTenant's clock moves let the job try once or twice.
    twilio.fault({ method: 'POST', path: /Messages\.json$/, kind: 'status', status: 503, times: 3 });
    const before = twilio.messages.length;
    const { tenant, invoice } = await smsTenant({}, 'Pay {{invoice.number}}: {{pay_url}}');
    expect((await actionOf(tenant, invoice.id)).detail).toMatch(/not yet accepted .*retrying/);
    await ok(
      tenant.http.POST('/v1/payments/offline', {
        body: {
          customer_id: invoice.customer_id,
          invoice_id: invoice.id,
          payment_type: 'bank_transfer',
          amount: invoice.amount_due,
        },
      }),
    );
    const attemptsAtPayment = twilio.requests.length;
    for (const seconds of [1, 2, 4, 8]) {
      t.clock.set(new Date(t.clock.now().getTime() + seconds * 1_000));
      await drain();
    }
    twilio.clearFaults();
    expect(twilio.requests.length).toBe(attemptsAtPayment);
    expect(twilio.messages.slice(before)).toEqual([]);
    expect(await actionOf(tenant, invoice.id)).toMatchObject({ outcome: 'skipped', detail: 'the invoice is no longer owed; no SMS sent' });
  });

  it('records a failure that stays transient as failed after the last attempt (Twilio 500)', async () => {
    twilio.fault({ method: 'POST', path: /Messages\.json$/, kind: 'status', status: 500, times: 5 });
    const before = twilio.requests.length;
    const { tenant, invoice } = await smsTenant({});
    for (const seconds of [1, 2, 4, 8]) {
      t.clock.set(new Date(t.clock.now().getTime() + seconds * 1_000));
      await drain();
    }
    expect(twilio.requests.length - before).toBe(5);
    expect(await actionOf(tenant, invoice.id)).toMatchObject({ outcome: 'failed', detail: 'Twilio refused (HTTP 500, code 20500): Internal Server Error' });
  });

  it('classes an unreachable provider as transient and a refusal as final', async () => {
    const message = { to: '+919812345678', body: 'hello' };
    const unreachable = await msg91Provider.send(
      { baseUrl: 'http://127.0.0.1:1', credentials: { auth_key: 'k'.repeat(16), template_id: 'abcdefgh' }, sender: '' },
      message,
    );
    expect(unreachable).toMatchObject({ ok: false, retryable: true });
    expect(!unreachable.ok && unreachable.error).toMatch(/^MSG91 unreachable: /);
    const refused = await msg91Provider.send({ baseUrl: msg91.url, credentials: { auth_key: msg91.authKey, template_id: 'unknown0' }, sender: '' }, message);
    expect(refused).toEqual({ ok: false, retryable: false, error: 'MSG91 refused (HTTP 400, code 400): Invalid template id' });
    const twilioDown = await twilioProvider.send(
      { baseUrl: 'http://127.0.0.1:1', credentials: { account_sid: twilio.accountSid, auth_token: twilio.authToken }, sender: '+15005550006' },
      message,
    );
    expect(twilioDown).toMatchObject({ ok: false, retryable: true });
  });

  it('skips the step without a provider', async () => {
    const { action } = await smsTenant(null);
    expect(action).toMatchObject({ channel: 'sms', outcome: 'skipped', detail: 'no SMS provider is configured' });
  });

  it('refuses bad connection input and an unknown connection', async () => {
    const tenant = await t.registerTenant({ gstin: GSTIN });
    const bad = await tenant.api('POST', '/v1/sms-connections', { provider: 'twilio', sender: '12345', credentials: { account_sid: 'nope', auth_token: 'x' } });
    expect(bad.status).toBe(400);
    expect((await tenant.http.DELETE('/v1/sms-connections/{id}', { path: { id: '0195f1a2-0000-7000-8000-000000000000' } })).status).toBe(404);
  });
});
