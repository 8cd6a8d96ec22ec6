/**
 * Searchable pickers (no form asks for an id) and names for ids (no list shows an id tail).
 *
 * A picker is an ARIA 1.2 combobox: typing searches the server (debounced), the list shows names,
 * numbers and amounts, and the chosen object's id goes in a hidden input named like the field.
 * Names for ids come from one cache per session (one GET per id, shared by every row and page).
 */
import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { kosh, unwrap, type Schema } from './api.ts';
import { date, money } from './format.ts';
import { Link } from './ui.tsx';

export type PickerKind = 'customer' | 'plan' | 'invoice' | 'coupon';
export type PickerOption = { id: string; label: string; detail?: string };

const SEARCH_DELAY_MS = 250;
const SHOWN = 8;

export function planPrice(plan: Schema<'Plan'>, priceId?: string | null, currency?: string): Schema<'Plan'>['prices'][number] | undefined {
  return plan.prices.find((p) => p.id === priceId) ?? plan.prices.find((p) => p.currency === currency) ?? plan.prices[0];
}

export function priceText(price: Schema<'Plan'>['prices'][number] | undefined, plan?: Schema<'Plan'>): string {
  if (!price) return '—';
  const every = plan ? ` / ${plan.interval_count > 1 ? `${plan.interval_count} ` : ''}${plan.interval_unit}${plan.interval_count > 1 ? 's' : ''}` : '';
  const metered = price.type === 'metered' || price.billing_scheme === 'metered';
  if (metered && !price.tiers && price.amount > 0) {
    const per = price.package_size && price.package_size > 1 ? `${price.package_size} units` : 'unit';
    return `${money(price.amount, price.currency)} per ${per} of ${price.metric_code ?? 'usage'}${every}`;
  }
  if (metered || price.billing_scheme === 'tiered') return `${metered ? 'metered' : 'tiered'}${price.metric_code ? ` (${price.metric_code})` : ''}${every}`;
  return `${money(price.amount, price.currency)}${every}`;
}

function customerOption(c: Schema<'Customer'>): PickerOption {
  return { id: c.id, label: c.name ?? c.email, detail: [c.name ? c.email : null, c.gstin].filter(Boolean).join(' · ') };
}
function planOption(p: Schema<'Plan'>): PickerOption {
  return { id: p.id, label: p.name, detail: [p.code, p.prices.map((price) => priceText(price, p)).join(', ')].filter(Boolean).join(' · ') };
}
function invoiceOption(i: Schema<'Invoice'>): PickerOption {
  return {
    id: i.id,
    label: i.number ?? `Draft of ${date(i.created_at)}`,
    detail: `${i.customer_details?.name ?? i.customer_details?.email ?? ''} · ${i.status} · due ${money(i.amount_due, i.currency)}`,
  };
}
function couponOption(c: Schema<'Coupon'>): PickerOption {
  const off = c.percent_off !== null ? `${c.percent_off}% off` : money(c.amount_off, c.currency ?? 'INR') + ' off';
  return { id: c.code, label: `${c.code} — ${c.name}`, detail: `${off}, ${c.duration}` };
}

/** What a picker may narrow its search to (an invoice picker to one customer's open invoices). */
export type PickerScope = { customer_id?: string; status?: 'open' | 'draft' | 'paid' };

export async function searchOptions(kind: PickerKind, q: string, scope: PickerScope = {}): Promise<PickerOption[]> {
  const text = q.trim();
  const search = text ? { q: text } : {};
  switch (kind) {
    case 'customer':
      return unwrap(await kosh.GET('/v1/customers', { params: { query: { limit: SHOWN, ...search } } })).data.map(customerOption);
    case 'plan':
      return unwrap(await kosh.GET('/v1/plans', { params: { query: { limit: SHOWN, ...search } } }))
        .data.filter((p) => p.active)
        .map(planOption);
    case 'invoice':
      return unwrap(await kosh.GET('/v1/invoices', { params: { query: { limit: SHOWN, ...search, ...scope } } })).data.map(invoiceOption);
    case 'coupon': {
      // The coupon list has no text search: a tenant's active coupons are few; they are filtered here.
      const all = unwrap(await kosh.GET('/v1/coupons', { params: { query: { limit: 100, active: 'true' } } })).data.filter((c) => c.valid);
      const needle = text.toLowerCase();
      return all
        .filter((c) => !needle || c.code.toLowerCase().includes(needle) || c.name.toLowerCase().includes(needle))
        .slice(0, SHOWN)
        .map(couponOption);
    }
  }
}

// ---------------------------------------------------------------- names for ids

const records = new Map<string, Promise<unknown>>();

function cached<T>(key: string, load: () => Promise<T>): Promise<T> {
  let hit = records.get(key) as Promise<T> | undefined;
  if (!hit) {
    hit = load();
    records.set(key, hit);
    hit.catch(() => records.delete(key));
  }
  return hit;
}

/** Forget a cached object (after an edit). */
export function forget(id: string): void {
  for (const key of records.keys()) if (key.endsWith(`:${id}`)) records.delete(key);
}

export const fetchCustomer = (id: string) =>
  cached(`customer:${id}`, async () => unwrap(await kosh.GET('/v1/customers/{id}', { params: { path: { id } } })).data);
export const fetchPlan = (id: string) => cached(`plan:${id}`, async () => unwrap(await kosh.GET('/v1/plans/{id}', { params: { path: { id } } })).data);
export const fetchInvoice = (id: string) => cached(`invoice:${id}`, async () => unwrap(await kosh.GET('/v1/invoices/{id}', { params: { path: { id } } })).data);

/** The object behind an id, loaded once per session; undefined while it loads (or when it cannot be read). */
export function useRecord<T>(fetcher: (id: string) => Promise<T>, id: string | null | undefined): T | undefined {
  const [value, setValue] = useState<{ id: string; data: T } | undefined>(undefined);
  useEffect(() => {
    if (!id) return;
    let live = true;
    fetcher(id).then(
      (data) => live && setValue({ id, data }),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [fetcher, id]);
  return value && value.id === id ? value.data : undefined;
}

export function CustomerName({ id, link = true }: { id: string | null | undefined; link?: boolean }) {
  const c = useRecord(fetchCustomer, id);
  if (!id) return <>—</>;
  const text = c ? (c.name ?? c.email) : '…';
  return link ? <Link to={`/customers/${id}`}>{text}</Link> : <>{text}</>;
}

export function PlanName({ id }: { id: string | null | undefined }) {
  const p = useRecord(fetchPlan, id);
  if (!id) return <>—</>;
  return <Link to={`/plans/${id}`}>{p ? p.name : '…'}</Link>;
}

export function InvoiceNumber({ id }: { id: string | null | undefined }) {
  const i = useRecord(fetchInvoice, id);
  if (!id) return <>—</>;
  return <Link to={`/invoices/${id}`}>{i ? (i.number ?? `Draft of ${date(i.created_at)}`) : '…'}</Link>;
}

/** What a subscription bills each period: the price times the quantity (metered prices say so). */
export function SubscriptionAmount({ s }: { s: Schema<'Subscription'> }) {
  const plan = useRecord(fetchPlan, s.plan_id);
  if (!plan) return <>…</>;
  const price = planPrice(plan, s.price_id, s.currency);
  if (!price) return <>—</>;
  if (price.type === 'metered' || price.billing_scheme !== 'per_unit') return <>{priceText(price, plan)}</>;
  return <>{priceText({ ...price, amount: price.amount * s.quantity }, plan)}</>;
}

// ---------------------------------------------------------------- the picker

const loaders: Record<PickerKind, ((id: string) => Promise<PickerOption>) | null> = {
  customer: async (id) => customerOption(await fetchCustomer(id)),
  plan: async (id) => planOption(await fetchPlan(id)),
  invoice: async (id) => invoiceOption(await fetchInvoice(id)),
  coupon: null,
};

export function Picker({
  kind,
  label,
  name,
  required,
  defaultId,
  scope,
  hint,
  onChange,
}: {
  kind: PickerKind;
  label: string;
  name: string;
  required?: boolean;
  defaultId?: string;
  scope?: PickerScope;
  hint?: string;
  onChange?: (option: PickerOption | null) => void;
}) {
  const id = useId();
  const listId = `${id}-list`;
  const hintId = `${id}-hint`;
  const input = useRef<HTMLInputElement>(null);
  const [text, setText] = useState('');
  const [chosen, setChosen] = useState<PickerOption | null>(null);
  const [options, setOptions] = useState<PickerOption[]>([]);
  const [open, setOpen] = useState(false);
  const [active, setActive] = useState(-1);
  const [searching, setSearching] = useState(false);
  const seq = useRef(0);
  const scopeKey = JSON.stringify(scope ?? {});
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  // Leaving the field closes the list a moment later (a click on an option lands first); typing or
  // coming back before then cancels it, or the list would close under the person typing.
  const closing = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const reopen = () => {
    clearTimeout(closing.current);
    setOpen(true);
  };

  const choose = (option: PickerOption | null) => {
    setChosen(option);
    setText(option ? option.label : '');
    setOpen(false);
    setActive(-1);
    onChangeRef.current?.(option);
  };

  // A default (e.g. the customer a page is about) shows its name.
  useEffect(() => {
    const load = loaders[kind];
    if (!defaultId || !load) return;
    let live = true;
    load(defaultId).then(
      (option) => {
        if (!live) return;
        setChosen(option);
        setText(option.label);
      },
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [kind, defaultId]);

  // The form's reset (after a success) empties the picker too.
  useEffect(() => {
    const form = input.current?.form;
    if (!form) return;
    const reset = () => {
      setChosen(null);
      setText('');
      setOptions([]);
      setOpen(false);
    };
    form.addEventListener('reset', reset);
    return () => form.removeEventListener('reset', reset);
  }, []);

  // Search as you type, debounced; an answer to an older query is dropped.
  useEffect(() => {
    if (!open) return;
    const mine = ++seq.current;
    setSearching(true);
    const timer = setTimeout(() => {
      searchOptions(kind, chosen && text === chosen.label ? '' : text, scope).then(
        (found) => {
          if (mine !== seq.current) return;
          setOptions(found);
          setActive(found.length ? 0 : -1);
          setSearching(false);
        },
        () => mine === seq.current && setSearching(false),
      );
    }, SEARCH_DELAY_MS);
    return () => clearTimeout(timer);
  }, [kind, text, open, scopeKey]);

  // A typed text that is not a chosen option is not a valid answer.
  useEffect(() => {
    input.current?.setCustomValidity(text && !chosen ? `Choose a ${kind} from the list` : '');
  }, [text, chosen, kind]);

  const onKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      if (!open) setOpen(true);
      else setActive((a) => Math.min(options.length - 1, a + 1));
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (event.key === 'Enter' && open && active >= 0 && options[active]) {
      event.preventDefault();
      choose(options[active]!);
    } else if (event.key === 'Escape') {
      setOpen(false);
    }
  };

  return (
    <div className="field picker">
      <label htmlFor={id} className={required ? 'required' : undefined}>
        {label}
      </label>
      <input
        ref={input}
        id={id}
        type="text"
        role="combobox"
        autoComplete="off"
        aria-autocomplete="list"
        aria-expanded={open}
        aria-controls={listId}
        aria-activedescendant={open && active >= 0 ? `${id}-${active}` : undefined}
        aria-describedby={hintId}
        required={required}
        value={text}
        placeholder={`Type to search ${kind === 'invoice' ? 'invoice numbers' : `${kind}s`}`}
        onChange={(e) => {
          setText(e.target.value);
          reopen();
          if (chosen) {
            setChosen(null);
            onChangeRef.current?.(null);
          }
        }}
        onFocus={reopen}
        onBlur={() => {
          clearTimeout(closing.current);
          closing.current = setTimeout(() => setOpen(false), 150);
        }}
        onKeyDown={onKeyDown}
      />
      <input type="hidden" name={name} value={chosen?.id ?? ''} />
      <ul id={listId} role="listbox" aria-label={label} className="options" hidden={!open}>
        {options.map((o, i) => (
          <li
            key={o.id}
            id={`${id}-${i}`}
            role="option"
            aria-selected={i === active}
            onMouseDown={(e) => {
              e.preventDefault();
              choose(o);
            }}
          >
            <span className="label">{o.label}</span>
            {o.detail ? <span className="muted"> {o.detail}</span> : null}
          </li>
        ))}
        {open && !searching && options.length === 0 ? (
          <li role="option" aria-disabled="true" aria-selected="false" className="muted">
            Nothing matches
          </li>
        ) : null}
      </ul>
      <small id={hintId} className="muted">
        {chosen ? `Chosen: ${chosen.label}${chosen.detail ? ` (${chosen.detail})` : ''}` : (hint ?? 'Type a name, then choose from the list')}
      </small>
    </div>
  );
}
