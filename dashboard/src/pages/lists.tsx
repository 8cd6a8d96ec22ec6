/** Searchable, server-side paginated tables (the API's page/limit, filters and total_count) and the create forms. */
import { useState, type ReactNode } from 'react';
import { can, kosh, unwrap, type Schema } from '../api.ts';
import { date, money, toMinor } from '../format.ts';
import { ActionForm, Badge, Field, Link, navigate, PagedTable, PageTitle, str, useLocation, useMe, type Column } from '../ui.tsx';

function Filters({ children, label }: { children: ReactNode; label: string }) {
  return (
    <form className="filters" role="search" aria-label={label} onSubmit={(e) => e.preventDefault()}>
      {children}
    </form>
  );
}

function SearchBox({ label, value, onChange }: { label: string; value: string; onChange: (v: string) => void }) {
  const [text, setText] = useState(value);
  return (
    <div className="field inline">
      <label htmlFor="search">{label}</label>
      <input
        id="search"
        type="search"
        value={text}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter') onChange(text.trim());
        }}
        onBlur={() => onChange(text.trim())}
      />
    </div>
  );
}

function StatusSelect<S extends string>({ statuses, value, onChange }: { statuses: readonly S[]; value: S | ''; onChange: (v: S | '') => void }) {
  return (
    <div className="field inline">
      <label htmlFor="status">Status</label>
      <select id="status" value={value} onChange={(e) => onChange(e.target.value as S | '')}>
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
            onSubmit={async (form) => {
              const created = unwrap(
                await kosh.POST('/v1/customers', {
                  body: { email: str(form, 'email') ?? '', name: str(form, 'name'), gstin: str(form, 'gstin'), phone: str(form, 'phone') },
                }),
              );
              navigate(`/customers/${created.data.id}`);
            }}
          >
            <Field label="E-mail" name="email" type="email" required />
            <Field label="Name" name="name" />
            <Field label="GSTIN" name="gstin" hint="15 characters, for a registered business" />
            <Field label="Phone" name="phone" type="tel" />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- plans

export function PlanList() {
  const { me } = useMe();
  const [q, setQ] = useState('');
  const columns: Column<Schema<'Plan'>>[] = [
    { header: 'Name', cell: (p) => <Link to={`/plans/${p.id}`}>{p.name}</Link> },
    { header: 'Code', cell: (p) => p.code ?? '—' },
    { header: 'Every', cell: (p) => `${p.interval_count} ${p.interval_unit}${p.interval_count > 1 ? 's' : ''}` },
    { header: 'Prices', cell: (p) => p.prices.map((price) => money(price.amount, price.currency)).join(', ') || '—', numeric: true },
    { header: 'Active', cell: (p) => (p.active ? 'yes' : 'no') },
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
        <details className="create">
          <summary>New plan</summary>
          <ActionForm
            submit="Create plan"
            onSubmit={async (form) => {
              const currency = str(form, 'currency') ?? 'INR';
              const amount = toMinor(str(form, 'amount') ?? '', currency);
              if (amount === null) throw new Error('the price is not an amount (e.g. 1,499.00)');
              const created = unwrap(
                await kosh.POST('/v1/plans', {
                  body: {
                    name: str(form, 'name') ?? '',
                    code: str(form, 'code'),
                    interval_unit: (str(form, 'interval_unit') ?? 'month') as 'month',
                    interval_count: Number(str(form, 'interval_count') ?? '1'),
                    amount,
                    currency,
                    hsn_code: str(form, 'hsn_code'),
                  },
                }),
              );
              navigate(`/plans/${created.data.id}`);
            }}
          >
            <Field label="Name" name="name" required />
            <Field label="Code" name="code" />
            <Field label="Price (major units, e.g. 1,499.00)" name="amount" required inputMode="decimal" />
            <Field
              label="Currency"
              name="currency"
              defaultValue="INR"
              options={[
                ['INR', 'INR'],
                ['USD', 'USD'],
                ['EUR', 'EUR'],
                ['GBP', 'GBP'],
              ]}
            />
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
  const [customer, setCustomer] = useState(query.get('customer_id') ?? '');
  const customerId = UUID.test(customer) ? customer : undefined;
  const columns: Column<Schema<'Subscription'>>[] = [
    { header: 'Subscription', cell: (s) => <Link to={`/subscriptions/${s.id}`}>{s.id.slice(-8)}</Link> },
    { header: 'Customer', cell: (s) => <Link to={`/customers/${s.customer_id}`}>{s.customer_id.slice(-8)}</Link> },
    { header: 'Status', cell: (s) => <Badge>{s.status}</Badge> },
    { header: 'Quantity', cell: (s) => s.quantity, numeric: true },
    { header: 'Current period ends', cell: (s) => date(s.current_period_end) },
  ];
  return (
    <>
      <PageTitle>Subscriptions</PageTitle>
      <Filters label="Filter subscriptions">
        <StatusSelect statuses={SUBSCRIPTION_STATUSES} value={status} onChange={setStatus} />
        <SearchBox label="Customer id" value={customer} onChange={setCustomer} />
      </Filters>
      <PagedTable
        caption="Subscriptions"
        columns={columns}
        filterKey={`${status}|${customerId ?? ''}`}
        load={async (page, limit) =>
          unwrap(
            await kosh.GET('/v1/subscriptions', {
              params: { query: { page, limit, ...(status ? { status } : {}), ...(customerId ? { customer_id: customerId } : {}) } },
            }),
          )
        }
      />
      {can(me, 'money') ? (
        <details className="create">
          <summary>New subscription</summary>
          <ActionForm
            submit="Create subscription"
            onSubmit={async (form) => {
              const created = unwrap(
                await kosh.POST('/v1/subscriptions', {
                  body: { customer_id: str(form, 'customer_id') ?? '', plan_id: str(form, 'plan_id') ?? '', quantity: Number(str(form, 'quantity') ?? '1') },
                }),
              );
              navigate(`/subscriptions/${created.data.id}`);
            }}
          >
            <Field label="Customer id" name="customer_id" required defaultValue={customerId} />
            <Field label="Plan id" name="plan_id" required />
            <Field label="Quantity" name="quantity" type="number" defaultValue="1" />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- invoices

const INVOICE_STATUSES = ['draft', 'open', 'paid', 'void', 'uncollectible'] as const;

export function InvoiceList() {
  const { query } = useLocation();
  const initial = query.get('status');
  const [status, setStatus] = useState<(typeof INVOICE_STATUSES)[number] | ''>(INVOICE_STATUSES.find((s) => s === initial) ?? '');
  const [q, setQ] = useState(query.get('q') ?? '');
  const [customer, setCustomer] = useState(query.get('customer_id') ?? '');
  const customerId = UUID.test(customer) ? customer : undefined;
  const columns: Column<Schema<'Invoice'>>[] = [
    { header: 'Number', cell: (i) => <Link to={`/invoices/${i.id}`}>{i.number ?? `draft ${i.id.slice(-8)}`}</Link> },
    {
      header: 'Customer',
      cell: (i) => <Link to={`/customers/${i.customer_id}`}>{i.customer_details?.name ?? i.customer_details?.email ?? i.customer_id.slice(-8)}</Link>,
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
        <SearchBox label="Customer id" value={customer} onChange={setCustomer} />
      </Filters>
      <PagedTable
        caption="Invoices"
        columns={columns}
        filterKey={`${status}|${q}|${customerId ?? ''}`}
        load={async (page, limit) =>
          unwrap(
            await kosh.GET('/v1/invoices', {
              params: { query: { page, limit, ...(status ? { status } : {}), ...(q ? { q } : {}), ...(customerId ? { customer_id: customerId } : {}) } },
            }),
          )
        }
      />
    </>
  );
}

// ---------------------------------------------------------------- payments

export function PaymentList() {
  const { query } = useLocation();
  const [customer, setCustomer] = useState(query.get('customer_id') ?? '');
  const customerId = UUID.test(customer) ? customer : undefined;
  const columns: Column<Schema<'OfflinePayment'>>[] = [
    { header: 'Payment', cell: (p) => <Link to={`/payments/${p.id}`}>{p.reference_number ?? p.id.slice(-8)}</Link> },
    { header: 'Customer', cell: (p) => <Link to={`/customers/${p.customer_id}`}>{p.customer_id.slice(-8)}</Link> },
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
        <SearchBox label="Customer id" value={customer} onChange={setCustomer} />
      </Filters>
      <PagedTable
        caption="Payments"
        columns={columns}
        filterKey={customerId ?? ''}
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
    { header: 'Number', cell: (c) => <Link to={`/credit-notes/${c.id}`}>{c.number ?? c.id.slice(-8)}</Link> },
    { header: 'Customer', cell: (c) => <Link to={`/customers/${c.customer_id}`}>{c.customer_id.slice(-8)}</Link> },
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
