/** Detail pages with every action the API offers to the signed-in role (the server enforces the same rules). */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { CustomerName, forget, InvoiceNumber, Picker, PlanName, priceText, SubscriptionAmount } from '../pickers.tsx';
import { AddressFields, addressOf, formatAddress, GstinField } from './address.tsx';
import { date, dateTime, money, toMinor } from '../format.ts';
import { PlanEntitlements } from './billing.tsx';
import { CustomerCredit, RefundForm } from './money.tsx';
import { CustomerStatement } from './advances.tsx';
import { CURRENCY_OPTIONS } from './lists.tsx';
import { CustomerPaymentMethods, InvoiceCollect } from './collect.tsx';
import { CustomerUsage, loadMetrics, MeteredPriceFields, meteredPriceOf } from './usage.tsx';
import {
  ActionButton,
  ActionForm,
  Badge,
  ErrorNote,
  Field,
  Fields,
  Link,
  Loading,
  PagedTable,
  PageTitle,
  str,
  Table,
  useLoad,
  useMe,
  type Column,
} from '../ui.tsx';

function amountOf(form: FormData, name: string, currency: string, required = true): number | undefined {
  const text = str(form, name);
  if (text === undefined) {
    if (required) throw new Error(`${name.replace(/_/g, ' ')} is required`);
    return undefined;
  }
  const minor = toMinor(text, currency);
  if (minor === null) throw new Error(`${name.replace(/_/g, ' ')} is not an amount (e.g. 1,23,456.00)`);
  return minor;
}

const invoiceColumns: Column<Schema<'Invoice'>>[] = [
  { header: 'Number', cell: (i) => <Link to={`/invoices/${i.id}`}>{i.number ?? `Draft of ${date(i.created_at)}`}</Link> },
  { header: 'Status', cell: (i) => <Badge>{i.status}</Badge> },
  { header: 'Total', cell: (i) => money(i.total, i.currency), numeric: true },
  { header: 'Due', cell: (i) => money(i.amount_due, i.currency), numeric: true },
  { header: 'Issued', cell: (i) => date(i.issued_at) },
];

// ---------------------------------------------------------------- invoice

export function InvoiceDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/invoices/{id}', { params: { path: { id } } })).data, [id]);
  const [note, setNote] = useState<string | null>(null);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const inv = data;
  const money$ = (n: number) => money(n, inv.currency);
  const act = (label: string, run: () => Promise<unknown>, confirm?: string, danger?: boolean) => (
    <ActionButton
      label={label}
      confirm={confirm}
      danger={danger}
      run={async () => {
        await run();
        setNote(`${label}: done`);
        reload();
      }}
    />
  );
  const path = { params: { path: { id } } };
  return (
    <>
      <PageTitle
        actions={
          <>
            {inv.status !== 'draft' ? (
              <a className="button" href={`/v1/invoices/${id}/pdf`} target="_blank" rel="noopener">
                PDF
              </a>
            ) : null}
            {inv.status === 'draft' && can(me, 'money') ? act('Finalize', async () => unwrap(await kosh.POST('/v1/invoices/{id}/finalize', path))) : null}
            {inv.status === 'open' && can(me, 'send') ? act('Send by e-mail', async () => unwrap(await kosh.POST('/v1/invoices/{id}/send', path))) : null}
            {(inv.status === 'open' || inv.status === 'draft') && can(me, 'money')
              ? act(
                  'Void',
                  async () => unwrap(await kosh.POST('/v1/invoices/{id}/void', { ...path, body: {} })),
                  'Void this invoice? This cannot be undone.',
                  true,
                )
              : null}
            {inv.status === 'open' && can(me, 'money')
              ? act(
                  'Mark uncollectible',
                  async () => unwrap(await kosh.POST('/v1/invoices/{id}/mark-uncollectible', path)),
                  'Mark this invoice uncollectible?',
                  true,
                )
              : null}
          </>
        }
      >
        {`Invoice ${inv.number ?? '(draft)'}`}
      </PageTitle>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <Fields
        items={[
          ['Status', <Badge key="s">{inv.status}</Badge>],
          [
            'Customer',
            <Link key="c" to={`/customers/${inv.customer_id}`}>
              {inv.customer_details?.name ?? inv.customer_details?.email ?? inv.customer_id}
            </Link>,
          ],
          ['Subscription', inv.subscription_id ? <Link to={`/subscriptions/${inv.subscription_id}`}>View the subscription</Link> : '—'],
          ['Subtotal', money$(inv.subtotal)],
          ['GST', `${money$(inv.tax_amount)} (${inv.tax_type})`],
          ['Total', money$(inv.total)],
          ['Paid', money$(inv.amount_paid)],
          ['TDS', money$(inv.amount_tds)],
          ['Credited', money$(inv.amount_credited)],
          ['Amount due', <strong key="d">{money$(inv.amount_due)}</strong>],
          ['Issued', dateTime(inv.issued_at)],
          ['Due date', date(inv.due_date)],
          ['Place of supply', inv.place_of_supply ?? '—'],
        ]}
      />
      <section className="card">
        <h2>Lines</h2>
        <Table
          caption="Invoice lines"
          rowKey={(_l, i) => String(i)}
          columns={[
            { header: 'Description', cell: (l: Schema<'Invoice'>['lines'][number]) => l.description },
            { header: 'HSN/SAC', cell: (l) => l.hsn_code },
            { header: 'Quantity', cell: (l) => l.quantity, numeric: true },
            { header: 'Unit price', cell: (l) => money$(l.unit_amount), numeric: true },
            { header: 'Amount', cell: (l) => money$(l.amount), numeric: true },
            { header: 'GST', cell: (l) => `${money$(l.tax_amount)} (${(l.tax_rate_bp / 100).toFixed(2).replace(/\.00$/, '')}%)`, numeric: true },
          ]}
          rows={inv.lines}
        />
      </section>
      {(inv.status === 'open' || inv.status === 'paid') && can(me, 'money') ? (
        <div className="grid2">
          {inv.status === 'open' ? (
            <ActionForm
              title="Record a payment"
              submit="Record payment"
              onSubmit={async (form, key) => {
                const amount = amountOf(form, 'amount', inv.currency)!;
                const tds = amountOf(form, 'tds_amount', inv.currency, false) ?? 0;
                unwrap(
                  await kosh.POST('/v1/payments/offline', {
                    body: {
                      customer_id: inv.customer_id,
                      invoice_id: inv.id,
                      payment_type: (str(form, 'payment_type') ?? 'bank_transfer') as 'bank_transfer',
                      amount,
                      tds_amount: tds,
                      currency: inv.currency,
                      reference_number: str(form, 'reference_number'),
                    },
                    ...idem(key),
                  }),
                );
                // The page keeps the note: the form goes away once the invoice is paid.
                setNote(`Payment of ${money$(amount)} recorded${tds ? ` with ${money$(tds)} TDS` : ''}.`);
                reload();
              }}
            >
              <Field label="Amount received" name="amount" required inputMode="decimal" hint={`Amount due ${money$(inv.amount_due)}`} />
              <Field label="TDS deducted by the customer" name="tds_amount" inputMode="decimal" hint="Tax deducted at source (Form 16A)" />
              <Field
                label="Method"
                name="payment_type"
                options={[
                  ['bank_transfer', 'Bank transfer'],
                  ['cheque', 'Cheque'],
                  ['cash', 'Cash'],
                ]}
              />
              <Field label="Reference (UTR, cheque number)" name="reference_number" />
            </ActionForm>
          ) : null}
          <ActionForm
            title="Issue a credit note"
            submit="Issue credit note"
            onSubmit={async (form, key) => {
              const amount = amountOf(form, 'credit_amount', inv.currency)!;
              const lineId = str(form, 'invoice_line_id');
              const created = unwrap(
                await kosh.POST('/v1/credit-notes', {
                  body: {
                    customer_id: inv.customer_id,
                    invoice_id: inv.id,
                    amount,
                    ...(lineId ? { lines: [{ invoice_line_id: lineId, amount }] } : {}),
                    reason: str(form, 'reason'),
                  },
                  ...idem(key),
                }),
              );
              setNote(`Credit note ${created.data.number ?? ''} ${created.data.status === 'pending_approval' ? 'is waiting for approval' : 'issued'}.`);
              reload();
            }}
          >
            <Field
              label="Invoice line"
              name="invoice_line_id"
              options={[
                ['', 'The whole invoice (pro rata over its lines)'],
                ...inv.lines.map((l): [string, string] => [l.id, `${l.description} (${l.hsn_code}) — ${money$(l.total)} with GST`]),
              ]}
            />
            <Field label="Credit amount (incl. GST)" name="credit_amount" required inputMode="decimal" hint="At most what is left to credit" />
            <Field label="Reason" name="reason" />
          </ActionForm>
        </div>
      ) : null}
      <InvoiceCollect
        invoice={inv}
        onDone={(text) => {
          setNote(text);
          reload();
        }}
      />
      {inv.amount_paid > 0 && can(me, 'money') ? (
        <InvoiceRefund
          invoice={inv}
          onDone={(text) => {
            setNote(text);
            reload();
          }}
        />
      ) : null}
      <section className="card">
        <h2>Payments</h2>
        <PagedTable
          caption="Payments of this invoice"
          filterKey={`${id}|${inv.amount_paid}`}
          columns={[
            {
              header: 'Payment',
              cell: (p: Schema<'OfflinePayment'>) => <Link to={`/payments/${p.id}`}>{p.reference_number || p.payment_type.replace(/_/g, ' ')}</Link>,
            },
            { header: 'Amount', cell: (p) => money$(p.amount), numeric: true },
            { header: 'TDS', cell: (p) => money$(p.tds_amount), numeric: true },
            { header: 'Recorded', cell: (p) => dateTime(p.recorded_at) },
          ]}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/payments', { params: { query: { invoice_id: id, page, limit } } }))}
        />
      </section>
      <section className="card">
        <h2>Credit notes</h2>
        <PagedTable
          caption="Credit notes of this invoice"
          filterKey={`${id}|${inv.amount_credited}|${note ?? ''}`}
          columns={[
            { header: 'Number', cell: (c: Schema<'CreditNote'>) => <Link to={`/credit-notes/${c.id}`}>{c.number ?? 'pending approval'}</Link> },
            { header: 'Status', cell: (c) => <Badge>{c.status}</Badge> },
            { header: 'Amount', cell: (c) => money$(c.amount), numeric: true },
          ]}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/credit-notes', { params: { query: { invoice_id: id, page, limit } } }))}
        />
      </section>
    </>
  );
}

// ---------------------------------------------------------------- customer

export function CustomerDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/customers/{id}', { params: { path: { id } } })).data, [id]);
  const [portal, setPortal] = useState<string | null>(null);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const c = data;
  return (
    <>
      <PageTitle
        actions={
          can(me, 'portal') ? (
            <ActionButton
              label="Portal link"
              run={async () => {
                const link = unwrap(await kosh.POST('/v1/customers/{id}/portal-sessions', { params: { path: { id } } }));
                setPortal(link.data.url);
              }}
            />
          ) : null
        }
      >
        {c.name ?? c.email}
      </PageTitle>
      {portal ? (
        <p className="ok" role="status">
          Portal link (single use): <a href={portal}>{portal}</a>
        </p>
      ) : null}
      <Fields
        items={[
          ['E-mail', c.email],
          ['Phone', c.phone ?? '—'],
          ['GSTIN', c.gstin ?? '—'],
          ['Billing address', formatAddress(c.billing_address)],
          ['SEZ', c.sez ? 'yes' : 'no'],
          ['External id', c.external_id ?? '—'],
          ['Created', dateTime(c.created_at)],
        ]}
      />
      {can(me, 'customers') ? (
        <details className="create">
          <summary>Edit customer</summary>
          <ActionForm
            submit="Save"
            keep
            onSubmit={async (form, key) => {
              unwrap(
                await kosh.PATCH('/v1/customers/{id}', {
                  params: { path: { id } },
                  body: {
                    email: str(form, 'email'),
                    name: str(form, 'name') ?? null,
                    phone: str(form, 'phone') ?? null,
                    gstin: str(form, 'gstin') ?? null,
                    billing_address: addressOf(form) ?? null,
                  },
                  ...idem(key),
                }),
              );
              forget(id);
              reload();
              return 'Saved.';
            }}
          >
            <Field label="E-mail" name="email" type="email" defaultValue={c.email} required />
            <Field label="Name" name="name" defaultValue={c.name ?? ''} />
            <Field label="Phone" name="phone" type="tel" defaultValue={c.phone ?? ''} />
            <GstinField defaultValue={c.gstin} />
            <AddressFields legend="Billing address" value={c.billing_address} key={c.updated_at} />
          </ActionForm>
        </details>
      ) : null}
      <section className="card">
        <h2>Subscriptions</h2>
        {can(me, 'money') ? (
          <p>
            <Link to={`/subscriptions?customer_id=${id}&new=1`}>New subscription for this customer</Link>
          </p>
        ) : null}
        <PagedTable
          caption="Subscriptions of this customer"
          filterKey={id}
          columns={[
            { header: 'Plan', cell: (s: Schema<'Subscription'>) => <PlanName id={s.plan_id} /> },
            {
              header: 'Status',
              cell: (s) => (
                <Link to={`/subscriptions/${s.id}`}>
                  <Badge>{s.status}</Badge>
                </Link>
              ),
            },
            { header: 'Amount', cell: (s) => <SubscriptionAmount s={s} />, numeric: true },
            { header: 'Period ends', cell: (s) => date(s.current_period_end) },
          ]}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/subscriptions', { params: { query: { customer_id: id, page, limit } } }))}
        />
      </section>
      <CustomerUsage customerId={id} />
      {can(me, 'money') ? <CustomerPaymentMethods customerId={id} /> : null}
      <CustomerCredit customerId={id} />
      <CustomerStatement customerId={id} />
      <section className="card">
        <h2>Invoices</h2>
        {can(me, 'money') ? (
          <p>
            <Link to={`/invoices?customer_id=${id}&new=1`}>New one-off invoice for this customer</Link>
          </p>
        ) : null}
        <PagedTable
          caption="Invoices of this customer"
          filterKey={id}
          columns={invoiceColumns}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/invoices', { params: { query: { customer_id: id, page, limit } } }))}
        />
      </section>
    </>
  );
}

// ---------------------------------------------------------------- subscription

export function SubscriptionDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/subscriptions/{id}', { params: { path: { id } } })).data, [id]);
  const [note, setNote] = useState<string | null>(null);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const s = data;
  const path = { params: { path: { id } } };
  const live = s.status !== 'canceled';
  const money$ = can(me, 'money');
  const done = (what: string) => {
    setNote(what);
    reload();
  };
  return (
    <>
      <PageTitle
        actions={
          money$ ? (
            <>
              {live && s.status !== 'paused' ? (
                <ActionButton label="Pause" run={async () => done(unwrap(await kosh.POST('/v1/subscriptions/{id}/pause', path)) && 'Paused.')} />
              ) : null}
              {s.status === 'paused' ? (
                <ActionButton label="Resume" run={async () => done(unwrap(await kosh.POST('/v1/subscriptions/{id}/resume', path)) && 'Resumed.')} />
              ) : null}
              {live && !s.cancel_at_period_end ? (
                <ActionButton
                  label="Cancel at period end"
                  danger
                  confirm="Cancel this subscription at the end of its period?"
                  run={async () =>
                    done(unwrap(await kosh.POST('/v1/subscriptions/{id}/cancel', { ...path, body: { at_period_end: true } })) && 'Cancels at period end.')
                  }
                />
              ) : null}
              {live ? (
                <ActionButton
                  label="Cancel now"
                  danger
                  confirm="Cancel this subscription now?"
                  run={async () => done(unwrap(await kosh.POST('/v1/subscriptions/{id}/cancel', { ...path, body: { at_period_end: false } })) && 'Canceled.')}
                />
              ) : null}
              {s.cancel_at_period_end && live ? (
                <ActionButton label="Reactivate" run={async () => done(unwrap(await kosh.POST('/v1/subscriptions/{id}/reactivate', path)) && 'Reactivated.')} />
              ) : null}
            </>
          ) : null
        }
      >
        {`Subscription`}
      </PageTitle>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <Fields
        items={[
          ['Status', <Badge key="s">{s.status}</Badge>],
          ['Customer', <CustomerName key="c" id={s.customer_id} />],
          ['Plan', <PlanName key="p" id={s.plan_id} />],
          ['Quantity', String(s.quantity)],
          ['Amount', <SubscriptionAmount key="a" s={s} />],
          ['Currency', s.currency],
          ['Current period', `${date(s.current_period_start)} – ${date(s.current_period_end)}`],
          ['Cancels at period end', s.cancel_at_period_end ? 'yes' : 'no'],
          ['Latest invoice', <InvoiceNumber key="i" id={s.latest_invoice_id} />],
        ]}
      />
      {money$ && live ? (
        <ActionForm
          title="Change plan"
          submit="Change plan"
          onSubmit={async (form, key) => {
            const planId = str(form, 'plan_id');
            if (!planId) throw new Error('Choose a plan from the list.');
            unwrap(
              await kosh.POST('/v1/subscriptions/{id}/change-plan', {
                ...path,
                body: { plan_id: planId, prorate: form.get('prorate') === 'on' },
                ...idem(key),
              }),
            );
            reload();
            return 'Plan changed.';
          }}
        >
          <Picker kind="plan" label="New plan" name="plan_id" required />
          <Field label="Prorate" name="prorate" type="checkbox" defaultValue="true" />
        </ActionForm>
      ) : null}
      <section className="card">
        <h2>Invoices</h2>
        <PagedTable
          caption="Invoices of this subscription"
          filterKey={`${id}|${note ?? ''}`}
          columns={invoiceColumns}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/invoices', { params: { query: { subscription_id: id, page, limit } } }))}
        />
      </section>
    </>
  );
}

// ---------------------------------------------------------------- credit note

export function CreditNoteDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/credit-notes/{id}', { params: { path: { id } } })).data, [id]);
  const [note, setNote] = useState<string | null>(null);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const cn = data;
  const path = { params: { path: { id } } };
  const done = (what: string) => {
    setNote(what);
    reload();
  };
  return (
    <>
      <PageTitle
        actions={
          <>
            {cn.status !== 'pending_approval' && cn.status !== 'rejected' ? (
              <a className="button" href={`/v1/credit-notes/${id}/pdf`} target="_blank" rel="noopener">
                PDF
              </a>
            ) : null}
            {cn.status === 'pending_approval' && can(me, 'money') ? (
              <>
                <ActionButton label="Approve" run={async () => done(unwrap(await kosh.POST('/v1/credit-notes/{id}/approve', path)) && 'Approved.')} />
                <ActionButton
                  label="Reject"
                  danger
                  confirm="Reject this credit note?"
                  run={async () => done(unwrap(await kosh.POST('/v1/credit-notes/{id}/reject', path)) && 'Rejected.')}
                />
              </>
            ) : null}
            {cn.status === 'issued' && can(me, 'money') ? (
              <ActionButton
                label="Void"
                danger
                confirm="Void this credit note?"
                run={async () => done(unwrap(await kosh.POST('/v1/credit-notes/{id}/void', path)) && 'Voided.')}
              />
            ) : null}
          </>
        }
      >
        {`Credit note ${cn.number ?? '(pending approval)'}`}
      </PageTitle>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <Fields
        items={[
          ['Status', <Badge key="s">{cn.status}</Badge>],
          ['Customer', <CustomerName key="c" id={cn.customer_id} />],
          ['Invoice', <InvoiceNumber key="i" id={cn.invoice_id} />],
          ['Amount', money(cn.amount, cn.currency)],
          ['GST', money(cn.tax_amount, cn.currency)],
          ['Balance', money(cn.balance, cn.currency)],
          ['Reason', cn.reason ?? '—'],
          ['Issued', dateTime(cn.issued_at)],
        ]}
      />
      {cn.status === 'issued' && cn.balance > 0 && can(me, 'money') ? (
        <ActionForm
          title="Apply to an invoice"
          submit="Apply"
          onSubmit={async (form, key) => {
            const amount = amountOf(form, 'apply_amount', cn.currency)!;
            const invoiceId = str(form, 'invoice_id');
            if (!invoiceId) throw new Error('Choose an invoice from the list.');
            unwrap(await kosh.POST('/v1/credit-notes/{id}/apply', { ...path, body: { invoice_id: invoiceId, amount }, ...idem(key) }));
            reload();
            return 'Applied.';
          }}
        >
          <Picker
            kind="invoice"
            label="Invoice"
            name="invoice_id"
            required
            scope={{ customer_id: cn.customer_id, status: 'open' }}
            hint="This customer's open invoices"
          />
          <Field label="Amount" name="apply_amount" required inputMode="decimal" />
        </ActionForm>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- payment

export function PaymentDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/payments/{id}', { params: { path: { id } } })).data, [id]);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const p = data;
  return (
    <>
      <PageTitle>{`Payment ${p.reference_number || `of ${money(p.amount, p.currency)}`}`}</PageTitle>
      <Fields
        items={[
          ['Status', <Badge key="s">{p.status}</Badge>],
          ['Customer', <CustomerName key="c" id={p.customer_id} />],
          ['Invoice', <InvoiceNumber key="i" id={p.invoice_id} />],
          ['Amount', money(p.amount, p.currency)],
          ['TDS', money(p.tds_amount, p.currency)],
          ['Refunded', money(p.amount_refunded, p.currency)],
          ['Method', p.payment_type.replace(/_/g, ' ')],
          ['Channel', p.channel],
          ['Recorded', dateTime(p.recorded_at)],
        ]}
      />
      {can(me, 'money') && p.amount_refunded < p.amount ? <PaymentRefund payment={p} onDone={reload} /> : null}
      <section className="card">
        <h2>Refunds</h2>
        <PagedTable
          caption="Refunds of this payment"
          filterKey={`${id}|${p.amount_refunded}`}
          columns={refundColumns}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/payments/{id}/refunds', { params: { path: { id }, query: { page, limit } } }))}
        />
      </section>
    </>
  );
}

const refundColumns: Column<Schema<'Refund'>>[] = [
  { header: 'Created', cell: (r) => dateTime(r.created_at) },
  { header: 'Amount', cell: (r) => money(r.amount, r.currency), numeric: true },
  { header: 'Status', cell: (r) => <Badge>{r.status}</Badge> },
  { header: 'Reason', cell: (r) => r.reason },
  { header: 'Credit note', cell: (r) => (r.credit_note_id ? <Link to={`/credit-notes/${r.credit_note_id}`}>View the credit note</Link> : '—') },
];

function PaymentRefund({ payment, onDone }: { payment: Schema<'OfflinePayment'>; onDone: () => void }) {
  const [note, setNote] = useState<string | null>(null);
  const invoice = useLoad(
    async () => (payment.invoice_id ? unwrap(await kosh.GET('/v1/invoices/{id}', { params: { path: { id: payment.invoice_id } } })).data : undefined),
    [payment.invoice_id],
  );
  if (payment.invoice_id && invoice.loading) return <Loading />;
  return (
    <>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <RefundForm
        payments={[payment]}
        invoice={invoice.data}
        onDone={(text) => {
          setNote(text);
          onDone();
        }}
      />
    </>
  );
}

/** An invoice's refund: from one of its payments with something left to refund, by amount or by line. */
function InvoiceRefund({ invoice, onDone }: { invoice: Schema<'Invoice'>; onDone: (text: string) => void }) {
  const payments = useLoad(
    async () => unwrap(await kosh.GET('/v1/payments', { params: { query: { invoice_id: invoice.id, limit: 100 } } })).data,
    [invoice.id, invoice.amount_paid, invoice.amount_credited],
  );
  const refundable = (payments.data ?? []).filter((p) => p.status !== 'failed' && p.amount_refunded < p.amount);
  if (!refundable.length) return null;
  return <RefundForm key={refundable.map((p) => `${p.id}:${p.amount_refunded}`).join()} payments={refundable} invoice={invoice} onDone={onDone} />;
}

// ---------------------------------------------------------------- plan

type Price = Schema<'Plan'>['prices'][number];

export function PlanDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/plans/{id}', { params: { path: { id } } })).data, [id]);
  const [note, setNote] = useState<string | null>(null);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const p = data;
  const done = (text: string) => {
    forget(id);
    setNote(text);
    reload();
  };
  const priceColumns: Column<Price>[] = [
    { header: 'Currency', cell: (x) => x.currency },
    { header: 'Price', cell: (x) => priceText(x, p), numeric: true },
    { header: 'Type', cell: (x) => `${x.billing_scheme.replace('_', ' ')}${x.tiers_mode ? `, ${x.tiers_mode} tiers` : ''}` },
    { header: 'Since', cell: (x) => date(x.created_at) },
    { header: 'Active', cell: (x) => (x.active ? 'yes' : `archived ${date(x.archived_at)}`) },
  ];
  if (can(me, 'money'))
    priceColumns.push({
      header: 'Actions',
      cell: (x) =>
        x.active ? (
          <ActionButton
            label={`Archive the ${x.currency} ${x.billing_scheme === 'metered' ? `${x.metric_code ?? 'metered'} ` : ''}price`}
            danger
            confirm="Archive this price? New subscriptions cannot use it; running ones keep it."
            run={async () => {
              unwrap(await kosh.POST('/v1/plans/{id}/prices/{price_id}/archive', { params: { path: { id, price_id: x.id } } }));
              done('Price archived.');
            }}
          />
        ) : (
          '—'
        ),
    });
  return (
    <>
      <PageTitle
        actions={
          can(me, 'money') ? (
            p.active ? (
              <ActionButton
                label="Archive plan"
                danger
                confirm={`Archive ${p.name}? No new subscriptions can use it; running ones renew as before.`}
                run={async () => {
                  unwrap(await kosh.PATCH('/v1/plans/{id}', { params: { path: { id } }, body: { active: false } }));
                  done(`${p.name} archived.`);
                }}
              />
            ) : (
              <ActionButton
                label="Restore plan"
                run={async () => {
                  unwrap(await kosh.PATCH('/v1/plans/{id}', { params: { path: { id } }, body: { active: true } }));
                  done(`${p.name} restored.`);
                }}
              />
            )
          ) : null
        }
      >
        {p.name}
      </PageTitle>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <Fields
        items={[
          ['Code', p.code ?? '—'],
          ['Description', p.description ?? '—'],
          ['Billed every', `${p.interval_count} ${p.interval_unit}${p.interval_count > 1 ? 's' : ''}`],
          ['Trial days', String(p.trial_days)],
          ['SAC/HSN', p.hsn_code || '—'],
          ['GST rate', p.tax_rate_bp === null ? 'the tenant default' : `${(p.tax_rate_bp / 100).toFixed(2)}%`],
          ['Status', <Badge key="a">{p.active ? 'active' : 'archived'}</Badge>],
        ]}
      />
      <section className="card">
        <h2>Prices</h2>
        <Table caption="Prices" rowKey={(x) => x.id} columns={priceColumns} rows={p.prices} />
      </section>
      {can(me, 'money') ? (
        <div className="grid2">
          <ActionForm
            title="Edit plan"
            submit="Save plan"
            keep
            onSubmit={async (form, key) => {
              unwrap(
                await kosh.PATCH('/v1/plans/{id}', {
                  params: { path: { id } },
                  body: { name: str(form, 'plan_name') ?? p.name, description: str(form, 'description') ?? null },
                  ...idem(key),
                }),
              );
              done('Plan saved.');
            }}
          >
            <Field label="Plan name" name="plan_name" required defaultValue={p.name} key={`n${p.updated_at}`} />
            <Field label="Description" name="description" defaultValue={p.description ?? ''} key={`d${p.updated_at}`} />
          </ActionForm>
          <NewPrice plan={p} onDone={done} />
        </div>
      ) : null}
      <PlanEntitlements planId={id} />
    </>
  );
}

/** A new price for a plan: a flat price (replacing the currency's active one) or a metered price on a metric. */
function NewPrice({ plan, onDone }: { plan: Schema<'Plan'>; onDone: (text: string) => void }) {
  const metrics = useLoad(loadMetrics, []);
  const [kind, setKind] = useState<'flat' | 'metered'>('flat');
  return (
    <ActionForm
      title="Add or change a price"
      submit="Add price"
      onReset={() => setKind('flat')}
      onSubmit={async (form, key) => {
        const currency = str(form, 'currency') ?? 'INR';
        let body;
        if (kind === 'metered') {
          const metered = meteredPriceOf(form, 'new', currency);
          if (!metered) throw new Error('Choose a billable metric.');
          body = metered;
        } else {
          const amount = amountOf(form, 'price_amount', currency)!;
          if (amount <= 0) throw new Error('The price is above zero.');
          body = { billing_scheme: 'per_unit' as const, amount, currency };
        }
        const created = unwrap(await kosh.POST('/v1/plans/{id}/prices', { params: { path: { id: plan.id } }, body: { ...body, replace: true }, ...idem(key) }));
        const known = new Set(plan.prices.map((x) => x.id));
        const added = created.data.prices.find((x) => !known.has(x.id));
        onDone(`Price ${added ? priceText(added, created.data) : ''} added; the price it replaces is archived.`);
      }}
    >
      <p className="muted">
        Prices do not change in place: a new price replaces the active one of its currency (or metric), which is archived. Running subscriptions keep theirs.
      </p>
      <div className="field">
        <label htmlFor="new-price-kind">Kind of price</label>
        <select id="new-price-kind" value={kind} onChange={(e) => setKind(e.target.value as 'flat')}>
          <option value="flat">Flat price each period</option>
          <option value="metered" disabled={!metrics.data?.length}>
            Metered (billed on usage)
          </option>
        </select>
      </div>
      <Field label="Currency" name="currency" defaultValue="INR" options={CURRENCY_OPTIONS} />
      {kind === 'flat' ? (
        <Field label="New price" name="price_amount" required inputMode="decimal" hint="Before GST, e.g. 1,499.00" />
      ) : (
        <MeteredPriceFields metrics={metrics.data ?? []} suffix="new" legend="Metered price" required />
      )}
    </ActionForm>
  );
}
