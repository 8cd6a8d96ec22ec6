/** The dashboard's building blocks: a tiny history router, tables with server-side paging, forms, an SVG chart. */
import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type FormEvent, type MouseEvent, type ReactNode } from 'react';
import { ApiError, newIdempotencyKey, type ListPage, type Me } from './api.ts';
import { count } from './format.ts';

// ---------------------------------------------------------------- routing

const BASE = '/dashboard';
const listeners = new Set<() => void>();

export function currentPath(): string {
  const path = window.location.pathname.startsWith(BASE) ? window.location.pathname.slice(BASE.length) : window.location.pathname;
  return path === '' ? '/' : path;
}

export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to === '/' ? '' : to}`;
  if (replace) window.history.replaceState(null, '', url);
  else window.history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

window.addEventListener('popstate', () => {
  for (const listener of listeners) listener();
});

export function useLocation(): { path: string; query: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return { path: currentPath(), query: new URLSearchParams(window.location.search) };
}

/** A link inside the app; it is the current page at `to` and below it (only at `to` when `exact`). */
export function Link({ to, children, className, exact }: { to: string; children: ReactNode; className?: string; exact?: boolean }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
    event.preventDefault();
    navigate(to);
  };
  const active = currentPath() === to || (!exact && to !== '/' && currentPath().startsWith(`${to}/`));
  return (
    <a href={`${BASE}${to === '/' ? '' : to}`} onClick={onClick} className={className} aria-current={active ? 'page' : undefined}>
      {children}
    </a>
  );
}

// ---------------------------------------------------------------- session

export const MeContext = createContext<{ me: Me | null; refresh: () => Promise<void> }>({ me: null, refresh: async () => {} });
export const useMe = () => useContext(MeContext);

// ---------------------------------------------------------------- data

export function errorText(error: unknown): string {
  if (error instanceof ApiError) return `${error.message}${error.reason ? ` (${error.reason})` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/** Loads once per change of `key`; `reload()` loads again. */
export function useLoad<T>(load: () => Promise<T>, key: unknown[]): { data: T | undefined; error: string | null; loading: boolean; reload: () => void } {
  const [state, setState] = useState<{ data: T | undefined; error: string | null; loading: boolean }>({ data: undefined, error: null, loading: true });
  const [tick, setTick] = useState(0);
  const loader = useRef(load);
  loader.current = load;
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    loader.current().then(
      (data) => live && setState({ data, error: null, loading: false }),
      (error: unknown) => live && setState({ data: undefined, error: errorText(error), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...key, tick]);
  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { ...state, reload };
}

// ---------------------------------------------------------------- layout bits

export function PageTitle({ children, actions }: { children: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    if (typeof children === 'string') document.title = `${children} · Kosh`;
  }, [children]);
  return (
    <div className="page-title">
      <h1>{children}</h1>
      {actions ? <div className="actions">{actions}</div> : null}
    </div>
  );
}

export function ErrorNote({ error }: { error: string | null | undefined }) {
  if (!error) return null;
  return (
    <p className="error" role="alert">
      {error}
    </p>
  );
}

export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}

export function Badge({ children }: { children: string }) {
  return <span className={`badge badge-${children.replace(/[^a-z_]/g, '')}`}>{children.replace(/_/g, ' ')}</span>;
}

export function Fields({ items }: { items: [string, ReactNode][] }) {
  return (
    <dl className="fields">
      {items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value ?? '—'}</dd>
        </div>
      ))}
    </dl>
  );
}

// ---------------------------------------------------------------- tables

export type Column<T> = { header: string; cell: (row: T) => ReactNode; numeric?: boolean };

export function Table<T>({ caption, columns, rows, rowKey }: { caption: string; columns: Column<T>[]; rows: T[]; rowKey?: (row: T, index: number) => string }) {
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c.header} scope="col" className={c.numeric ? 'num' : undefined}>
                {c.header}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={columns.length} className="muted">
                Nothing here yet.
              </td>
            </tr>
          ) : (
            rows.map((row, i) => (
              <tr key={rowKey ? rowKey(row, i) : ((row as { id?: string }).id ?? String(i))}>
                {columns.map((c) => (
                  <td key={c.header} className={c.numeric ? 'num' : undefined} data-label={c.header}>
                    {c.cell(row)}
                  </td>
                ))}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export const PAGE_SIZE = 25;

/** A server-side paginated list: the API's page/limit and total_count; filters are part of the key. */
export function PagedTable<T extends { id?: string }>({
  caption,
  columns,
  load,
  filterKey,
}: {
  caption: string;
  columns: Column<T>[];
  load: (page: number, limit: number) => Promise<ListPage<T>>;
  filterKey: string;
}) {
  const [page, setPage] = useState(1);
  useEffect(() => setPage(1), [filterKey]);
  const { data, error, loading } = useLoad(() => load(page, PAGE_SIZE), [page, filterKey]);
  const pages = data ? Math.max(1, Math.ceil(data.total_count / PAGE_SIZE)) : 1;
  return (
    <section aria-busy={loading}>
      <ErrorNote error={error} />
      {data ? <Table caption={caption} columns={columns} rows={data.data} /> : loading ? <Loading /> : null}
      <nav className="pager" aria-label={`${caption} pages`}>
        <button type="button" onClick={() => setPage((p) => p - 1)} disabled={page <= 1 || loading}>
          Previous
        </button>
        <span aria-live="polite">
          Page {count(page)} of {count(pages)}
          {data ? ` · ${count(data.total_count)} in all` : ''}
        </span>
        <button type="button" onClick={() => setPage((p) => p + 1)} disabled={!data?.has_more || loading}>
          Next
        </button>
      </nav>
    </section>
  );
}

// ---------------------------------------------------------------- forms

export function Field({
  label,
  name,
  type = 'text',
  required,
  defaultValue,
  hint,
  autoComplete,
  inputMode,
  options,
  pattern,
}: {
  label: string;
  name: string;
  type?: string;
  required?: boolean;
  defaultValue?: string;
  hint?: string;
  autoComplete?: string;
  inputMode?: 'numeric' | 'decimal' | 'text' | 'email';
  options?: [string, string][];
  pattern?: string;
}) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className="field">
      <label htmlFor={id} className={required ? 'required' : undefined}>
        {label}
      </label>
      {options ? (
        <select id={id} name={name} defaultValue={defaultValue} required={required} aria-describedby={hintId}>
          {options.map(([value, text]) => (
            <option key={value} value={value}>
              {text}
            </option>
          ))}
        </select>
      ) : type === 'checkbox' ? (
        <input id={id} name={name} type="checkbox" defaultChecked={defaultValue === 'true'} aria-describedby={hintId} />
      ) : (
        <input
          id={id}
          name={name}
          type={type}
          required={required}
          defaultValue={defaultValue}
          autoComplete={autoComplete}
          inputMode={inputMode}
          pattern={pattern}
          aria-describedby={hintId}
        />
      )}
      {hint ? (
        <small id={hintId} className="muted">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

/**
 * A form whose submit runs an async action, showing its error (role=alert) or its success note.
 * One idempotency key per intended action: a retry of the same submission (same values, after an
 * error) sends the same key, so a request that did land is not done twice; changed values or a
 * success start a new action with a new key. The button is disabled while the action runs, and
 * the form is reset after a success.
 */
export function ActionForm({
  title,
  submit,
  onSubmit,
  children,
  className,
  keep,
  onReset,
}: {
  title?: string;
  submit: string;
  onSubmit: (form: FormData, idempotencyKey: string) => Promise<string | void>;
  children?: ReactNode;
  className?: string;
  /** Keep the values after a success (an edit form showing what was saved). */
  keep?: boolean;
  /** Runs when the form is reset (after a success): a form with rows or choices of its own puts them back. */
  onReset?: () => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const running = useRef(false);
  const attempt = useRef<{ values: string; key: string } | null>(null);
  const headingId = useId();
  const handle = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (running.current) return;
    const form = event.currentTarget;
    const data = new FormData(form);
    const values = JSON.stringify([...data.entries()].map(([k, v]) => [k, typeof v === 'string' ? v : v.name]));
    if (attempt.current?.values !== values) attempt.current = { values, key: newIdempotencyKey() };
    running.current = true;
    setBusy(true);
    setError(null);
    setDone(null);
    try {
      const note = await onSubmit(data, attempt.current.key);
      attempt.current = null;
      if (!keep && form.isConnected) form.reset();
      if (note) setDone(note);
    } catch (e) {
      setError(errorText(e));
    } finally {
      running.current = false;
      setBusy(false);
    }
  };
  return (
    <form className={`card form ${className ?? ''}`} onSubmit={handle} onReset={onReset} aria-labelledby={title ? headingId : undefined} noValidate={false}>
      {title ? <h2 id={headingId}>{title}</h2> : null}
      {children}
      <ErrorNote error={error} />
      {done ? (
        <p className="ok" role="status">
          {done}
        </p>
      ) : null}
      <button type="submit" disabled={busy} aria-busy={busy}>
        {busy ? 'Working…' : submit}
      </button>
    </form>
  );
}

/** One button that runs one action (with a confirmation for destructive ones). */
export function ActionButton({ label, run, confirm, danger }: { label: string; run: () => Promise<unknown>; confirm?: string; danger?: boolean }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const running = useRef(false);
  return (
    <span className="action">
      <button
        type="button"
        className={danger ? 'danger' : undefined}
        disabled={busy}
        onClick={async () => {
          if (running.current) return;
          if (confirm && !window.confirm(confirm)) return;
          running.current = true;
          setBusy(true);
          setError(null);
          try {
            await run();
          } catch (e) {
            setError(errorText(e));
          } finally {
            running.current = false;
            setBusy(false);
          }
        }}
      >
        {busy ? 'Working…' : label}
      </button>
      <ErrorNote error={error} />
    </span>
  );
}

export function str(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

// ---------------------------------------------------------------- chart

/** A bar chart in plain SVG (no library): labelled axes, a title and a data table for screen readers. */
export function BarChart({ title, points, format }: { title: string; points: { label: string; value: number }[]; format: (value: number) => string }) {
  const id = useId();
  const width = 640;
  const height = 220;
  const pad = { top: 12, right: 8, bottom: 28, left: 8 };
  const max = Math.max(1, ...points.map((p) => p.value));
  const band = (width - pad.left - pad.right) / Math.max(1, points.length);
  const barWidth = Math.max(4, band * 0.7);
  const scale = (v: number) => ((height - pad.top - pad.bottom) * Math.max(0, v)) / max;
  return (
    <figure className="chart">
      <figcaption id={id}>{title}</figcaption>
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby={id} preserveAspectRatio="none">
        <line x1={pad.left} x2={width - pad.right} y1={height - pad.bottom} y2={height - pad.bottom} className="axis" />
        {points.map((p, i) => {
          const h = scale(p.value);
          const x = pad.left + i * band + (band - barWidth) / 2;
          return (
            <g key={p.label}>
              <rect x={x} y={height - pad.bottom - h} width={barWidth} height={h} className="bar">
                <title>{`${p.label}: ${format(p.value)}`}</title>
              </rect>
              {points.length <= 13 ? (
                <text x={x + barWidth / 2} y={height - 8} textAnchor="middle" className="tick">
                  {p.label}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <details>
        <summary>Data</summary>
        <table>
          <caption className="sr-only">{title}</caption>
          <tbody>
            {points.map((p) => (
              <tr key={p.label}>
                <th scope="row">{p.label}</th>
                <td className="num">{format(p.value)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
