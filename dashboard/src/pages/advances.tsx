/** Advances (money received before any invoice: receipt and refund vouchers) and a customer's balance statement. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { date, dateTime, money, zone } from '../format.ts';
import { CustomerName, InvoiceNumber, Picker } from '../pickers.tsx';
import { ActionForm, Badge, ErrorNote, Field, Fields, Link, Loading, PagedTable, PageTitle, str, Table, useLoad, useMe, type Column } from '../ui.tsx';
import { amountIn, CURRENCIES } from './billing.tsx';

type Advance = Schema<'Advance'>;
type Movement = Advance['movements'][number];

const PAYMENT_TYPES: [string, string][] = [
  ['bank_transfer', 'Bank transfer'],
  ['cheque', 'Cheque'],
  ['cash', 'Cash'],
];

// ---------------------------------------------------------------- list

export function AdvanceList() {
  const { me } = useMe();
  const [customerId, setCustomerId] = useState('');
  const [tick, setTick] = useState(0);
  const columns: Column<Advance>[] = [
    { header: 'Receipt voucher', cell: (a) => <Link to={`/advances/${a.id}`}>{a.receipt_voucher_number}</Link> },
    { header: 'Customer', cell: (a) => <CustomerName id={a.customer_id} /> },
    { header: 'Received', cell: (a) => date(a.received_at) },
    { header: 'Amount', cell: (a) => money(a.amount, a.currency), numeric: true },
    { header: 'GST', cell: (a) => money(a.tax_amount, a.currency), numeric: true },
    { header: 'Balance', cell: (a) => money(a.balance, a.currency), numeric: true },
    { header: 'From', cell: (a) => (a.payment_id ? <Link to={`/payments/${a.payment_id}`}>the payment</Link> : 'a credit top-up') },
  ];
  return (
    <>
      <PageTitle>Advances</PageTitle>
      <p className="muted">Money received before any invoice: each advance has a receipt voucher with its GST; invoices use it up, or it is refunded.</p>
      <div className="filters">
        <Picker kind="customer" label="Customer" name="advance_customer" onChange={(o) => setCustomerId(o?.id ?? '')} hint="Empty: every customer" />
      </div>
      <PagedTable
        caption="Advances"
        columns={columns}
        filterKey={`${customerId}|${tick}`}
        load={async (page, limit) =>
          unwrap(await kosh.GET('/v1/advances', { params: { query: { page, limit, ...(customerId ? { customer_id: customerId } : {}) } } }))
        }
      />
      {can(me, 'money') ? (
        <ActionForm
          title="Receive an advance"
          submit="Record the advance"
          onSubmit={async (form, key) => {
            const customer = str(form, 'customer_id');
            if (!customer) throw new Error('Choose a customer from the list.');
            const currency = str(form, 'currency') ?? 'INR';
            const amount = amountIn(form, 'amount', 'The amount', currency);
            if (!amount) throw new Error('The amount is required.');
            unwrap(
              await kosh.POST('/v1/payments/offline', {
                body: {
                  customer_id: customer,
                  payment_type: (str(form, 'payment_type') ?? 'bank_transfer') as 'bank_transfer',
                  amount,
                  currency,
                  ...(str(form, 'reference_number') ? { reference_number: str(form, 'reference_number') } : {}),
                  ...(str(form, 'hsn_code') ? { hsn_code: str(form, 'hsn_code') } : {}),
                },
                ...idem(key),
              }),
            );
            setTick((n) => n + 1);
            return `Advance of ${money(amount, currency)} recorded with its receipt voucher.`;
          }}
        >
          <Picker kind="customer" label="Customer" name="customer_id" required />
          <Field label="Amount received" name="amount" required inputMode="decimal" hint="GST included, e.g. 11,800.00" />
          <Field label="Currency" name="currency" defaultValue="INR" options={CURRENCIES} />
          <Field label="Method" name="payment_type" defaultValue="bank_transfer" options={PAYMENT_TYPES} />
          <Field label="Reference" name="reference_number" hint="UTR, cheque number or receipt number" />
          <Field
            label="SAC/HSN of the supply"
            name="hsn_code"
            inputMode="numeric"
            hint="Default 998314 (services at 18 %); a goods code takes no GST on the advance"
          />
        </ActionForm>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- detail

function RefundStatus({ refundId, currency, onPaid }: { refundId: string; currency: string; onPaid: () => void }) {
  const { me } = useMe();
  const [paid, setPaid] = useState<string | null>(null);
  const refund = useLoad(async () => unwrap(await kosh.GET('/v1/refunds/{id}', { params: { path: { id: refundId } } })).data, [refundId]);
  if (refund.error) return <ErrorNote error={refund.error} />;
  if (!refund.data) return <Loading />;
  const r = refund.data;
  const byHand = r.gateway === null;
  return (
    <div>
      <Badge>{r.status}</Badge> {byHand ? 'paid by hand' : `through ${r.gateway}`} · {money(r.amount, currency)}
      {paid ? (
        <p className="ok" role="status">
          {paid}
        </p>
      ) : null}
      {byHand && r.status === 'pending' && can(me, 'money') ? (
        <ActionForm
          className="inline"
          submit="Mark paid"
          onSubmit={async (form, key) => {
            unwrap(
              await kosh.POST('/v1/refunds/{id}/mark_paid', {
                params: { path: { id: refundId } },
                body: { reference: str(form, 'reference') ?? '' },
                ...idem(key),
              }),
            );
            setPaid(`Refund marked paid (${str(form, 'reference') ?? ''}).`);
            refund.reload();
            onPaid();
          }}
        >
          <Field label="Payout reference" name="reference" required hint="UTR, cheque number or cash receipt" />
        </ActionForm>
      ) : null}
    </div>
  );
}

export function AdvanceDetail({ id }: { id: string }) {
  const { me } = useMe();
  const advance = useLoad(async () => unwrap(await kosh.GET('/v1/advances/{id}', { params: { path: { id } } })).data, [id]);
  if (advance.error) return <ErrorNote error={advance.error} />;
  if (!advance.data) return <Loading />;
  const a = advance.data;
  const movements: Column<Movement>[] = [
    { header: 'Date', cell: (m) => dateTime(m.created_at) },
    { header: 'Use', cell: (m) => (m.kind === 'applied' ? 'applied to an invoice' : 'refunded') },
    { header: 'Document', cell: (m) => (m.invoice_id ? <InvoiceNumber id={m.invoice_id} /> : (m.refund_voucher_number ?? '—')) },
    { header: 'Amount', cell: (m) => money(m.amount, a.currency), numeric: true },
    { header: 'Reason', cell: (m) => m.reason || '—' },
    {
      header: 'Refund',
      cell: (m) =>
        m.refund_id ? <RefundStatus refundId={m.refund_id} currency={a.currency} onPaid={advance.reload} /> : m.kind === 'refunded' ? m.payout : '—',
    },
  ];
  return (
    <>
      <PageTitle>{`Advance ${a.receipt_voucher_number}`}</PageTitle>
      <section className="card">
        <Fields
          items={[
            ['Customer', <CustomerName id={a.customer_id} />],
            ['Received', dateTime(a.received_at)],
            ['Amount', money(a.amount, a.currency)],
            ['Taxable value', money(a.subtotal, a.currency)],
            ['GST', `${money(a.tax_amount, a.currency)} at ${a.rate_bp / 100} %`],
            ['SAC/HSN', a.hsn_code],
            ['Balance', money(a.balance, a.currency)],
            ['Payment', a.payment_id ? <Link to={`/payments/${a.payment_id}`}>View the payment</Link> : 'a prepaid-credit top-up'],
          ]}
        />
      </section>
      <section className="card">
        <h2>Uses</h2>
        <Table caption="Uses of this advance" columns={movements} rows={a.movements} />
      </section>
      {can(me, 'money') && a.balance > 0 && !a.credit_grant_id ? (
        <ActionForm
          title="Refund the advance"
          submit="Refund"
          onSubmit={async (form, key) => {
            const amount = amountIn(form, 'refund_amount', 'The amount', a.currency);
            const updated = unwrap(
              await kosh.POST('/v1/advances/{id}/refunds', {
                params: { path: { id } },
                body: { ...(amount ? { amount } : {}), reason: str(form, 'reason') ?? '' },
                ...idem(key),
              }),
            ).data;
            advance.reload();
            const last = updated.movements.at(-1);
            const how = last?.payout === 'gateway' ? 'paid back through the gateway' : 'to be paid by hand (mark it paid once the money has left)';
            return `Refund of ${money(last?.amount ?? amount ?? a.balance, a.currency)} issued (${last?.refund_voucher_number ?? 'refund voucher'}), ${how}.`;
          }}
        >
          <Field label="Amount to refund" name="refund_amount" inputMode="decimal" hint={`Empty: the whole balance, ${money(a.balance, a.currency)}`} />
          <Field label="Reason" name="reason" />
          <p className="muted">
            {a.payment_id ? 'An advance paid through a gateway is refunded through it; otherwise the refund is paid by hand.' : 'The refund is paid by hand.'}
          </p>
        </ActionForm>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- the customer's balance statement

type Movement2 = Schema<'BalanceTransaction'>;
type StatementRow = Movement2 & { running: number };

const STATEMENT_PAGE = 100;
const STATEMENT_PAGES = 50;

/** Every movement of the customer's balance in one currency, oldest first (the API pages newest first). */
async function loadMovements(customerId: string, currency: string): Promise<Movement2[]> {
  const all: Movement2[] = [];
  for (let page = 1; page <= STATEMENT_PAGES; page++) {
    const answer = unwrap(
      await kosh.GET('/v1/customers/{id}/balance-transactions', { params: { path: { id: customerId }, query: { currency, page, limit: STATEMENT_PAGE } } }),
    );
    all.push(...answer.data);
    if (!answer.has_more) break;
  }
  return all.reverse();
}

/** The statement over [from, to] (calendar days, either open): opening balance, movements with a running balance, closing balance. */
export function statementOf(movements: Movement2[], from: string, to: string): { opening: number; rows: StatementRow[]; closing: number } {
  // Calendar days of the entity's time zone, as every report counts them.
  const days = new Intl.DateTimeFormat('en-CA', { timeZone: zone(), year: 'numeric', month: '2-digit', day: '2-digit' });
  const day = (m: Movement2) => days.format(new Date(m.created_at));
  let opening = 0;
  const rows: StatementRow[] = [];
  let running = 0;
  for (const m of movements) {
    if (from && day(m) < from) {
      opening += m.amount;
      running = opening;
    } else if (!to || day(m) <= to) {
      running += m.amount;
      rows.push({ ...m, running });
    }
  }
  return { opening, rows, closing: running };
}

function csvCell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

function statementCsv(currency: string, statement: ReturnType<typeof statementOf>): string {
  const digits = new Intl.NumberFormat('en-IN', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  const minor = (n: number) => (n / 10 ** digits).toFixed(digits);
  const lines = [['date', 'type', 'document', 'amount', 'balance'].join(',')];
  lines.push(['', 'opening_balance', '', '', minor(statement.opening)].join(','));
  for (const r of statement.rows)
    lines.push([r.created_at, r.type, csvCell(r.document.number ?? r.document.type), minor(r.amount), minor(r.running)].join(','));
  lines.push(['', 'closing_balance', '', '', minor(statement.closing)].join(','));
  return `# ${currency}\n${lines.join('\n')}\n`;
}

export function CustomerStatement({ customerId }: { customerId: string }) {
  const balance = useLoad(async () => unwrap(await kosh.GET('/v1/customers/{id}/balance', { params: { path: { id: customerId } } })).data, [customerId]);
  const currencies = balance.data?.balances.map((b) => b.currency) ?? [];
  const [chosen, setChosen] = useState('');
  const currency = chosen || currencies[0] || 'INR';
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const movements = useLoad(() => loadMovements(customerId, currency), [customerId, currency]);
  const statement = movements.data ? statementOf(movements.data, from, to) : null;
  const href = statement ? `data:text/csv;charset=utf-8,${encodeURIComponent(statementCsv(currency, statement))}` : undefined;
  const columns: Column<StatementRow>[] = [
    { header: 'Date', cell: (r) => dateTime(r.created_at) },
    { header: 'Movement', cell: (r) => r.type.replace(/_/g, ' ') },
    {
      header: 'Document',
      cell: (r) => (r.document.type === 'invoice' ? <InvoiceNumber id={r.document.id} /> : `${r.document.type.replace(/_/g, ' ')} ${r.document.number ?? ''}`),
    },
    { header: 'Amount', cell: (r) => money(r.amount, r.currency), numeric: true },
    { header: 'Balance', cell: (r) => money(r.running, r.currency), numeric: true },
  ];
  return (
    <section className="card" aria-labelledby="statement-heading">
      <h2 id="statement-heading">Balance statement</h2>
      <ErrorNote error={balance.error ?? movements.error} />
      <div className="filters">
        {currencies.length > 1 ? (
          <div className="field inline">
            <label htmlFor="statement-currency">Currency</label>
            <select id="statement-currency" value={currency} onChange={(e) => setChosen(e.target.value)}>
              {currencies.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </div>
        ) : null}
        <div className="field inline">
          <label htmlFor="statement-from">From</label>
          <input id="statement-from" type="date" value={from} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field inline">
          <label htmlFor="statement-to">To</label>
          <input id="statement-to" type="date" value={to} onChange={(e) => setTo(e.target.value)} />
        </div>
      </div>
      {statement ? (
        <>
          <p data-testid="statement-opening">Opening balance: {money(statement.opening, currency)}</p>
          <Table caption="Balance movements" columns={columns} rows={statement.rows} />
          <p data-testid="statement-closing">
            <strong>Closing balance: {money(statement.closing, currency)}</strong>
          </p>
          <a href={href} download={`balance-statement-${currency}.csv`}>
            Download the statement (CSV)
          </a>
        </>
      ) : (
        <Loading />
      )}
    </section>
  );
}
