/** Dunning, reconciliation, GST returns, analytics and the audit log. */
import { useState } from 'react';
import { call, can, kosh, unwrap, type ListPage, type Schema } from '../api.ts';
import { count, dateTime, money } from '../format.ts';
import { CustomerName, InvoiceNumber, Picker, PlanName } from '../pickers.tsx';
import { ActionButton, BarChart, Badge, ErrorNote, Field, Fields, Loading, PagedTable, PageTitle, Table, useLoad, useMe, type Column } from '../ui.tsx';

// ---------------------------------------------------------------- dunning

export function Dunning() {
  const [status, setStatus] = useState('');
  const campaigns = useLoad(async () => unwrap(await kosh.GET('/v1/dunning-campaigns')).data, []);
  const columns: Column<Schema<'DunningExecution'>>[] = [
    { header: 'Invoice', cell: (e) => <InvoiceNumber id={e.invoice_id} /> },
    { header: 'Customer', cell: (e) => <CustomerName id={e.customer_id} /> },
    { header: 'Status', cell: (e) => <Badge>{e.status}</Badge> },
    { header: 'Steps done', cell: (e) => e.steps_done, numeric: true },
    { header: 'Next step', cell: (e) => dateTime(e.next_step_at) },
    { header: 'Started', cell: (e) => dateTime(e.started_at) },
  ];
  return (
    <>
      <PageTitle>Dunning</PageTitle>
      <section className="card">
        <h2>Campaigns</h2>
        <ErrorNote error={campaigns.error} />
        {campaigns.data ? (
          <Table
            caption="Dunning campaigns"
            columns={[
              { header: 'Name', cell: (c: Schema<'DunningCampaign'>) => c.name },
              { header: 'Trigger', cell: (c) => c.trigger_event.replace(/_/g, ' ') },
              { header: 'Steps', cell: (c) => c.steps.length, numeric: true },
              { header: 'Active runs', cell: (c) => c.active_executions, numeric: true },
              { header: 'Active', cell: (c) => (c.is_active ? 'yes' : 'no') },
            ]}
            rows={campaigns.data}
          />
        ) : (
          <Loading />
        )}
      </section>
      <section className="card">
        <h2>Executions</h2>
        <div className="filters">
          <div className="field inline">
            <label htmlFor="dunning-status">Status</label>
            <select id="dunning-status" value={status} onChange={(e) => setStatus(e.target.value)}>
              <option value="">Any</option>
              {['active', 'recovered', 'exhausted', 'canceled'].map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </div>
        </div>
        <PagedTable
          caption="Dunning executions"
          columns={columns}
          filterKey={status}
          load={async (page, limit) =>
            unwrap(await kosh.GET('/v1/dunning-executions', { params: { query: { page, limit, ...(status ? { status: status as 'active' } : {}) } } }))
          }
        />
      </section>
    </>
  );
}

// ---------------------------------------------------------------- reconciliation

export function Reconciliation() {
  const { me } = useMe();
  const [opened, setOpened] = useState<string | null>(null);
  const [tick, setTick] = useState(0);
  const run = useLoad(
    async () => (opened ? unwrap(await kosh.GET('/v1/finance/reconciliation/runs/{id}', { params: { path: { id: opened } } })).data : null),
    [opened],
  );
  const columns: Column<Schema<'ReconciliationRun'>>[] = [
    {
      header: 'Run',
      cell: (r) => (
        <button type="button" className="link" onClick={() => setOpened(r.id)}>
          {dateTime(r.run_at)}
        </button>
      ),
    },
    { header: 'Status', cell: (r) => <Badge>{r.status}</Badge> },
    { header: 'Invoices checked', cell: (r) => count(r.invoices_checked), numeric: true },
    { header: 'Discrepancies', cell: (r) => count(r.total_discrepancies), numeric: true },
  ];
  return (
    <>
      <PageTitle
        actions={
          can(me, 'money') ? (
            <ActionButton
              label="Run reconciliation"
              run={async () => {
                const started = unwrap(await kosh.POST('/v1/finance/reconciliation/runs', { body: {} }));
                setOpened(started.data.id);
                setTick((n) => n + 1);
              }}
            />
          ) : null
        }
      >
        Reconciliation
      </PageTitle>
      <PagedTable
        caption="Reconciliation runs"
        columns={columns}
        filterKey={String(tick)}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/finance/reconciliation/runs', { params: { query: { page, limit } } }))}
      />
      {run.data ? (
        <section className="card">
          <h2>Run of {dateTime(run.data.run_at)}</h2>
          <Fields
            items={[
              ['Status', run.data.status],
              ['Invoices checked', count(run.data.invoices_checked)],
              ['Ledger compared', run.data.tb_compared ? 'yes' : 'no'],
              ['Discrepancies', count(run.data.total_discrepancies)],
            ]}
          />
          <Table
            caption="Discrepancies"
            rowKey={(_d, i) => String(i)}
            columns={[
              { header: 'Type', cell: (d: Schema<'ReconciliationDiscrepancy'>) => d.type.replace(/_/g, ' ') },
              { header: 'Invoice', cell: (d) => <InvoiceNumber id={d.invoice_id} /> },
              { header: 'Expected', cell: (d) => money(d.expected_amount, d.currency ?? 'INR'), numeric: true },
              { header: 'Found', cell: (d) => money(d.found_amount, d.currency ?? 'INR'), numeric: true },
              { header: 'Detail', cell: (d) => d.detail },
            ]}
            rows={run.data.discrepancies ?? []}
          />
        </section>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- GST returns

function lastMonthPeriod(): string {
  const now = new Date(Date.now());
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1));
  return `${String(d.getUTCMonth() + 1).padStart(2, '0')}${d.getUTCFullYear()}`;
}

export function GstReturns() {
  const entities = useLoad(async () => unwrap(await kosh.GET('/v1/entities', { params: { query: { limit: 100 } } })).data, []);
  const [entityId, setEntityId] = useState('');
  const [period, setPeriod] = useState(lastMonthPeriod());
  const chosen = entityId || entities.data?.find((e) => e.is_primary)?.id || entities.data?.[0]?.id || '';
  const valid = /^(0[1-9]|1[0-2])20\d{2}$/.test(period) && chosen !== '';
  const returns = useLoad(async () => {
    if (!valid) return null;
    const query = { entity_id: chosen, period };
    const [gstr1, gstr3b] = await Promise.all([
      kosh.GET('/v1/gst/gstr1', { params: { query } }).then(unwrap),
      kosh.GET('/v1/gst/gstr3b', { params: { query } }).then(unwrap),
    ]);
    // JSON was asked for (the CSV form answers text).
    return { gstr1: (gstr1 as Exclude<typeof gstr1, string>).data, gstr3b: (gstr3b as Exclude<typeof gstr3b, string>).data };
  }, [chosen, period]);
  const rupees = (n: number) => new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR' }).format(n);
  return (
    <>
      <PageTitle>GST returns</PageTitle>
      <div className="filters">
        <div className="field inline">
          <label htmlFor="gst-entity">Entity</label>
          <select id="gst-entity" value={chosen} onChange={(e) => setEntityId(e.target.value)}>
            {(entities.data ?? []).map((e) => (
              <option key={e.id} value={e.id}>
                {e.name} {e.gstin ? `(${e.gstin})` : ''}
              </option>
            ))}
          </select>
        </div>
        <div className="field inline">
          <label htmlFor="gst-period">Period (MMYYYY)</label>
          <input id="gst-period" value={period} onChange={(e) => setPeriod(e.target.value.trim())} inputMode="numeric" pattern="(0[1-9]|1[0-2])20[0-9]{2}" />
        </div>
      </div>
      <ErrorNote error={returns.error} />
      {returns.data ? (
        <div className="grid2">
          <section className="card">
            <h2>GSTR-1</h2>
            <Fields
              items={[
                ['GSTIN', returns.data.gstr1.gstin],
                ['B2B invoices (recipients)', count(returns.data.gstr1.b2b.length)],
                ['B2C large', count(returns.data.gstr1.b2cl.length)],
                ['B2C small (rows)', count(returns.data.gstr1.b2cs.length)],
                ['Credit/debit notes (registered)', count(returns.data.gstr1.cdnr.length)],
                ['Exports', count(returns.data.gstr1.exp.length)],
              ]}
            />
            <a className="button" href={`/v1/gst/gstr1?entity_id=${chosen}&period=${period}&format=csv`}>
              Download CSV
            </a>
          </section>
          <section className="card">
            <h2>GSTR-3B</h2>
            <Fields
              items={[
                ['Taxable value', rupees(returns.data.gstr3b.sup_details.osup_det.txval)],
                ['IGST', rupees(returns.data.gstr3b.sup_details.osup_det.iamt)],
                ['CGST', rupees(returns.data.gstr3b.sup_details.osup_det.camt)],
                ['SGST', rupees(returns.data.gstr3b.sup_details.osup_det.samt)],
                ['Zero-rated value', rupees(returns.data.gstr3b.sup_details.osup_zero.txval)],
              ]}
            />
          </section>
        </div>
      ) : returns.loading && valid ? (
        <Loading />
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- analytics

export function Analytics() {
  const from = (() => {
    const now = new Date(Date.now());
    return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 11, 1)).toISOString().slice(0, 7);
  })();
  const { data, error } = useLoad(async () => {
    const [mrr, churn] = await Promise.all([
      kosh.GET('/v1/analytics/mrr', { params: { query: { from } } }).then(unwrap),
      kosh.GET('/v1/analytics/churn', { params: { query: { from } } }).then(unwrap),
    ]);
    return { mrr: mrr.data, churn: churn.data };
  }, [from]);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const pct = (n: number | null) => (n === null ? '—' : `${(n * 100).toFixed(1)}%`);
  return (
    <>
      <PageTitle>Analytics</PageTitle>
      <BarChart
        title={`MRR (${data.mrr.currency})`}
        points={data.mrr.months.map((m) => ({ label: m.month.slice(2), value: m.mrr }))}
        format={(v) => money(v, data.mrr.currency)}
      />
      <section className="card">
        <h2>Churn</h2>
        <Table
          caption="Churn by month"
          rowKey={(m) => m.month}
          columns={[
            { header: 'Month', cell: (m: Schema<'ChurnReport'>['months'][number]) => m.month },
            { header: 'Customers at start', cell: (m) => count(m.customers_start), numeric: true },
            { header: 'Churned', cell: (m) => count(m.customers_churned), numeric: true },
            { header: 'Logo churn', cell: (m) => pct(m.logo_churn_rate), numeric: true },
            { header: 'Churned MRR', cell: (m) => money(m.churned_mrr, data.churn.currency), numeric: true },
            { header: 'Expansion MRR', cell: (m) => money(m.expansion_mrr, data.churn.currency), numeric: true },
          ]}
          rows={data.churn.months}
        />
      </section>
    </>
  );
}

// ---------------------------------------------------------------- audit log

export type AuditEntry = {
  id: string;
  actor: { type: 'api_key' | 'user' | 'system' | 'customer'; id: string | null; label: string | null };
  action: string;
  object_type: string;
  object_id: string | null;
  changes: Record<string, { from: unknown; to: unknown }> | null;
  ip: string | null;
  request_id: string | null;
  created_at: string;
};

/** Object types a person filters the audit log by; those with a picker are chosen by name. */
const AUDIT_OBJECT_TYPES: [string, string][] = [
  ['customer', 'Customer'],
  ['invoice', 'Invoice'],
  ['plan', 'Plan'],
  ['subscription', 'Subscription'],
  ['credit_note', 'Credit note'],
  ['payment', 'Payment'],
  ['coupon', 'Coupon'],
  ['entity', 'Entity'],
  ['user', 'Operator'],
  ['api_key', 'API key'],
  ['settings', 'Settings'],
];
const PICKABLE = new Set(['customer', 'invoice', 'plan']);

/** The object an entry is about, by name where the dashboard can name it. */
function AuditObject({ a }: { a: AuditEntry }) {
  if (a.object_id && a.object_type === 'customer') return <CustomerName id={a.object_id} />;
  if (a.object_id && a.object_type === 'invoice') return <InvoiceNumber id={a.object_id} />;
  if (a.object_id && a.object_type === 'plan') return <PlanName id={a.object_id} />;
  return <>{`${(a.object_type ?? '').replace(/_/g, ' ')} ${a.object_id ? a.object_id.slice(-8) : ''}`}</>;
}

type Actor = { id: string; label: string };

/** Who can act: the operators and the API keys, by name (the audit log is an admin page; both lists are too). */
async function loadActors(): Promise<Actor[]> {
  const [users, keys] = await Promise.all([
    call<{ data: { id: string; email: string; name: string | null; role: string }[] }>('GET', '/v1/users?limit=100').catch(() => ({ data: [] })),
    kosh
      .GET('/v1/developer/keys')
      .then(unwrap)
      .catch(() => ({ data: [] })),
  ]);
  return [
    ...users.data.map((u) => ({ id: u.id, label: `${u.name ?? u.email} (${u.role})` })),
    ...(keys.data as { id: string; name?: string | null; prefix?: string | null }[]).map((k) => ({
      id: k.id,
      label: `API key ${k.name ?? k.prefix ?? ''}`.trim(),
    })),
  ];
}

export function AuditLog() {
  const [filters, setFilters] = useState({ action: '', object_type: '', object_id: '', actor_id: '' });
  const [objectType, setObjectType] = useState('');
  const actors = useLoad(loadActors, []);
  const key = JSON.stringify(filters);
  const columns: Column<AuditEntry>[] = [
    { header: 'When', cell: (a) => dateTime(a.created_at) },
    {
      header: 'Actor',
      // A customer acting in the portal is named as the customer (decision 0640).
      cell: (a) =>
        a.actor.type === 'customer' && a.actor.id ? (
          <>
            <CustomerName id={a.actor.id} /> (customer portal)
          </>
        ) : (
          `${a.actor.label ?? a.actor.id ?? a.actor.type} (${a.actor.type.replace('_', ' ')})`
        ),
    },
    { header: 'Action', cell: (a) => <code>{a.action}</code> },
    { header: 'Object', cell: (a) => <AuditObject a={a} /> },
    {
      header: 'Changes',
      cell: (a) =>
        a.changes && Object.keys(a.changes).length ? (
          <ul className="changes">
            {Object.entries(a.changes).map(([field, c]) => (
              <li key={field}>
                {field}: {JSON.stringify(c.from)} → {JSON.stringify(c.to)}
              </li>
            ))}
          </ul>
        ) : (
          '—'
        ),
    },
    { header: 'IP', cell: (a) => a.ip ?? '—' },
  ];
  return (
    <>
      <PageTitle>Audit log</PageTitle>
      <form
        className="filters"
        role="search"
        aria-label="Filter the audit log"
        onSubmit={(e) => {
          e.preventDefault();
          const form = new FormData(e.currentTarget);
          setFilters({
            action: String(form.get('action') ?? '').trim(),
            object_type: objectType,
            object_id: PICKABLE.has(objectType) ? String(form.get('object_id') ?? '') : '',
            actor_id: String(form.get('actor_id') ?? ''),
          });
        }}
      >
        <Field label="Action" name="action" hint="The exact action, e.g. invoice.void" />
        <div className="field">
          <label htmlFor="audit-actor">Who</label>
          <select id="audit-actor" name="actor_id" defaultValue="">
            <option value="">Anyone</option>
            {(actors.data ?? []).map((a) => (
              <option key={a.id} value={a.id}>
                {a.label}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="audit-object-type">Object type</label>
          <select id="audit-object-type" value={objectType} onChange={(e) => setObjectType(e.target.value)}>
            <option value="">Any</option>
            {AUDIT_OBJECT_TYPES.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </div>
        {PICKABLE.has(objectType) ? (
          <Picker key={objectType} kind={objectType as 'customer'} label={`Which ${objectType} (optional)`} name="object_id" hint="Empty: every one" />
        ) : null}
        <button type="submit">Filter</button>
      </form>
      <PagedTable
        caption="Audit log"
        columns={columns}
        filterKey={key}
        load={async (page, limit) => {
          const params = new URLSearchParams({ page: String(page), limit: String(limit) });
          for (const [name, value] of Object.entries(filters)) if (value) params.set(name, value);
          return call<ListPage<AuditEntry>>('GET', `/v1/audit-log?${params}`);
        }}
      />
    </>
  );
}
