/** Searchable, server-side paginated tables (the API's page/limit, filters and total_count) and the create forms. */
import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { CustomerName, InvoiceNumber, Picker, PlanName, priceText, SubscriptionAmount } from '../pickers.tsx';
import { AddressFields, addressOf, GstinField } from './address.tsx';
import { NewInvoice } from './billing.tsx';
import { loadMetrics, MeteredPriceFields, meteredPriceOf, type MeteredPrice } from './usage.tsx';
import { date, money, toMinor } from '../format.ts';
import { ActionForm, Badge, Field, Link, navigate, PagedTable, PageTitle, str, useLoad, useLocation, useMe, type Column } from '../ui.tsx';

export const CURRENCY_OPTIONS: [string, string][] = [
  ['INR', 'INR'],
  ['USD', 'USD'],
  ['EUR', 'EUR'],
  ['GBP', 'GBP'],
];

function Filters({ children, label }: { children: ReactNode; label: string }) {
  return (
    <form className="filters" role="search" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      {children}
    </form>
  );
}

/** A text search that acts as you type (debounced); each box has its own id. */
function SearchBox({ label, value, onChange }: { label: string; value: string; onChange: (v: string) => void }) {
  const id = useId();
  const [text, setText] = useState(value);
  const changed = useRef(onChange);
  changed.current = onChange;
  useEffect(() => {
    const timer = setTimeout(() => changed.current(text.trim()), 300);
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <div className="field inline">
      <label htmlFor={id}>{label}</label>
      <input id={id} type="search" value={text} onChange={(e) => setText(e.target.value)} />
    </div>
  );
}

/** A customer filter: pick by name; the list narrows to that customer. */
function CustomerFilter({ value, onChange }: { value: string; onChange: (id: string) => void }) {
  return <Picker kind="customer" label="Customer" name="customer_filter" defaultId={value || undefined} onChange={(o) => onChange(o?.id ?? '')} />;
}

function StatusSelect<S extends string>({ statuses, value, onChange }: { statuses: readonly S[]; value: S | ''; onChange: (v: S | '') => void }) {
  const id = useId();
  return (
    <div className="field inline">
      <label htmlFor={id}>Status</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value as S | '')}>
        <option value="">Any</option>
        {statuses.map((s) => (
          <option key={s} value={s}>
            {s.replace(/_/g, ' ')}
          </option>
        ))}
      </select>
    </div>
  );
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const idOrNothing = (value: string | null) => (value && UUID.test(value) ? value : '');

// ---------------------------------------------------------------- customers

export function CustomerList() {
  const { me } = useMe();
  const { query } = useLocation();
  const [q, setQ] = useState(query.get('q') ?? '');
  const columns: Column<Schema<'Customer'>>[] = [
    { header: 'Name', cell: (c) => <Link to={`/customers/${c.id}`}>{c.name ?? c.email}</Link> },
    { header: 'E-mail', cell: (c) => c.email },
    { header: 'GSTIN', cell: (c) => c.gstin ?? '—' },
    { header: 'Created', cell: (c) => date(c.created_at) },
  ];
  return (
    <>
      <PageTitle>Customers</PageTitle>
      <Filters label="Search customers">
        <SearchBox label="Search name, e-mail or GSTIN" value={q} onChange={setQ} />
      </Filters>
      <PagedTable
        caption="Customers"
        columns={columns}
        filterKey={q}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/customers', { params: { query: { page, limit, ...(q ? { q } : {}) } } }))}
      />
      {can(me, 'customers') ? (
        <details className="create">
          <summary>New customer</summary>
          <ActionForm
            submit="Create customer"
            onSubmit={async (form, key) => {
              const created = unwrap(
                await kosh.POST('/v1/customers', {
                  body: {
                    email: str(form, 'email') ?? '',
                    name: str(form, 'name'),
                    gstin: str(form, 'gstin'),
                    phone: str(form, 'phone'),
                    billing_address: addressOf(form),
                  },
                  ...idem(key),
                }),
              );
              navigate(`/customers/${created.data.id}`);
            }}
          >
            <Field label="E-mail" name="email" type="email" required />
            <Field label="Name" name="name" />
            <GstinField />
            <Field label="Phone" name="phone" type="tel" />
            <AddressFields legend="Billing address" />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- plans

export function PlanList() {
  const { me } = useMe();
  const { query } = useLocation();
  const [q, setQ] = useState('');
  const metrics = useLoad(loadMetrics, []);
  const [metered, setMetered] = useState<number[]>([0]);
  const [next, setNext] = useState(1);
  const columns: Column<Schema<'Plan'>>[] = [
    { header: 'Name', cell: (p) => <Link to={`/plans/${p.id}`}>{p.name}</Link> },
    { header: 'Code', cell: (p) => p.code ?? '—' },
    { header: 'Every', cell: (p) => `${p.interval_count} ${p.interval_unit}${p.interval_count > 1 ? 's' : ''}` },
    {
      header: 'Prices',
      cell: (p) =>
        p.prices
          .filter((price) => price.active)
          .map((price) => priceText(price))
          .join(', ') || '—',
      numeric: true,
    },
    { header: 'Active', cell: (p) => (p.active ? 'yes' : 'archived') },
  ];
  return (
    <>
      <PageTitle>Plans</PageTitle>
      <Filters label="Search plans">
        <SearchBox label="Search name or code" value={q} onChange={setQ} />
      </Filters>
      <PagedTable
        caption="Plans"
        columns={columns}
        filterKey={q}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/plans', { params: { query: { page, limit, ...(q ? { q } : {}) } } }))}
      />
      {can(me, 'money') ? (
        <details className="create" open={query.get('new') === '1' || undefined}>
          <summary>New plan</summary>
          <ActionForm
            submit="Create plan"
            onReset={() => setMetered([0])}
            onSubmit={async (form, key) => {
              const currency = str(form, 'currency') ?? 'INR';
              const flat = str(form, 'amount');
              const amount = flat === undefined ? undefined : toMinor(flat, currency);
              if (amount === null) throw new Error('the price is not an amount (e.g. 1,499.00)');
              const usage = metered.map((k) => meteredPriceOf(form, String(k), currency)).filter((x): x is MeteredPrice => x !== undefined);
              if (amount === undefined && !usage.length) throw new Error('A plan needs a price: a flat price, a metered price, or both.');
              const created = unwrap(
                await kosh.POST('/v1/plans', {
                  body: {
                    name: str(form, 'name') ?? '',
                    code: str(form, 'code'),
                    interval_unit: (str(form, 'interval_unit') ?? 'month') as 'month',
                    interval_count: Number(str(form, 'interval_count') ?? '1'),
                    ...(amount !== undefined ? { amount, currency } : {}),
                    ...(usage.length ? { prices: usage } : {}),
                    hsn_code: str(form, 'hsn_code'),
                  },
                  ...idem(key),
                }),
              );
              navigate(`/plans/${created.data.id}`);
            }}
          >
            <Field label="Name" name="name" required />
            <Field label="Code" name="code" />
            <Field
              label="Price (major units, e.g. 1,499.00)"
              name="amount"
              inputMode="decimal"
              hint="The flat fee each period, before GST; empty for a plan billed on usage only"
            />
            <Field label="Currency" name="currency" defaultValue="INR" options={CURRENCY_OPTIONS} />
            <Field label="Billed every" name="interval_count" type="number" defaultValue="1" />
            <Field
              label="Unit"
              name="interval_unit"
              defaultValue="month"
              options={[
                ['day', 'day'],
                ['week', 'week'],
                ['month', 'month'],
                ['year', 'year'],
              ]}
            />
            <Field label="SAC/HSN code" name="hsn_code" />
            {metrics.data?.length ? (
              <>
                {metered.map((k, i) => (
                  <MeteredPriceFields key={k} metrics={metrics.data!} suffix={String(k)} legend={`Metered price ${i + 1} (billed on usage, in arrears)`} />
                ))}
                <p>
                  <button
                    type="button"
                    onClick={() => {
                      setMetered((m) => [...m, next]);
                      setNext((n) => n + 1);
                    }}
                  >
                    Add a metered price
                  </button>
                </p>
              </>
            ) : metrics.data ? (
              <p className="muted">
                To bill on usage, first create a billable metric under <Link to="/metrics">Usage</Link>.
              </p>
            ) : null}
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- subscriptions

const SUBSCRIPTION_STATUSES = ['active', 'trialing', 'paused', 'canceled', 'past_due', 'unpaid'] as const;

export function SubscriptionList() {
  const { me } = useMe();
  const { query } = useLocation();
  const [status, setStatus] = useState<(typeof SUBSCRIPTION_STATUSES)[number] | ''>('');
  const [customerId, setCustomerId] = useState(idOrNothing(query.get('customer_id')));
  const [planId, setPlanId] = useState('');
  const columns: Column<Schema<'Subscription'>>[] = [
    { header: 'Customer', cell: (s) => <CustomerName id={s.customer_id} /> },
    { header: 'Plan', cell: (s) => <PlanName id={s.plan_id} /> },
    {
      header: 'Status',
      cell: (s) => (
        <Link to={`/subscriptions/${s.id}`}>
          <Badge>{s.status}</Badge>
        </Link>
      ),
    },
    { header: 'Quantity', cell: (s) => s.quantity, numeric: true },
    { header: 'Amount', cell: (s) => <SubscriptionAmount s={s} />, numeric: true },
    {
      header: 'Next billing',
      cell: (s) => (s.status === 'canceled' ? '—' : s.cancel_at_period_end ? `ends ${date(s.current_period_end)}` : date(s.current_period_end)),
    },
  ];
  return (
    <>
      <PageTitle>Subscriptions</PageTitle>
      <Filters label="Filter subscriptions">
        <StatusSelect statuses={SUBSCRIPTION_STATUSES} value={status} onChange={setStatus} />
        <CustomerFilter value={customerId} onChange={setCustomerId} />
        <Picker kind="plan" label="Plan" name="plan_filter" onChange={(o) => setPlanId(o?.id ?? '')} />
      </Filters>
      <PagedTable
        caption="Subscriptions"
        columns={columns}
        filterKey={`${status}|${customerId}|${planId}`}
        load={async (page, limit) =>
          unwrap(
            await kosh.GET('/v1/subscriptions', {
              params: {
                query: {
                  page,
                  limit,
                  ...(status ? { status } : {}),
                  ...(customerId ? { customer_id: customerId } : {}),
                  ...(planId ? { plan_id: planId } : {}),
                },
              },
            }),
          )
        }
      />
      {can(me, 'money') ? (
        <details className="create" open={query.get('new') === '1' || undefined}>
          <summary>New subscription</summary>
          <NewSubscription customerId={customerId} />
        </details>
      ) : null}
    </>
  );
}

/** A subscription by picking a customer, a plan (and its currency) and optionally a coupon. */
export function NewSubscription({ customerId }: { customerId?: string }) {
  const [plan, setPlan] = useState<Schema<'Plan'> | null>(null);
  const currencies = [...new Set(plan?.prices.filter((p) => p.active).map((p) => p.currency) ?? [])];
  return (
    <ActionForm
      submit="Create subscription"
      onSubmit={async (form, key) => {
        const customer = str(form, 'customer_id');
        const planId = str(form, 'plan_id');
        if (!customer) throw new Error('Choose a customer from the list.');
        if (!planId) throw new Error('Choose a plan from the list.');
        const created = unwrap(
          await kosh.POST('/v1/subscriptions', {
            body: {
              customer_id: customer,
              plan_id: planId,
              quantity: Number(str(form, 'quantity') ?? '1'),
              ...(str(form, 'currency') ? { currency: str(form, 'currency') } : {}),
              ...(str(form, 'coupon') ? { coupon: str(form, 'coupon') } : {}),
            },
            ...idem(key),
          }),
        );
        navigate(`/subscriptions/${created.data.id}`);
      }}
    >
      <Picker kind="customer" label="Customer" name="customer_id" required defaultId={customerId || undefined} />
      <Picker
        kind="plan"
        label="Plan"
        name="plan_id"
        required
        onChange={(o) => {
          if (!o) return setPlan(null);
          void kosh.GET('/v1/plans/{id}', { params: { path: { id: o.id } } }).then((r) => setPlan(r.data?.data ?? null));
        }}
      />
      {currencies.length > 1 ? <Field label="Price (currency)" name="currency" options={currencies.map((c) => [c, c])} /> : null}
      <Field label="Quantity" name="quantity" type="number" defaultValue="1" />
      <Picker kind="coupon" label="Coupon (optional)" name="coupon" hint="Type a coupon code or name, or leave empty" />
    </ActionForm>
  );
}

// ---------------------------------------------------------------- invoices

const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;

export function InvoiceList() {
  const { me } = useMe();
  const { query } = useLocation();
  const initial = query.get('status');
  const [status, setStatus] = useState<(typeof INVOICE_STATUSES)[number] | ''>(INVOICE_STATUSES.find((s) => s === initial) ?? '');
  const [q, setQ] = useState(query.get('q') ?? '');
  const [customerId, setCustomerId] = useState(idOrNothing(query.get('customer_id')));
  const columns: Column<Schema<'Invoice'>>[] = [
    { header: 'Number', cell: (i) => <Link to={`/invoices/${i.id}`}>{i.number ?? `Draft of ${date(i.created_at)}`}</Link> },
    {
      header: 'Customer',
      cell: (i) =>
        i.customer_details?.name || i.customer_details?.email ? (
          <Link to={`/customers/${i.customer_id}`}>{i.customer_details.name ?? i.customer_details.email}</Link>
        ) : (
          <CustomerName id={i.customer_id} />
        ),
    },
    { header: 'Status', cell: (i) => <Badge>{i.status}</Badge> },
    { header: 'Total', cell: (i) => money(i.total, i.currency), numeric: true },
    { header: 'Due', cell: (i) => money(i.amount_due, i.currency), numeric: true },
    { header: 'Due date', cell: (i) => date(i.due_date) },
  ];
  return (
    <>
      <PageTitle>Invoices</PageTitle>
      <Filters label="Filter invoices">
        <StatusSelect statuses={INVOICE_STATUSES} value={status} onChange={setStatus} />
        <SearchBox label="Invoice number" value={q} onChange={setQ} />
        <CustomerFilter value={customerId} onChange={setCustomerId} />
      </Filters>
      <PagedTable
        caption="Invoices"
        columns={columns}
        filterKey={`${status}|${q}|${customerId}`}
        load={async (page, limit) =>
          unwrap(
            await kosh.GET('/v1/invoices', {
              params: { query: { page, limit, ...(status ? { status } : {}), ...(q ? { q } : {}), ...(customerId ? { customer_id: customerId } : {}) } },
            }),
          )
        }
      />
      {can(me, 'money') ? (
        <details className="create" open={query.get('new') === '1' || undefined}>
          <summary>New one-off invoice</summary>
          <NewInvoice customerId={customerId} />
        </details>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- payments

export function PaymentList() {
  const { query } = useLocation();
  const [customerId, setCustomerId] = useState(idOrNothing(query.get('customer_id')));
  const columns: Column<Schema<'OfflinePayment'>>[] = [
    {
      header: 'Payment',
      cell: (p) => <Link to={`/payments/${p.id}`}>{p.reference_number || `${p.payment_type.replace(/_/g, ' ')} of ${date(p.recorded_at)}`}</Link>,
    },
    { header: 'Customer', cell: (p) => <CustomerName id={p.customer_id} /> },
    { header: 'Invoice', cell: (p) => <InvoiceNumber id={p.invoice_id} /> },
    { header: 'Method', cell: (p) => p.payment_type.replace(/_/g, ' ') },
    { header: 'Amount', cell: (p) => money(p.amount, p.currency), numeric: true },
    { header: 'TDS', cell: (p) => money(p.tds_amount, p.currency), numeric: true },
    { header: 'Status', cell: (p) => <Badge>{p.status}</Badge> },
    { header: 'Recorded', cell: (p) => date(p.recorded_at) },
  ];
  return (
    <>
      <PageTitle>Payments</PageTitle>
      <Filters label="Filter payments">
        <CustomerFilter value={customerId} onChange={setCustomerId} />
      </Filters>
      <PagedTable
        caption="Payments"
        columns={columns}
        filterKey={customerId}
        load={async (page, limit) =>
          unwrap(await kosh.GET('/v1/payments', { params: { query: { page, limit, ...(customerId ? { customer_id: customerId } : {}) } } }))
        }
      />
    </>
  );
}

// ---------------------------------------------------------------- credit notes

const CREDIT_NOTE_STATUSES = ['pending_approval', 'issued', 'used', 'void', 'rejected', 'expired'] as const;

export function CreditNoteList() {
  const { query } = useLocation();
  const initial = query.get('status');
  const [status, setStatus] = useState<(typeof CREDIT_NOTE_STATUSES)[number] | ''>(CREDIT_NOTE_STATUSES.find((s) => s === initial) ?? '');
  const columns: Column<Schema<'CreditNote'>>[] = [
    { header: 'Number', cell: (c) => <Link to={`/credit-notes/${c.id}`}>{c.number ?? `Pending, ${money(c.amount, c.currency)}`}</Link> },
    { header: 'Customer', cell: (c) => <CustomerName id={c.customer_id} /> },
    { header: 'Invoice', cell: (c) => <InvoiceNumber id={c.invoice_id} /> },
    { header: 'Status', cell: (c) => <Badge>{c.status}</Badge> },
    { header: 'Amount', cell: (c) => money(c.amount, c.currency), numeric: true },
    { header: 'Reason', cell: (c) => c.reason ?? '—' },
    { header: 'Created', cell: (c) => date(c.created_at) },
  ];
  return (
    <>
      <PageTitle>Credit notes</PageTitle>
      <p>
        <Link to="/credit-notes?status=pending_approval">Approval queue</Link>
      </p>
      <Filters label="Filter credit notes">
        <StatusSelect statuses={CREDIT_NOTE_STATUSES} value={status} onChange={setStatus} />
      </Filters>
      <PagedTable
        caption="Credit notes"
        columns={columns}
        filterKey={status}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/credit-notes', { params: { query: { page, limit, ...(status ? { status } : {}) } } }))}
      />
    </>
  );
}
