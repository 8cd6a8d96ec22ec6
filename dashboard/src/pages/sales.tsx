/** Quotes (draft → accepted with its invoice, or declined), gifts (bought, then redeemed in the portal) and checkout links. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { date, dateTime, money } from '../format.ts';
import { CustomerName, fetchPlan, InvoiceNumber, Picker, planPrice, PlanName, type PickerOption } from '../pickers.tsx';
import { ActionButton, ActionForm, Badge, Field, PagedTable, PageTitle, str, Table, useMe, type Column } from '../ui.tsx';
import { amountIn, endOfDayInIndia } from './billing.tsx';

type Quote = Schema<'Quote'>;
type Gift = Schema<'Gift'>;

function Note({ text }: { text: string | null }) {
  return text ? (
    <p className="ok" role="status">
      {text}
    </p>
  ) : null;
}

// ---------------------------------------------------------------- quotes

export function QuoteList() {
  const { me } = useMe();
  const [status, setStatus] = useState<'' | Quote['status']>('');
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  const columns: Column<Quote>[] = [
    { header: 'Quote', cell: (q) => q.quote_number },
    { header: 'Customer', cell: (q) => <CustomerName id={q.customer_id} /> },
    { header: 'Lines', cell: (q) => q.line_items.map((l) => `${l.description} × ${l.quantity}`).join(', ') },
    { header: 'Total', cell: (q) => money(q.total, q.currency), numeric: true },
    { header: 'Status', cell: (q) => <Badge>{q.status}</Badge> },
    { header: 'Valid until', cell: (q) => date(q.valid_until) },
    { header: 'Invoice', cell: (q) => (q.invoice_id ? <InvoiceNumber id={q.invoice_id} /> : '—') },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (q) =>
        q.status === 'draft' ? (
          <>
            <ActionButton
              label={`Accept ${q.quote_number}`}
              confirm={`Accept ${q.quote_number}? Its invoice is created and finalized.`}
              run={async () => {
                const accepted = unwrap(await kosh.POST('/v1/quotes/{id}/accept', { params: { path: { id: q.id } } })).data;
                setNote(`Quote ${accepted.quote_number} accepted: its invoice is issued.`);
                setTick((n) => n + 1);
              }}
            />
            <ActionButton
              label={`Decline ${q.quote_number}`}
              danger
              confirm={`Decline ${q.quote_number}?`}
              run={async () => {
                unwrap(await kosh.POST('/v1/quotes/{id}/decline', { params: { path: { id: q.id } } }));
                setNote(`Quote ${q.quote_number} declined.`);
                setTick((n) => n + 1);
              }}
            />
          </>
        ) : (
          '—'
        ),
    });
  return (
    <>
      <PageTitle>Quotes</PageTitle>
      <Note text={note} />
      <div className="filters">
        <div className="field inline">
          <label htmlFor="quote-status">Status</label>
          <select id="quote-status" value={status} onChange={(e) => setStatus(e.target.value as Quote['status'])}>
            <option value="">All</option>
            <option value="draft">Draft</option>
            <option value="accepted">Accepted</option>
            <option value="declined">Declined</option>
            <option value="expired">Expired</option>
          </select>
        </div>
      </div>
      <PagedTable
        caption="Quotes"
        columns={columns}
        filterKey={`${status}|${tick}`}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/quotes', { params: { query: { page, limit, ...(status ? { status } : {}) } } }))}
      />
      {can(me, 'money') ? (
        <ActionForm
          title="New quote"
          submit="Create quote"
          onSubmit={async (form, key) => {
            const customer = str(form, 'customer_id');
            if (!customer) throw new Error('Choose a customer from the list.');
            const currency = 'INR';
            const lines: { description: string; quantity: number; unit_amount: number; hsn_code?: string }[] = [];
            const planId = str(form, 'plan_id');
            const quantity = Number(str(form, 'quantity') ?? '1');
            if (!Number.isInteger(quantity) || quantity < 1) throw new Error('The quantity is a whole number of at least 1.');
            if (planId) {
              const plan = await fetchPlan(planId);
              const price = planPrice(plan, undefined, currency);
              if (!price || price.billing_scheme !== 'per_unit' || price.type === 'metered')
                throw new Error(`${plan.name} has no flat ${currency} price to quote.`);
              lines.push({ description: plan.name, quantity, unit_amount: price.amount });
            }
            const extra = str(form, 'line_description');
            if (extra) {
              const unit = amountIn(form, 'line_amount', 'The unit price', currency);
              if (unit === undefined) throw new Error('The extra line needs a unit price.');
              lines.push({ description: extra, quantity: 1, unit_amount: unit, ...(str(form, 'line_hsn') ? { hsn_code: str(form, 'line_hsn') } : {}) });
            }
            if (!lines.length) throw new Error('Choose a plan or describe a line.');
            const created = unwrap(
              await kosh.POST('/v1/quotes', {
                body: {
                  customer_id: customer,
                  currency,
                  line_items: lines,
                  ...(str(form, 'valid_until') ? { valid_until: endOfDayInIndia(str(form, 'valid_until')) } : {}),
                  ...(str(form, 'notes') ? { notes: str(form, 'notes') } : {}),
                },
                ...idem(key),
              }),
            ).data;
            setTick((n) => n + 1);
            return `Quote ${created.quote_number} created: ${money(created.total, created.currency)} with GST.`;
          }}
        >
          <Picker kind="customer" label="Customer" name="customer_id" required />
          <Picker kind="plan" label="Plan" name="plan_id" hint="Quoted at its flat INR price" />
          <Field label="Quantity" name="quantity" type="number" defaultValue="1" hint="Seats or periods of the plan" />
          <fieldset className="line">
            <legend>Another line (optional)</legend>
            <Field label="Description" name="line_description" hint="e.g. Implementation services" />
            <Field label="Unit price" name="line_amount" inputMode="decimal" hint="Before GST, e.g. 15,000.00" />
            <Field label="HSN/SAC" name="line_hsn" inputMode="numeric" hint="4, 6 or 8 digits" />
          </fieldset>
          <Field label="Valid until" name="valid_until" type="date" hint="The last day it can be accepted (India time)" />
          <Field label="Notes" name="notes" />
        </ActionForm>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- gifts

export function GiftList() {
  const { me } = useMe();
  const [status, setStatus] = useState<'' | Gift['status']>('');
  const [tick, setTick] = useState(0);
  const [note, setNote] = useState<string | null>(null);
  const columns: Column<Gift>[] = [
    { header: 'Code', cell: (g) => <code>{g.code}</code> },
    { header: 'Plan', cell: (g) => <PlanName id={g.plan_id} /> },
    { header: 'Buyer', cell: (g) => <CustomerName id={g.buyer_customer_id} /> },
    { header: 'Recipient', cell: (g) => g.recipient_email },
    { header: 'Months', cell: (g) => String(g.duration_months), numeric: true },
    { header: 'Price', cell: (g) => money(g.amount, g.currency), numeric: true },
    { header: 'Status', cell: (g) => <Badge>{g.status}</Badge> },
    { header: 'Redeem by', cell: (g) => date(g.expires_at) },
    { header: 'Invoice', cell: (g) => (g.invoice_id ? <InvoiceNumber id={g.invoice_id} /> : '—') },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (g) =>
        g.status === 'purchased' ? (
          <ActionButton
            label={`Cancel ${g.code}`}
            danger
            confirm={`Cancel the gift ${g.code}? An open purchase invoice is voided; a paid one gets a credit note.`}
            run={async () => {
              const answer = unwrap(await kosh.POST('/v1/gifts/{id}/cancel', { params: { path: { id: g.id } } })).data;
              setNote(`Gift ${g.code} canceled${answer.invoice_voided ? ': its invoice is voided.' : answer.credit_note ? ': a credit note is issued.' : '.'}`);
              setTick((n) => n + 1);
            }}
          />
        ) : (
          '—'
        ),
    });
  return (
    <>
      <PageTitle>Gifts</PageTitle>
      <p className="muted">A gift is a plan bought for someone else: the buyer pays its invoice, the recipient redeems the code in the customer portal.</p>
      <Note text={note} />
      <div className="filters">
        <div className="field inline">
          <label htmlFor="gift-status">Status</label>
          <select id="gift-status" value={status} onChange={(e) => setStatus(e.target.value as Gift['status'])}>
            <option value="">All</option>
            <option value="purchased">Purchased</option>
            <option value="redeemed">Redeemed</option>
            <option value="canceled">Canceled</option>
          </select>
        </div>
      </div>
      <PagedTable
        caption="Gifts"
        columns={columns}
        filterKey={`${status}|${tick}`}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/gifts', { params: { query: { page, limit, ...(status ? { status } : {}) } } }))}
      />
      {can(me, 'money') ? (
        <ActionForm
          title="Sell a gift"
          submit="Create gift"
          onSubmit={async (form, key) => {
            const plan = str(form, 'plan_id');
            const buyer = str(form, 'buyer_customer_id');
            if (!plan) throw new Error('Choose a plan from the list.');
            if (!buyer) throw new Error('Choose the buyer from the list.');
            const gift = unwrap(
              await kosh.POST('/v1/gifts', {
                body: {
                  plan_id: plan,
                  buyer_customer_id: buyer,
                  recipient_email: str(form, 'recipient_email') ?? '',
                  duration_months: Number(str(form, 'duration_months') ?? '0'),
                },
                ...idem(key),
              }),
            ).data;
            setTick((n) => n + 1);
            return `Gift ${gift.code} created for ${gift.recipient_email}: ${money(gift.amount, gift.currency)} before GST, invoiced to the buyer.`;
          }}
        >
          <Picker kind="plan" label="Plan" name="plan_id" required />
          <Picker kind="customer" label="Buyer" name="buyer_customer_id" required />
          <Field label="Recipient's e-mail" name="recipient_email" type="email" required />
          <Field label="Months" name="duration_months" type="number" required defaultValue="12" hint="1 to 36" />
        </ActionForm>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- checkout links

type Session = Schema<'CheckoutSession'>;

export function CheckoutLinks() {
  const { me } = useMe();
  const [customer, setCustomer] = useState<PickerOption | null>(null);
  const [links, setLinks] = useState<(Session & { invoice: string })[]>([]);
  const [copied, setCopied] = useState<string | null>(null);
  const columns: Column<Session & { invoice: string }>[] = [
    { header: 'Invoice', cell: (s) => <InvoiceNumber id={s.invoice_id} /> },
    { header: 'Status', cell: (s) => <Badge>{s.status}</Badge> },
    { header: 'Expires', cell: (s) => dateTime(s.expires_at) },
    {
      header: 'Link',
      cell: (s) => (
        <>
          <a href={s.url} target="_blank" rel="noreferrer">
            Open the checkout page for {s.invoice}
          </a>{' '}
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard.writeText(s.url).catch(() => undefined);
              setCopied(`The checkout link for ${s.invoice} is copied.`);
            }}
          >
            Copy link for {s.invoice}
          </button>
        </>
      ),
    },
  ];
  return (
    <>
      <PageTitle>Checkout links</PageTitle>
      <p className="muted">
        A checkout link lets a customer pay an open invoice on Kosh&apos;s hosted page, with the connected gateway. A link is shown only when it is made (Kosh
        keeps a hash of its token, not the token): copy it then, or make a new one.
      </p>
      {can(me, 'money') ? (
        <ActionForm
          title="New checkout link"
          submit="Create link"
          onReset={() => setCustomer(null)}
          onSubmit={async (form, key) => {
            const invoiceId = str(form, 'invoice_id');
            if (!invoiceId) throw new Error('Choose an open invoice from the list.');
            const session = unwrap(await kosh.POST('/v1/invoices/{id}/checkout-sessions', { params: { path: { id: invoiceId } }, ...idem(key) })).data;
            const invoice = unwrap(await kosh.GET('/v1/invoices/{id}', { params: { path: { id: invoiceId } } })).data;
            const label = invoice.number ?? 'the invoice';
            setLinks((all) => [{ ...session, invoice: label }, ...all.filter((l) => l.id !== session.id)]);
            return `Checkout link for ${label} (${money(invoice.amount_due, invoice.currency)} due) created.`;
          }}
        >
          <Picker kind="customer" label="Customer" name="checkout_customer" onChange={setCustomer} hint="Optional: narrows the invoices to this customer's" />
          <Picker
            kind="invoice"
            label="Open invoice"
            name="invoice_id"
            required
            scope={{ status: 'open', ...(customer ? { customer_id: customer.id } : {}) }}
          />
        </ActionForm>
      ) : (
        <p>Checkout links are created by finance.</p>
      )}
      <section className="card">
        <h2>Links created here</h2>
        <Note text={copied} />
        <Table caption="Checkout links created here" columns={columns} rows={links} />
      </section>
    </>
  );
}
