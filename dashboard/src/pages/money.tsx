/** A customer's credit (grants, balance, refunds of credit) and refunds of a payment by invoice line. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { date, money } from '../format.ts';
import { ActionButton, ActionForm, Badge, ErrorNote, Field, Link, Loading, str, Table, useLoad, useMe, type Column } from '../ui.tsx';
import { amountIn, endOfDayInIndia, valueText } from './billing.tsx';

const REASONS: [string, string][] = [
  ['Requested by the customer', 'Requested by the customer'],
  ['Duplicate payment', 'Duplicate payment'],
  ['Service not delivered', 'Service not delivered'],
  ['Overcharged', 'Overcharged'],
];

// ---------------------------------------------------------------- refund by line

function refundState(status: string): string {
  if (status === 'succeeded') return 'made';
  return status === 'failed' ? 'failed' : 'started (the gateway or your bank confirms it)';
}

/**
 * Refund a payment: an amount (empty: all that is left), or amounts on chosen lines of its invoice
 * (the refund's credit note then credits those lines, each at its own GST rate).
 */
export function RefundForm({
  payments,
  invoice,
  onDone,
}: {
  /** The payments that can be refunded (one: no choice shown). */
  payments: Schema<'OfflinePayment'>[];
  invoice: Schema<'Invoice'> | undefined;
  onDone: (text: string) => void;
}) {
  const [paymentId, setPaymentId] = useState(payments[0]?.id ?? '');
  const payment = payments.find((p) => p.id === paymentId) ?? payments[0];
  if (!payment) return null;
  const currency = payment.currency;
  const lines = invoice?.lines ?? [];
  const left = payment.amount - payment.amount_refunded;
  return (
    <ActionForm
      title="Refund"
      submit="Refund"
      onSubmit={async (form, key) => {
        const chosen = lines
          .map((l, i) => ({ invoice_line_id: l.id, amount: amountIn(form, `refund_line_${l.id}`, `Line ${i + 1}`, currency) }))
          .filter((l): l is { invoice_line_id: string; amount: number } => l.amount !== undefined && l.amount > 0);
        const amount = amountIn(form, 'refund_amount', 'The amount', currency);
        if (chosen.length && amount !== undefined) throw new Error('Give either an amount or amounts on lines, not both.');
        const refund = unwrap(
          await kosh.POST('/v1/payments/{id}/refunds', {
            params: { path: { id: payment.id } },
            body: {
              reason: str(form, 'reason') ?? 'Requested by the customer',
              ...(chosen.length ? { lines: chosen } : amount !== undefined ? { amount } : {}),
            },
            ...idem(key),
          }),
        );
        onDone(`Refund of ${money(refund.data.amount, refund.data.currency)} ${refundState(refund.data.status)}.`);
      }}
    >
      {payments.length > 1 ? (
        <div className="field">
          <label htmlFor="refund-payment">Payment</label>
          <select id="refund-payment" value={payment.id} onChange={(e) => setPaymentId(e.target.value)}>
            {payments.map((p) => (
              <option key={p.id} value={p.id}>
                {p.reference_number || p.payment_type.replace(/_/g, ' ')} — {money(p.amount - p.amount_refunded, p.currency)} left
              </option>
            ))}
          </select>
        </div>
      ) : null}
      <Field label="Amount (empty: all that is left)" name="refund_amount" inputMode="decimal" hint={`${money(left, currency)} left to refund`} />
      {lines.length ? (
        <fieldset className="lines">
          <legend>Or refund on lines (with GST)</legend>
          {lines.map((l) => (
            <Field
              key={l.id}
              label={`${l.description} (${l.hsn_code})`}
              name={`refund_line_${l.id}`}
              inputMode="decimal"
              hint={`Line total ${money(l.total, currency)}`}
            />
          ))}
        </fieldset>
      ) : null}
      <Field label="Refund reason" name="reason" options={REASONS} />
    </ActionForm>
  );
}

// ---------------------------------------------------------------- a customer's credit

type Grant = Schema<'CreditGrant'>;

export function CustomerCredit({ customerId }: { customerId: string }) {
  const { me } = useMe();
  const [note, setNote] = useState<string | null>(null);
  const grants = useLoad(async () => unwrap(await kosh.GET('/v1/customers/{id}/credit-grants', { params: { path: { id: customerId } } })), [customerId]);
  const balance = useLoad(async () => unwrap(await kosh.GET('/v1/customers/{id}/balance', { params: { path: { id: customerId } } })).data, [customerId]);
  const notes = useLoad(
    async () =>
      unwrap(await kosh.GET('/v1/credit-notes', { params: { query: { customer_id: customerId, status: 'issued', limit: 100 } } })).data.filter(
        (n) => n.balance > 0,
      ),
    [customerId],
  );
  const entitlements = useLoad(
    async () => unwrap(await kosh.GET('/v1/customers/{id}/entitlements', { params: { path: { id: customerId } } })).data,
    [customerId],
  );
  const done = (text: string) => {
    setNote(text);
    grants.reload();
    balance.reload();
    notes.reload();
  };
  const columns: Column<Grant>[] = [
    { header: 'Grant', cell: (g) => g.name ?? `${g.category} credit` },
    { header: 'Category', cell: (g) => g.category },
    { header: 'Status', cell: (g) => <Badge>{g.status}</Badge> },
    { header: 'Amount', cell: (g) => money(g.amount, g.currency), numeric: true },
    { header: 'Remaining', cell: (g) => money(g.remaining, g.currency), numeric: true },
    { header: 'Expires', cell: (g) => date(g.expires_at) },
    {
      header: 'Top-up invoice',
      cell: (g) => (g.invoice_id ? <Link to={`/invoices/${g.invoice_id}`}>View the invoice</Link> : '—'),
    },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (g) =>
        g.status === 'active' || g.status === 'pending' ? (
          <ActionButton
            label={`Void ${g.name ?? 'grant'}`}
            danger
            confirm="Void what is left of this grant?"
            run={async () => {
              unwrap(await kosh.POST('/v1/credit-grants/{id}/void', { params: { path: { id: g.id } } }));
              done('Grant voided.');
            }}
          />
        ) : (
          '—'
        ),
    });
  const creditNotes = notes.data ?? [];
  return (
    <section className="card">
      <h2>Credit</h2>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <ErrorNote error={grants.error ?? balance.error ?? notes.error} />
      {balance.data ? (
        <Table
          caption="Balance by currency"
          rowKey={(b) => b.currency}
          columns={[
            { header: 'Currency', cell: (b: Schema<'CustomerBalance'>['balances'][number]) => b.currency },
            { header: 'Available', cell: (b) => money(b.available, b.currency), numeric: true },
            { header: 'Credit notes', cell: (b) => money(b.sources.credit_notes ?? 0, b.currency), numeric: true },
            { header: 'Advances', cell: (b) => money(b.sources.advances ?? 0, b.currency), numeric: true },
            { header: 'Prepaid credit', cell: (b) => money(b.sources.prepaid_credit ?? 0, b.currency), numeric: true },
            { header: 'Promotional credit', cell: (b) => money(b.sources.promotional_credit ?? 0, b.currency), numeric: true },
          ]}
          rows={balance.data.balances}
        />
      ) : null}
      <h3>Credit grants</h3>
      {grants.data ? <Table caption="Credit grants" columns={columns} rows={grants.data.data} /> : <Loading />}
      {can(me, 'money') ? (
        <div className="grid2">
          <ActionForm
            title="Grant credit"
            submit="Grant credit"
            onSubmit={async (form, key) => {
              const currency = str(form, 'currency') ?? 'INR';
              const amount = amountIn(form, 'grant_amount', 'The amount', currency);
              if (!amount) throw new Error('The amount is required.');
              const category = (str(form, 'category') ?? 'promotional') as 'promotional' | 'paid';
              const created = unwrap(
                await kosh.POST('/v1/customers/{id}/credit-grants', {
                  params: { path: { id: customerId } },
                  body: {
                    amount,
                    currency,
                    category,
                    ...(str(form, 'grant_name') ? { name: str(form, 'grant_name') } : {}),
                    ...(str(form, 'expires_on') ? { expires_at: endOfDayInIndia(str(form, 'expires_on')) } : {}),
                  },
                  ...idem(key),
                }),
              );
              done(
                created.data.category === 'paid'
                  ? `Paid credit of ${money(created.data.amount, created.data.currency)}: spendable once its top-up invoice is paid.`
                  : `Promotional credit of ${money(created.data.amount, created.data.currency)} granted.`,
              );
            }}
          >
            <Field label="Amount" name="grant_amount" required inputMode="decimal" hint="A paid grant: the value bought, GST is charged on top" />
            <Field
              label="Currency"
              name="currency"
              defaultValue="INR"
              options={[
                ['INR', 'INR'],
                ['USD', 'USD'],
              ]}
            />
            <Field
              label="Category"
              name="category"
              options={[
                ['promotional', 'Promotional (free)'],
                ['paid', 'Paid (a top-up invoice is issued)'],
              ]}
            />
            <Field label="Name" name="grant_name" hint="e.g. Launch credit" />
            <Field label="Expires on" name="expires_on" type="date" hint="Empty: never" />
          </ActionForm>
          {creditNotes.length ? (
            <ActionForm
              title="Refund credit balance"
              submit="Refund credit"
              onSubmit={async (form, key) => {
                const noteId = str(form, 'credit_note_id') ?? creditNotes[0]!.id;
                const cn = creditNotes.find((n) => n.id === noteId)!;
                const amount = amountIn(form, 'credit_refund_amount', 'The amount', cn.currency);
                if (!amount) throw new Error('The amount is required.');
                const refund = unwrap(
                  await kosh.POST('/v1/credit-notes/{id}/refunds', {
                    params: { path: { id: cn.id } },
                    body: { amount, reason: str(form, 'reason') ?? '' },
                    ...idem(key),
                  }),
                );
                done(`Refund of ${money(refund.data.amount, refund.data.currency)} from ${cn.number ?? 'the credit note'} ${refundState(refund.data.status)}.`);
              }}
            >
              <Field
                label="From the credit note"
                name="credit_note_id"
                options={creditNotes.map((n) => [n.id, `${n.number ?? 'credit note'} — ${money(n.balance, n.currency)} unspent`])}
              />
              <Field label="Amount" name="credit_refund_amount" required inputMode="decimal" />
              <Field label="Refund reason" name="reason" options={REASONS} />
            </ActionForm>
          ) : null}
        </div>
      ) : null}
      {entitlements.data && Object.keys(entitlements.data.features).length ? (
        <>
          <h3>Entitlements</h3>
          {entitlements.data.blocked ? <p className="error">Blocked ({entitlements.data.blocked_reason?.replace('_', ' ')}).</p> : null}
          <Table
            caption="Entitlements of this customer"
            rowKey={([k]) => k}
            columns={[
              { header: 'Feature', cell: ([k]: [string, boolean | number | string | null]) => <code>{k}</code> },
              { header: 'Value', cell: ([, v]) => valueText(v) },
            ]}
            rows={Object.entries(entitlements.data.features)}
          />
        </>
      ) : null}
    </section>
  );
}
