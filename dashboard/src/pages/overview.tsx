/** MRR and revenue charts (analytics, revenue recognition), outstanding and overdue (invoice aging). */
import { can, kosh, loadDeployment, unwrap } from '../api.ts';
import { count, money } from '../format.ts';
import { BarChart, ErrorNote, Link, Loading, PageTitle, useLoad, useMe } from '../ui.tsx';

function monthsBack(n: number): { month: string; start: string } {
  const now = new Date(Date.now());
  const first = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - n, 1));
  return { month: first.toISOString().slice(0, 7), start: first.toISOString() };
}

const shortMonth = (month: string) =>
  new Intl.DateTimeFormat('en-IN', { month: 'short', timeZone: 'UTC' }).format(new Date(`${month.slice(0, 7)}-01T00:00:00Z`));

type Step = { done: boolean; label: string; detail: string; to: string; action: string };

/**
 * The first steps for a new tenant, each ticked from real data and linking to its form; the list
 * goes away once every step is done.
 */
function Checklist() {
  const { me } = useMe();
  const { data } = useLoad(async () => {
    const [entities, plans, gateways, invoices, deployment] = await Promise.all([
      kosh.GET('/v1/entities', { params: { query: { limit: 100 } } }).then(unwrap),
      kosh.GET('/v1/plans', { params: { query: { limit: 1 } } }).then(unwrap),
      kosh.GET('/v1/gateway-connections').then(unwrap),
      kosh.GET('/v1/invoices', { params: { query: { limit: 1 } } }).then(unwrap),
      loadDeployment(),
    ]);
    const primary = entities.data.find((e) => e.is_primary) ?? entities.data[0];
    const steps: Step[] = [
      {
        done: Boolean(primary?.gstin && primary.address?.line1 && primary.address.city),
        label: 'Your business: address and GSTIN',
        detail: 'Printed on every invoice (Rule 46); the state decides CGST+SGST or IGST.',
        to: '/settings/entities?edit=primary',
        action: 'Edit the entity',
      },
      { done: plans.total_count > 0, label: 'A plan', detail: 'What you sell and how often it bills.', to: '/plans?new=1', action: 'Create a plan' },
      {
        done: gateways.data.length > 0,
        label: 'A payment gateway',
        detail: 'Razorpay or Stripe (the test gateway in test mode) to take payments online.',
        to: '/settings/gateways',
        action: 'Connect a gateway',
      },
      {
        done: deployment.mail_configured,
        label: 'E-mail',
        detail: deployment.mail_configured
          ? 'Invoices and reminders go out by e-mail.'
          : 'Set SMTP_URL (and MAIL_FROM) where Kosh runs, then restart it; until then nothing is e-mailed.',
        to: '/settings/email',
        action: 'E-mail settings',
      },
      {
        done: invoices.total_count > 0,
        label: 'A first invoice',
        detail: 'Subscribe a customer to a plan: the first invoice is issued at once.',
        to: '/subscriptions?new=1',
        action: 'New subscription',
      },
    ];
    return steps;
  }, []);
  if (!data || data.every((s) => s.done) || !can(me, 'money')) return null;
  const left = data.filter((s) => !s.done).length;
  return (
    <section className="card checklist" aria-labelledby="checklist-title">
      <h2 id="checklist-title">
        Set up billing ({data.length - left} of {data.length} done)
      </h2>
      <ol>
        {data.map((step) => (
          <li key={step.label} data-done={step.done}>
            <span className={step.done ? 'tick done' : 'tick'} aria-hidden="true">
              {step.done ? '✓' : '○'}
            </span>
            <strong>{step.label}</strong>
            <span className="sr-only">{step.done ? ' (done)' : ' (to do)'}</span> — <span className="muted">{step.detail}</span>{' '}
            {step.done ? null : <Link to={step.to}>{step.action}</Link>}
          </li>
        ))}
      </ol>
    </section>
  );
}

/**
 * Documents the IRP will refuse soon (decision 0363: 30 days from their date for an entity of ₹10
 * crore or more), not yet reported: shown only when there are some.
 */
function IrpDeadlines() {
  const { data } = useLoad(() => kosh.GET('/v1/einvoices/report-due', { params: { query: { days: 7 } } }).then(unwrap), []);
  if (!data || data.data.length === 0) return null;
  return (
    <section className="card notice" aria-labelledby="irp-due-title">
      <h2 id="irp-due-title">E-invoices to report to the IRP</h2>
      <p className="muted">The IRP refuses these after their last day. Fix the error shown on each and retry its e-invoice.</p>
      <div className="table-wrap">
        <table>
          <caption className="sr-only">Documents not yet reported to the IRP, soonest limit first</caption>
          <thead>
            <tr>
              <th scope="col">Document</th>
              <th scope="col">Buyer</th>
              <th scope="col">Status</th>
              <th scope="col">Last day</th>
              <th scope="col" className="num">
                Days left
              </th>
            </tr>
          </thead>
          <tbody>
            {data.data.map((d) => (
              <tr key={d.einvoice.id}>
                <th scope="row">
                  <Link to={`/${d.einvoice.document_type === 'invoice' ? 'invoices' : 'credit-notes'}/${d.einvoice.document_id}`}>
                    {d.document_number ?? (d.einvoice.document_type === 'invoice' ? 'Invoice' : 'Credit note')}
                  </Link>
                </th>
                <td>{d.buyer_name ?? '—'}</td>
                <td>{d.einvoice.status === 'failed' ? `Failed: ${d.einvoice.errors[0]?.message ?? 'see the document'}` : 'Waiting to be sent'}</td>
                <td>{d.einvoice.irn_report_by}</td>
                <td className="num">{d.days_left === 0 ? 'Today' : count(d.days_left)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}

export function Overview() {
  const from = monthsBack(11);
  const { data, error, loading } = useLoad(async () => {
    const [mrr, revenue, aging] = await Promise.all([
      kosh.GET('/v1/analytics/mrr', { params: { query: { from: from.month } } }).then(unwrap),
      kosh.GET('/v1/finance/revenue', { params: { query: { from: from.start } } }).then(unwrap),
      kosh.GET('/v1/analytics/invoice-aging', {}).then(unwrap),
    ]);
    return { mrr: mrr.data, revenue: revenue.data, aging: 'buckets' in aging.data ? aging.data : null };
  }, []);
  if (loading && !data) return <Loading />;
  if (!data) return <ErrorNote error={error} />;
  const { mrr, revenue, aging } = data;
  const lastMrr = mrr.months.at(-1);
  const thisMonth = revenue.months.at(-1);
  const overdue = aging ? aging.buckets.filter((b) => b.bucket !== 'current') : [];
  const overdueAmount = overdue.reduce((sum, b) => sum + b.amount, 0);
  const overdueCount = overdue.reduce((sum, b) => sum + b.count, 0);
  return (
    <>
      <PageTitle>Overview</PageTitle>
      <Checklist />
      <IrpDeadlines />
      <section className="kpis" aria-label="Key figures">
        <div className="kpi">
          <h2>MRR</h2>
          <p className="figure">{money(lastMrr?.mrr ?? 0, mrr.currency)}</p>
          <p className="muted">{count(lastMrr?.subscriptions ?? 0)} subscriptions</p>
        </div>
        <div className="kpi">
          <h2>Revenue this month</h2>
          <p className="figure">{money(thisMonth?.recognized ?? 0, revenue.currency)}</p>
          <p className="muted">{money(revenue.deferred_total, revenue.currency)} deferred</p>
        </div>
        <div className="kpi">
          <h2>Outstanding</h2>
          <p className="figure">{money(aging?.total ?? 0, aging?.currency ?? mrr.currency)}</p>
          <p className="muted">
            <Link to="/invoices?status=open">Open invoices</Link>
          </p>
        </div>
        <div className="kpi">
          <h2>Overdue</h2>
          <p className="figure">{money(overdueAmount, aging?.currency ?? mrr.currency)}</p>
          <p className="muted">{count(overdueCount)} invoices past due</p>
        </div>
      </section>
      <div className="charts">
        <BarChart
          title={`MRR by month (${mrr.currency})`}
          points={mrr.months.map((m) => ({ label: shortMonth(m.month), value: m.mrr }))}
          format={(v) => money(v, mrr.currency)}
        />
        <BarChart
          title={`Recognized revenue by month (${revenue.currency})`}
          points={revenue.months.map((m) => ({ label: shortMonth(m.month), value: m.recognized }))}
          format={(v) => money(v, revenue.currency)}
        />
      </div>
      {aging ? (
        <section className="card">
          <h2>Invoice aging</h2>
          <div className="table-wrap">
            <table>
              <caption className="sr-only">Invoice aging by bucket</caption>
              <thead>
                <tr>
                  <th scope="col">Days past due</th>
                  <th scope="col" className="num">
                    Invoices
                  </th>
                  <th scope="col" className="num">
                    Amount due
                  </th>
                </tr>
              </thead>
              <tbody>
                {aging.buckets.map((b) => (
                  <tr key={b.bucket}>
                    <th scope="row">{b.bucket === 'current' ? 'Not yet due' : b.bucket.replace('_plus', '+').replace('_', '–')}</th>
                    <td className="num">{count(b.count)}</td>
                    <td className="num">{money(b.amount, aging.currency)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </section>
      ) : null}
    </>
  );
}
