/** Coupons, one-off invoices, features (entitlements) and period close. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { date, dateTime, money, toMinor } from '../format.ts';
import { Picker, PlanName } from '../pickers.tsx';
import {
  ActionButton,
  ActionForm,
  Badge,
  ErrorNote,
  Field,
  Loading,
  navigate,
  PagedTable,
  PageTitle,
  str,
  Table,
  useLoad,
  useMe,
  type Column,
} from '../ui.tsx';

export const CURRENCIES: [string, string][] = [
  ['INR', 'INR'],
  ['USD', 'USD'],
  ['EUR', 'EUR'],
  ['GBP', 'GBP'],
];

/** Major-unit text → minor units, or an error naming the field. */
export function amountIn(form: FormData, name: string, label: string, currency: string): number | undefined {
  const text = str(form, name);
  if (text === undefined) return undefined;
  const minor = toMinor(text, currency);
  if (minor === null) throw new Error(`${label} is not an amount (e.g. 1,23,456.00)`);
  return minor;
}

/** A calendar day typed in a date input → the end of that day in India (coupon redeem-by, grant expiry). */
export function endOfDayInIndia(day: string | undefined): string | undefined {
  return day ? `${day}T23:59:59+05:30` : undefined;
}

// ---------------------------------------------------------------- coupons

export function couponDiscount(c: Schema<'Coupon'>): string {
  return c.percent_off !== null ? `${c.percent_off}% off` : `${money(c.amount_off, c.currency ?? 'INR')} off`;
}

function couponDuration(c: Schema<'Coupon'>): string {
  if (c.duration === 'repeating') return `for ${c.duration_in_months} month${c.duration_in_months === 1 ? '' : 's'}`;
  return c.duration === 'once' ? 'once' : 'forever';
}

export function CouponList() {
  const { me } = useMe();
  const [active, setActive] = useState<'true' | 'false' | ''>('true');
  const [tick, setTick] = useState(0);
  const [kind, setKind] = useState<'percent' | 'amount'>('percent');
  const [duration, setDuration] = useState<'once' | 'repeating' | 'forever'>('once');
  const [note, setNote] = useState<string | null>(null);
  const columns: Column<Schema<'Coupon'>>[] = [
    { header: 'Code', cell: (c) => <code>{c.code}</code> },
    { header: 'Name', cell: (c) => c.name },
    { header: 'Discount', cell: (c) => couponDiscount(c) },
    { header: 'Duration', cell: (c) => couponDuration(c) },
    {
      header: 'Plans',
      cell: (c) =>
        c.plan_ids.length
          ? c.plan_ids.map((id, i) => (
              <span key={id}>
                {i ? ', ' : ''}
                <PlanName id={id} />
              </span>
            ))
          : 'any',
    },
    { header: 'Redeemed', cell: (c) => `${c.times_redeemed}${c.max_redemptions !== null ? ` of ${c.max_redemptions}` : ''}`, numeric: true },
    { header: 'Redeem by', cell: (c) => date(c.redeem_by) },
    { header: 'Status', cell: (c) => <Badge>{!c.active ? 'archived' : c.valid ? 'valid' : 'expired'}</Badge> },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (c) =>
        c.active ? (
          <ActionButton
            label={`Archive ${c.code}`}
            danger
            confirm={`Archive the coupon ${c.code}? It can no longer be redeemed; discounts already given stay.`}
            run={async () => {
              unwrap(await kosh.PATCH('/v1/coupons/{id}', { params: { path: { id: c.id } }, body: { active: false } }));
              setNote(`Coupon ${c.code} archived.`);
              setTick((n) => n + 1);
            }}
          />
        ) : (
          '—'
        ),
    });
  return (
    <>
      <PageTitle>Coupons</PageTitle>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <div className="filters">
        <div className="field inline">
          <label htmlFor="coupon-active">Show</label>
          <select id="coupon-active" value={active} onChange={(e) => setActive(e.target.value as 'true')}>
            <option value="true">Active</option>
            <option value="false">Archived</option>
            <option value="">All</option>
          </select>
        </div>
      </div>
      <PagedTable
        caption="Coupons"
        columns={columns}
        filterKey={`${active}|${tick}`}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/coupons', { params: { query: { page, limit, ...(active ? { active } : {}) } } }))}
      />
      {can(me, 'money') ? (
        <details className="create">
          <summary>New coupon</summary>
          <ActionForm
            submit="Create coupon"
            onReset={() => {
              setKind('percent');
              setDuration('once');
            }}
            onSubmit={async (form, key) => {
              const currency = str(form, 'currency') ?? 'INR';
              const value = str(form, 'value') ?? '';
              let off: { percent_off: number } | { amount_off: number; currency: string };
              if (kind === 'percent') {
                const percent = Number(value.replace('%', ''));
                if (!/^\d+(\.\d{1,2})?%?$/.test(value) || percent <= 0 || percent > 100)
                  throw new Error('Percent off is a number above 0 and at most 100 (two decimals at most).');
                off = { percent_off: percent };
              } else {
                const minor = toMinor(value, currency);
                if (minor === null || minor <= 0) throw new Error('Amount off is not an amount (e.g. 500.00).');
                off = { amount_off: minor, currency };
              }
              const months = str(form, 'duration_in_months');
              const limit = str(form, 'max_redemptions');
              const planId = str(form, 'plan_id');
              const created = unwrap(
                await kosh.POST('/v1/coupons', {
                  body: {
                    code: str(form, 'code') ?? '',
                    name: str(form, 'name'),
                    ...off,
                    duration,
                    ...(duration === 'repeating' ? { duration_in_months: Number(months ?? '0') } : {}),
                    ...(limit ? { max_redemptions: Number(limit) } : {}),
                    ...(str(form, 'redeem_by') ? { redeem_by: endOfDayInIndia(str(form, 'redeem_by')) } : {}),
                    ...(planId ? { plan_ids: [planId] } : {}),
                  },
                  ...idem(key),
                }),
              );
              setTick((n) => n + 1);
              return `Coupon ${created.data.code} created: ${couponDiscount(created.data)}, ${couponDuration(created.data)}.`;
            }}
          >
            <Field label="Code" name="code" required pattern="[A-Za-z0-9][A-Za-z0-9._\-]*" hint="What customers type: letters, digits, “.”, “_” and “-”" />
            <Field label="Name" name="name" hint="Shown on invoices; the code when empty" />
            <div className="field">
              <label htmlFor="coupon-kind">Discount type</label>
              <select id="coupon-kind" name="kind" value={kind} onChange={(e) => setKind(e.target.value as 'percent')}>
                <option value="percent">Percentage</option>
                <option value="amount">Fixed amount</option>
              </select>
            </div>
            <Field
              label={kind === 'percent' ? 'Percent off' : 'Amount off'}
              name="value"
              required
              inputMode="decimal"
              hint={kind === 'percent' ? 'e.g. 20 or 12.5' : 'Before GST, e.g. 500.00'}
            />
            {kind === 'amount' ? <Field label="Currency" name="currency" defaultValue="INR" options={CURRENCIES} /> : null}
            <div className="field">
              <label htmlFor="coupon-duration">Duration</label>
              <select id="coupon-duration" name="duration" value={duration} onChange={(e) => setDuration(e.target.value as 'once')}>
                <option value="once">Once (the first invoice)</option>
                <option value="repeating">A number of months</option>
                <option value="forever">Forever</option>
              </select>
            </div>
            {duration === 'repeating' ? <Field label="Months" name="duration_in_months" type="number" required hint="1 to 120" /> : null}
            <Field label="Redemption limit" name="max_redemptions" type="number" hint="How many times it can be redeemed in all; empty: no limit" />
            <Field label="Redeem by" name="redeem_by" type="date" hint="The last day it can be redeemed (India time); empty: no end" />
            <Picker kind="plan" label="Only for the plan (optional)" name="plan_id" hint="Empty: any plan and one-off invoices" />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

// ---------------------------------------------------------------- one-off invoices

type LineRow = { key: number };

/** A draft invoice with lines typed by a person, opened on its page to be checked and finalized. */
export function NewInvoice({ customerId }: { customerId?: string }) {
  const [rows, setRows] = useState<LineRow[]>([{ key: 0 }]);
  const [next, setNext] = useState(1);
  return (
    <ActionForm
      submit="Create draft invoice"
      onReset={() => setRows([{ key: 0 }])}
      onSubmit={async (form, key) => {
        const customer = str(form, 'customer_id');
        if (!customer) throw new Error('Choose a customer from the list.');
        const currency = str(form, 'currency') ?? 'INR';
        const lines = rows.map(({ key: k }, i) => {
          const n = i + 1;
          const unit = amountIn(form, `line_amount_${k}`, `Line ${n}: unit price`, currency);
          if (unit === undefined) throw new Error(`Line ${n}: the unit price is required.`);
          const rate = str(form, `line_rate_${k}`);
          if (rate !== undefined && !/^\d+(\.\d{1,2})?$/.test(rate)) throw new Error(`Line ${n}: the GST rate is a percentage such as 18.`);
          return {
            description: str(form, `line_description_${k}`) ?? '',
            unit_amount: unit,
            quantity: Number(str(form, `line_quantity_${k}`) ?? '1'),
            ...(str(form, `line_hsn_${k}`) ? { hsn_code: str(form, `line_hsn_${k}`) } : {}),
            ...(rate !== undefined ? { tax_rate_bp: Math.round(Number(rate) * 100) } : {}),
          };
        });
        const coupon = str(form, 'coupon');
        const created = unwrap(
          await kosh.POST('/v1/invoices', {
            body: {
              customer_id: customer,
              currency,
              lines,
              auto_finalize: false,
              ...(str(form, 'memo') ? { memo: str(form, 'memo') } : {}),
              ...(coupon ? { coupon } : {}),
            },
            ...idem(key),
          }),
        );
        navigate(`/invoices/${created.data.id}`);
      }}
    >
      <Picker kind="customer" label="Customer" name="customer_id" required defaultId={customerId || undefined} />
      <Field label="Currency" name="currency" defaultValue="INR" options={CURRENCIES} />
      {rows.map(({ key }, i) => (
        <fieldset key={key} className="line">
          <legend>Line {i + 1}</legend>
          <Field label="Description" name={`line_description_${key}`} required />
          <Field label="Unit price (before GST)" name={`line_amount_${key}`} required inputMode="decimal" hint="e.g. 25,000.00" />
          <Field label="Quantity" name={`line_quantity_${key}`} type="number" defaultValue="1" required />
          <Field
            label="HSN/SAC"
            name={`line_hsn_${key}`}
            inputMode="numeric"
            pattern="[0-9]{4}|[0-9]{6}|[0-9]{8}"
            hint="4, 6 or 8 digits; empty: the tenant's default"
          />
          <Field label="GST rate % (optional)" name={`line_rate_${key}`} inputMode="decimal" hint="Needed only when the code alone does not set the rate" />
          {rows.length > 1 ? (
            <button type="button" className="link" onClick={() => setRows((r) => r.filter((x) => x.key !== key))}>
              Remove line {i + 1}
            </button>
          ) : null}
        </fieldset>
      ))}
      <p>
        <button
          type="button"
          onClick={() => {
            setRows((r) => [...r, { key: next }]);
            setNext((n) => n + 1);
          }}
        >
          Add a line
        </button>
      </p>
      <Picker kind="coupon" label="Coupon (optional)" name="coupon" hint="Type a coupon code or name, or leave empty" />
      <Field label="Memo" name="memo" hint="Printed on the invoice" />
    </ActionForm>
  );
}

// ---------------------------------------------------------------- features and entitlements

type FeatureValue = boolean | number | string | null;

export function Features() {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/features')).data, []);
  const [type, setType] = useState<'boolean' | 'quantity' | 'enum'>('boolean');
  return (
    <>
      <PageTitle>Features</PageTitle>
      <p className="muted">What a plan grants its subscribers. Attach features to a plan on the plan&apos;s page.</p>
      <ErrorNote error={error} />
      {data ? (
        <Table
          caption="Features"
          columns={[
            { header: 'Name', cell: (f: Schema<'Feature'>) => f.name },
            { header: 'Key', cell: (f) => <code>{f.key}</code> },
            { header: 'Type', cell: (f) => f.type },
            { header: 'Values', cell: (f) => f.values?.join(', ') ?? '—' },
            { header: 'Created', cell: (f) => date(f.created_at) },
          ]}
          rows={data}
        />
      ) : (
        <Loading />
      )}
      {can(me, 'money') ? (
        <details className="create">
          <summary>New feature</summary>
          <ActionForm
            submit="Create feature"
            onReset={() => setType('boolean')}
            onSubmit={async (form, key) => {
              const values = (str(form, 'values') ?? '')
                .split(',')
                .map((v) => v.trim())
                .filter(Boolean);
              if (type === 'enum' && values.length === 0) throw new Error('An enum feature needs its values, separated by commas.');
              const created = unwrap(
                await kosh.POST('/v1/features', {
                  body: { key: str(form, 'key') ?? '', name: str(form, 'name') ?? '', type, ...(type === 'enum' ? { values } : {}) },
                  ...idem(key),
                }),
              );
              reload();
              return `Feature ${created.data.name} created.`;
            }}
          >
            <Field label="Name" name="name" required />
            <Field label="Key" name="key" required pattern="[a-z0-9][a-z0-9_.\-]{0,63}" hint="What your app checks: lower-case letters, digits, _ . -" />
            <div className="field">
              <label htmlFor="feature-type">Type</label>
              <select id="feature-type" name="type" value={type} onChange={(e) => setType(e.target.value as 'boolean')}>
                <option value="boolean">On or off</option>
                <option value="quantity">A quantity (seats, projects…)</option>
                <option value="enum">One of a list of values</option>
              </select>
            </div>
            {type === 'enum' ? <Field label="Values" name="values" required hint="Separated by commas, e.g. standard, priority" /> : null}
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

export function valueText(value: FeatureValue): string {
  if (value === null) return 'unlimited';
  if (typeof value === 'boolean') return value ? 'on' : 'off';
  return String(value);
}

/** A plan's entitlements: the table, and a form that sets one feature's value (the API replaces the set). */
export function PlanEntitlements({ planId }: { planId: string }) {
  const { me } = useMe();
  const current = useLoad(async () => unwrap(await kosh.GET('/v1/plans/{id}/entitlements', { params: { path: { id: planId } } })).data, [planId]);
  const features = useLoad(async () => unwrap(await kosh.GET('/v1/features')).data, []);
  const [featureKey, setFeatureKey] = useState('');
  const feature = features.data?.find((f) => f.key === featureKey);
  const list = current.data ?? [];
  const nameOf = (k: string) => features.data?.find((f) => f.key === k)?.name ?? k;
  const put = async (next: { feature_key: string; value: FeatureValue }[], key?: string) => {
    unwrap(await kosh.PUT('/v1/plans/{id}/entitlements', { params: { path: { id: planId } }, body: next, ...(key ? idem(key) : {}) }));
    current.reload();
  };
  const columns: Column<{ feature_key: string; value: FeatureValue }>[] = [
    { header: 'Feature', cell: (e) => nameOf(e.feature_key) },
    { header: 'Value', cell: (e) => valueText(e.value) },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (e) => (
        <ActionButton
          label={`Remove ${nameOf(e.feature_key)}`}
          danger
          confirm={`Remove ${nameOf(e.feature_key)} from this plan?`}
          run={() => put(list.filter((x) => x.feature_key !== e.feature_key))}
        />
      ),
    });
  return (
    <section className="card">
      <h2>Entitlements</h2>
      <ErrorNote error={current.error ?? features.error} />
      {current.data ? <Table caption="Entitlements of this plan" rowKey={(e) => e.feature_key} columns={columns} rows={list} /> : <Loading />}
      {can(me, 'money') && features.data ? (
        features.data.length === 0 ? (
          <p className="muted">No features yet: create them under Features.</p>
        ) : (
          <ActionForm
            title="Grant a feature"
            submit="Save entitlement"
            onReset={() => setFeatureKey('')}
            onSubmit={async (form, key) => {
              if (!feature) throw new Error('Choose a feature.');
              const raw = str(form, 'value');
              let value: FeatureValue;
              if (feature.type === 'boolean') value = form.get('value') === 'on';
              else if (feature.type === 'quantity') {
                if (raw !== undefined && !/^\d+$/.test(raw)) throw new Error('The quantity is a whole number (empty: unlimited).');
                value = raw === undefined ? null : Number(raw);
              } else value = raw ?? feature.values?.[0] ?? '';
              await put([...list.filter((x) => x.feature_key !== feature.key), { feature_key: feature.key, value }], key);
              return `${feature.name}: ${valueText(value)}.`;
            }}
          >
            <div className="field">
              <label htmlFor="entitlement-feature" className="required">
                Feature
              </label>
              <select id="entitlement-feature" name="feature_key" required value={featureKey} onChange={(e) => setFeatureKey(e.target.value)}>
                <option value="">Choose a feature</option>
                {features.data.map((f) => (
                  <option key={f.key} value={f.key}>
                    {f.name} ({f.type})
                  </option>
                ))}
              </select>
            </div>
            {feature?.type === 'boolean' ? <Field label="Granted" name="value" type="checkbox" defaultValue="true" key={feature.key} /> : null}
            {feature?.type === 'quantity' ? <Field label="Quantity" name="value" type="number" hint="Empty: unlimited" key={feature.key} /> : null}
            {feature?.type === 'enum' ? <Field label="Value" name="value" options={(feature.values ?? []).map((v) => [v, v])} key={feature.key} /> : null}
          </ActionForm>
        )
      ) : null}
    </section>
  );
}

// ---------------------------------------------------------------- periods

type Period = Schema<'Period'>;

function filed(f: Period['gst_filed']['gstr1']): string {
  return f ? `${date(f.filed_at)}${f.arn ? ` (ARN ${f.arn})` : ''}` : '—';
}

export function Periods() {
  const { me } = useMe();
  const entities = useLoad(async () => unwrap(await kosh.GET('/v1/entities', { params: { query: { limit: 100 } } })).data, []);
  const [entityId, setEntityId] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const chosen = entityId || entities.data?.find((e) => e.is_primary)?.id || entities.data?.[0]?.id || '';
  const periods = useLoad(async () => (chosen ? unwrap(await kosh.GET('/v1/entities/{id}/periods', { params: { path: { id: chosen } } })).data : []), [chosen]);
  const list = periods.data ?? [];
  const done = (text: string) => {
    setNote(text);
    periods.reload();
  };
  const columns: Column<Period>[] = [
    { header: 'Month', cell: (p) => p.period },
    { header: 'Status', cell: (p) => <Badge>{p.status}</Badge> },
    { header: 'Closed', cell: (p) => (p.closed_at ? `${dateTime(p.closed_at)}${p.closed_by ? ` by ${p.closed_by}` : ''}` : '—') },
    { header: 'Reopened', cell: (p) => (p.reopened_at ? `${dateTime(p.reopened_at)}: ${p.reopen_reason ?? ''}` : '—') },
    { header: 'GSTR-1 filed', cell: (p) => filed(p.gst_filed.gstr1) },
    { header: 'GSTR-3B filed', cell: (p) => filed(p.gst_filed.gstr3b) },
  ];
  if (can(me, 'money'))
    columns.push({
      header: 'Actions',
      cell: (p) =>
        p.status === 'open' ? (
          <ActionButton
            label={`Close ${p.period}`}
            confirm={`Close ${p.period}? Later postings are dated in the first open month.`}
            run={async () => {
              unwrap(await kosh.POST('/v1/entities/{id}/periods/{period}/close', { params: { path: { id: chosen, period: p.period } } }));
              done(`${p.period} closed.`);
            }}
          />
        ) : (
          '—'
        ),
    });
  const closed = list.filter((p) => p.status === 'closed');
  return (
    <>
      <PageTitle>Periods</PageTitle>
      <p className="muted">Calendar months in the entity&apos;s time zone. Finance closes a month; only an owner reopens one, with a reason.</p>
      <div className="filters">
        <div className="field inline">
          <label htmlFor="period-entity">Entity</label>
          <select id="period-entity" value={chosen} onChange={(e) => setEntityId(e.target.value)}>
            {(entities.data ?? []).map((e) => (
              <option key={e.id} value={e.id}>
                {e.name} {e.gstin ? `(${e.gstin})` : ''}
              </option>
            ))}
          </select>
        </div>
      </div>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <ErrorNote error={periods.error ?? entities.error} />
      {periods.data ? <Table caption="Periods" rowKey={(p) => p.period} columns={columns} rows={list} /> : <Loading />}
      <div className="grid2">
        {can(me, 'money') && list.length ? (
          <ActionForm
            title="Mark a GST return filed"
            submit="Mark filed"
            onSubmit={async (form, key) => {
              const period = str(form, 'period') ?? '';
              const kind = (str(form, 'return') ?? 'gstr1') as 'gstr1' | 'gstr3b';
              const day = str(form, 'filed_on');
              const path = kind === 'gstr1' ? '/v1/gst/returns/gstr1/{period}/filed' : '/v1/gst/returns/gstr3b/{period}/filed';
              unwrap(
                await kosh.POST(path, {
                  params: { path: { period } },
                  body: { entity_id: chosen, ...(str(form, 'arn') ? { arn: str(form, 'arn') } : {}), ...(day ? { filed_at: `${day}T12:00:00+05:30` } : {}) },
                  ...idem(key),
                }),
              );
              done(`${kind === 'gstr1' ? 'GSTR-1' : 'GSTR-3B'} of ${period} marked filed; the month is closed.`);
            }}
          >
            <Field
              label="Return"
              name="return"
              options={[
                ['gstr1', 'GSTR-1'],
                ['gstr3b', 'GSTR-3B'],
              ]}
            />
            <Field label="Month" name="period" options={list.map((p) => [p.period, p.period])} />
            <Field label="ARN" name="arn" hint="The acknowledgement reference number from the GST portal" />
            <Field label="Filed on" name="filed_on" type="date" hint="Empty: now" />
          </ActionForm>
        ) : null}
        {can(me, 'owner') && closed.length ? (
          <ActionForm
            title="Reopen a month"
            submit="Reopen"
            onSubmit={async (form, key) => {
              const period = str(form, 'period') ?? '';
              unwrap(
                await kosh.POST('/v1/entities/{id}/periods/{period}/reopen', {
                  params: { path: { id: chosen, period } },
                  body: { reason: str(form, 'reason') ?? '' },
                  ...idem(key),
                }),
              );
              done(`${period} reopened.`);
            }}
          >
            <Field label="Month" name="period" options={closed.map((p) => [p.period, p.period])} />
            <Field label="Reason" name="reason" required hint="Kept in the audit log" />
          </ActionForm>
        ) : null}
      </div>
    </>
  );
}
