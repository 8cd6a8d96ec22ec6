/** Billable metrics, usage events, a customer's usage this period, and the metered-price fields of the plan forms. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { date, money, zone } from '../format.ts';
import { Picker, PlanName } from '../pickers.tsx';
import { ActionForm, BarChart, ErrorNote, Field, Loading, PageTitle, str, Table, useLoad, useMe, type Column } from '../ui.tsx';
import { amountIn } from './billing.tsx';

type Metric = Schema<'BillableMetric'>;

const AGGREGATIONS: [string, string][] = [
  ['count', 'Count of events'],
  ['sum', 'Sum of a property'],
  ['max', 'Largest value of a property'],
  ['unique_count', 'Distinct values of a property'],
  ['latest', 'Latest value of a property'],
];

export async function loadMetrics(): Promise<Metric[]> {
  return unwrap(await kosh.GET('/v1/billable-metrics', { params: { query: { limit: 1000 } } })).data;
}

export function metricLabel(m: Metric): string {
  return `${m.name} (${m.aggregation === 'count' ? 'count' : `${m.aggregation} of ${m.field ?? ''}`})`;
}

// ---------------------------------------------------------------- metered price fields

/**
 * A metered price's fields: the metric chosen by name, the price per unit (or per package).
 * `suffix` keeps the names of several rows apart; the result goes in a plan's `prices`.
 */
export function MeteredPriceFields({ metrics, suffix, legend, required }: { metrics: Metric[]; suffix: string; legend: string; required?: boolean }) {
  return (
    <fieldset className="line">
      <legend>{legend}</legend>
      <Field
        label="Billable metric"
        name={`metric_${suffix}`}
        required={required}
        options={[['', required ? 'Choose a metric' : 'None'], ...metrics.map((m): [string, string] => [m.code, metricLabel(m)])]}
      />
      <Field label="Price per unit" name={`unit_amount_${suffix}`} inputMode="decimal" hint="Before GST, e.g. 0.50" />
      <Field label="Units per package" name={`package_size_${suffix}`} type="number" hint="Empty: priced per unit; e.g. 1000 bills each started thousand" />
    </fieldset>
  );
}

export type MeteredPrice = { billing_scheme: 'metered'; metric_code: string; amount: number; currency: string; package_size?: number };

/** The metered price a row of MeteredPriceFields describes, or undefined when no metric is chosen. */
export function meteredPriceOf(form: FormData, suffix: string, currency: string): MeteredPrice | undefined {
  const metric = str(form, `metric_${suffix}`);
  if (!metric) return undefined;
  const amount = amountIn(form, `unit_amount_${suffix}`, 'The price per unit', currency);
  if (!amount) throw new Error(`The metered price of ${metric} needs a price per unit above zero.`);
  const packageSize = str(form, `package_size_${suffix}`);
  if (packageSize !== undefined && !/^[1-9]\d*$/.test(packageSize)) throw new Error('Units per package is a whole number above zero.');
  return { billing_scheme: 'metered', metric_code: metric, amount, currency, ...(packageSize ? { package_size: Number(packageSize) } : {}) };
}

// ---------------------------------------------------------------- metrics page

export function Metrics() {
  const { me } = useMe();
  const metrics = useLoad(loadMetrics, []);
  const [aggregation, setAggregation] = useState('count');
  const [metricCode, setMetricCode] = useState('');
  const list = metrics.data ?? [];
  const chosen = list.find((m) => m.code === metricCode) ?? list[0];
  return (
    <>
      <PageTitle>Usage</PageTitle>
      <p className="muted">Billable metrics count or add up your customers&apos; usage events; a plan&apos;s metered price bills a metric each period.</p>
      <ErrorNote error={metrics.error} />
      {metrics.data ? (
        <Table
          caption="Billable metrics"
          columns={[
            { header: 'Name', cell: (m: Metric) => m.name },
            { header: 'Code', cell: (m) => <code>{m.code}</code> },
            { header: 'Aggregation', cell: (m) => (m.aggregation === 'count' ? 'count' : `${m.aggregation} of ${m.field ?? ''}`) },
            { header: 'Dimensions', cell: (m) => m.dimensions.join(', ') || '—' },
            { header: 'Created', cell: (m) => date(m.created_at) },
          ]}
          rows={list}
        />
      ) : (
        <Loading />
      )}
      <div className="grid2">
        {can(me, 'money') ? (
          <ActionForm
            title="New billable metric"
            submit="Create metric"
            onReset={() => setAggregation('count')}
            onSubmit={async (form, key) => {
              const dimensions = (str(form, 'dimensions') ?? '')
                .split(',')
                .map((d) => d.trim())
                .filter(Boolean);
              const created = unwrap(
                await kosh.POST('/v1/billable-metrics', {
                  body: {
                    code: str(form, 'code') ?? '',
                    name: str(form, 'name') ?? '',
                    aggregation: aggregation as 'count',
                    ...(aggregation !== 'count' ? { field: str(form, 'field') } : {}),
                    dimensions,
                  },
                  ...idem(key),
                }),
              );
              metrics.reload();
              return `Metric ${created.data.name} created.`;
            }}
          >
            <Field label="Name" name="name" required hint="e.g. API calls" />
            <Field label="Code" name="code" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" hint="What your events send as metric_code, e.g. api_calls" />
            <div className="field">
              <label htmlFor="metric-aggregation">Aggregation</label>
              <select id="metric-aggregation" name="aggregation" value={aggregation} onChange={(e) => setAggregation(e.target.value)}>
                {AGGREGATIONS.map(([value, text]) => (
                  <option key={value} value={value}>
                    {text}
                  </option>
                ))}
              </select>
            </div>
            {aggregation !== 'count' ? <Field label="Property" name="field" required hint="The event property aggregated, e.g. tokens" /> : null}
            <Field label="Dimensions" name="dimensions" hint="Optional: event properties to break usage down by, separated by commas" />
          </ActionForm>
        ) : null}
        {can(me, 'money') && list.length ? (
          <ActionForm
            title="Record usage"
            submit="Record usage"
            onSubmit={async (form, key) => {
              const customer = str(form, 'customer_id');
              if (!customer) throw new Error('Choose a customer from the list.');
              const metric = chosen!;
              const value = str(form, 'value');
              if (metric.aggregation !== 'count' && (value === undefined || !/^\d+(\.\d+)?$/.test(value)))
                throw new Error(`${metric.field ?? 'The value'} is a number.`);
              unwrap(
                await kosh.POST('/v1/usage/events', {
                  body: {
                    // One event per intended action: its idempotency key names the transaction too.
                    transaction_id: `dashboard-${key}`,
                    customer_id: customer,
                    metric_code: metric.code,
                    ...(metric.aggregation !== 'count' && metric.field ? { properties: { [metric.field]: Number(value) } } : {}),
                  },
                  ...idem(key),
                }),
              );
              return `Usage of ${metric.name} recorded.`;
            }}
          >
            <Picker kind="customer" label="Customer" name="customer_id" required />
            <div className="field">
              <label htmlFor="usage-metric">Metric</label>
              <select id="usage-metric" name="metric_code" value={chosen?.code ?? ''} onChange={(e) => setMetricCode(e.target.value)}>
                {list.map((m) => (
                  <option key={m.code} value={m.code}>
                    {metricLabel(m)}
                  </option>
                ))}
              </select>
            </div>
            {chosen && chosen.aggregation !== 'count' ? (
              <Field label={`Value of ${chosen.field ?? 'the property'}`} name="value" required inputMode="decimal" />
            ) : null}
          </ActionForm>
        ) : null}
      </div>
    </>
  );
}

// ---------------------------------------------------------------- a customer's usage

type Usage = Schema<'SubscriptionUsage'>;

function SubscriptionUsageCard({ subscription, metrics }: { subscription: Schema<'Subscription'>; metrics: Metric[] }) {
  const usage = useLoad(
    async () => unwrap(await kosh.GET('/v1/subscriptions/{id}/usage', { params: { path: { id: subscription.id } } })).data,
    [subscription.id],
  );
  if (usage.error) return <ErrorNote error={usage.error} />;
  if (!usage.data) return <Loading />;
  const data: Usage = usage.data;
  if (!data.metrics.length) return null;
  const nameOf = (code: string) => metrics.find((m) => m.code === code)?.name ?? code;
  const columns: Column<Usage['metrics'][number]>[] = [
    { header: 'Metric', cell: (m) => nameOf(m.metric_code) },
    { header: 'Quantity', cell: (m) => new Intl.NumberFormat('en-IN').format(m.quantity), numeric: true },
    { header: 'Amount (before GST)', cell: (m) => money(m.amount, subscription.currency), numeric: true },
  ];
  return (
    <>
      <h3>
        <PlanName id={subscription.plan_id} />: {date(data.period_start)} – {date(data.period_end)}
      </h3>
      <Table caption={`Usage this period`} rowKey={(m) => m.metric_code} columns={columns} rows={data.metrics} />
      {data.metrics.map((m) => (
        <DailyUsageChart
          key={m.metric_code}
          customerId={subscription.customer_id}
          metricCode={m.metric_code}
          name={nameOf(m.metric_code)}
          from={data.period_start}
          to={data.period_end}
        />
      ))}
    </>
  );
}

/** One metric's usage this period, day by day (GET /v1/usage/daily, days of the entity's time zone). */
function DailyUsageChart({ customerId, metricCode, name, from, to }: { customerId: string; metricCode: string; name: string; from: string; to: string }) {
  const daily = useLoad(
    async () =>
      unwrap(await kosh.GET('/v1/usage/daily', { params: { query: { customer_id: customerId, metric_code: metricCode, from, to, time_zone: zone() } } })).data,
    [customerId, metricCode, from, to],
  );
  if (daily.error) return <ErrorNote error={daily.error} />;
  if (!daily.data) return <Loading />;
  return (
    <BarChart
      title={`${name} by day this period`}
      points={daily.data.days.map((d) => ({ label: date(d.date), value: d.quantity }))}
      format={(v) => new Intl.NumberFormat('en-IN').format(v)}
    />
  );
}

/** The customer page's usage: each live subscription's metered usage so far this period. */
export function CustomerUsage({ customerId }: { customerId: string }) {
  const subscriptions = useLoad(
    async () =>
      unwrap(await kosh.GET('/v1/subscriptions', { params: { query: { customer_id: customerId, limit: 100 } } })).data.filter((s) => s.status !== 'canceled'),
    [customerId],
  );
  const metrics = useLoad(loadMetrics, []);
  if (!metrics.data || !metrics.data.length || !subscriptions.data?.length) return null;
  return (
    <section className="card" aria-labelledby="usage-heading">
      <h2 id="usage-heading">Usage</h2>
      {subscriptions.data.map((s) => (
        <SubscriptionUsageCard key={s.id} subscription={s} metrics={metrics.data!} />
      ))}
    </section>
  );
}
