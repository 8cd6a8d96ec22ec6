/** Collecting an invoice: a customer's payment methods, "charge now", and TDS certified after the payment. */
import { useState } from 'react';
import { can, idem, kosh, loadDeployment, unwrap, type Schema } from '../api.ts';
import { dateTime, money } from '../format.ts';
import { ActionButton, ActionForm, Badge, ErrorNote, Field, Loading, str, Table, useLoad, useMe, type Column } from '../ui.tsx';
import { amountIn } from './billing.tsx';

type Method = Schema<'PaymentMethod'>;

export function methodLabel(m: Method): string {
  const what = m.type === 'upi_mandate' ? 'UPI AutoPay mandate' : `${m.brand ?? 'Card'} ending ${m.last4 ?? '····'}`;
  return `${what} (${m.gateway})${m.is_default ? ', default' : ''}`;
}

async function loadMethods(customerId: string): Promise<Method[]> {
  return unwrap(await kosh.GET('/v1/customers/{id}/payment-methods', { params: { path: { id: customerId } } })).data;
}

/** The test gateway's cards (test mode only): a person picks a behaviour, never types a token. */
const TEST_CARDS: [string, string][] = [
  ['tok_visa', 'Visa that pays'],
  ['tok_chargeDeclined', 'Card that is declined'],
];

export function CustomerPaymentMethods({ customerId }: { customerId: string }) {
  const { me } = useMe();
  const methods = useLoad(() => loadMethods(customerId), [customerId]);
  const deployment = useLoad(loadDeployment, []);
  const [note, setNote] = useState<string | null>(null);
  const done = (text: string) => {
    setNote(text);
    methods.reload();
  };
  const columns: Column<Method>[] = [
    { header: 'Method', cell: (m) => methodLabel(m) },
    {
      header: 'Mandate',
      cell: (m) =>
        m.mandate
          ? `up to ${money(m.mandate.max_amount)} ${m.mandate.frequency ?? ''}${m.mandate.valid_until ? `, until ${dateTime(m.mandate.valid_until)}` : ''}`
          : '—',
    },
    { header: 'Added', cell: (m) => dateTime(m.created_at) },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (m) => (
        <>
          {!m.is_default ? (
            <ActionButton
              label={`Make ${m.last4 ?? m.type} the default`}
              run={async () => {
                unwrap(await kosh.POST('/v1/customers/{id}/payment-methods/{pm_id}/default', { params: { path: { id: customerId, pm_id: m.id } } }));
                done('Default payment method changed.');
              }}
            />
          ) : null}
          <ActionButton
            label={`Remove ${m.last4 ?? m.type}`}
            danger
            confirm="Remove this payment method? Automatic charges stop using it."
            run={async () => {
              unwrap(await kosh.DELETE('/v1/customers/{id}/payment-methods/{pm_id}', { params: { path: { id: customerId, pm_id: m.id } } }));
              done('Payment method removed.');
            }}
          />
        </>
      ),
    });
  return (
    <section className="card" aria-labelledby="methods-heading">
      <h2 id="methods-heading">Payment methods</h2>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <ErrorNote error={methods.error} />
      {methods.data ? <Table caption="Payment methods" columns={columns} rows={methods.data} /> : <Loading />}
      <p className="muted">Customers add cards and UPI AutoPay mandates in the portal (Portal link above) or on an invoice&apos;s checkout page.</p>
      {can(me, 'money') && deployment.data?.mode === 'test' ? (
        <ActionForm
          title="Add a test card"
          submit="Add test card"
          onSubmit={async (form, key) => {
            const added = unwrap(
              await kosh.POST('/v1/customers/{id}/payment-methods', {
                params: { path: { id: customerId } },
                body: { token: str(form, 'test_card') ?? 'tok_visa', set_default: true },
                ...idem(key),
              }),
            );
            methods.reload();
            return `${methodLabel(added.data)} added.`;
          }}
        >
          <Field label="Test card" name="test_card" options={TEST_CARDS} hint="Test mode: the built-in test gateway's cards" />
        </ActionForm>
      ) : null}
    </section>
  );
}

const TDS_SECTIONS: [string, string][] = [
  ['', 'Not stated'],
  ['1026', '1026 — fees for technical services (s.393, from 1 April 2026)'],
  ['1027', '1027 — fees for professional services (s.393, from 1 April 2026)'],
  ['194J(b)', '194J(b) — professional fees (before 1 April 2026)'],
  ['194J(a)', '194J(a) — technical services (before 1 April 2026)'],
  ['194C', '194C — contracts (before 1 April 2026)'],
];

/** An open invoice charged now to one of the customer's saved methods, its attempts, and TDS certified later. */
export function InvoiceCollect({ invoice, onDone }: { invoice: Schema<'Invoice'>; onDone: (text: string) => void }) {
  const { me } = useMe();
  const methods = useLoad(() => loadMethods(invoice.customer_id), [invoice.customer_id]);
  const attempts = useLoad(
    async () => unwrap(await kosh.GET('/v1/invoices/{id}/payment-attempts', { params: { path: { id: invoice.id } } })).data,
    [invoice.id, invoice.amount_paid, invoice.status],
  );
  if (!can(me, 'money')) return null;
  const list = methods.data ?? [];
  const money$ = (n: number) => money(n, invoice.currency);
  return (
    <>
      <div className="grid2">
        {invoice.status === 'open' && list.length ? (
          <ActionForm
            title="Charge now"
            submit={`Charge ${money$(invoice.amount_due)}`}
            onSubmit={async (form, key) => {
              const methodId = str(form, 'payment_method_id');
              const after = unwrap(
                await kosh.POST('/v1/invoices/{id}/pay', {
                  params: { path: { id: invoice.id } },
                  body: methodId ? { payment_method_id: methodId } : {},
                  ...idem(key),
                }),
              ).data;
              attempts.reload();
              // A declined charge answers 200 with the gateway's reason.
              if (after.last_payment_error) throw new Error(`The charge failed: ${after.last_payment_error.message}`);
              onDone(
                after.status === 'paid'
                  ? `Charged ${money$(invoice.amount_due)}.`
                  : `Charge of ${money$(invoice.amount_due)} started (the gateway confirms it).`,
              );
            }}
          >
            <Field label="Payment method" name="payment_method_id" options={list.map((m) => [m.id, methodLabel(m)])} />
          </ActionForm>
        ) : null}
        {invoice.status === 'open' || invoice.status === 'paid' ? (
          <ActionForm
            title="Record a TDS certificate"
            submit="Record TDS"
            onSubmit={async (form, key) => {
              const amount = amountIn(form, 'tds_certified', 'The TDS amount', invoice.currency);
              if (!amount) throw new Error('The TDS amount is required.');
              const section = str(form, 'section');
              unwrap(
                await kosh.POST('/v1/invoices/{id}/tds', {
                  params: { path: { id: invoice.id } },
                  body: {
                    tds_amount: amount,
                    ...(str(form, 'certificate_number') ? { certificate_number: str(form, 'certificate_number') } : {}),
                    ...(section ? { section } : {}),
                    ...(str(form, 'deducted_on') ? { deducted_on: str(form, 'deducted_on') } : {}),
                  },
                  ...idem(key),
                }),
              );
              onDone(`TDS of ${money$(amount)} recorded.`);
            }}
          >
            <Field label="TDS amount" name="tds_certified" required inputMode="decimal" hint="As on the certificate (Form 131; Form 16A before 1 April 2026)" />
            <Field label="Certificate number" name="certificate_number" />
            <Field label="Section or payment code" name="section" options={TDS_SECTIONS} />
            <Field label="Deducted on" name="deducted_on" type="date" hint="Empty: the invoice's issue date" />
          </ActionForm>
        ) : null}
      </div>
      {attempts.data?.length ? (
        <section className="card">
          <h2>Payment attempts</h2>
          <Table
            caption="Payment attempts"
            columns={[
              { header: 'When', cell: (a: Schema<'PaymentAttempt'>) => dateTime(a.created_at) },
              { header: 'Amount', cell: (a) => money$(a.amount), numeric: true },
              { header: 'Gateway', cell: (a) => a.gateway },
              { header: 'Status', cell: (a) => <Badge>{a.status}</Badge> },
              { header: 'Failure', cell: (a) => a.failure_message ?? '—' },
            ]}
            rows={attempts.data}
          />
        </section>
      ) : null}
    </>
  );
}
