import { StrictMode, useCallback, useEffect, useState, type ReactNode } from 'react';
import { createRoot } from 'react-dom/client';
import './styles.css';
import { apiKey, ApiError, call, can, csrfToken, kosh, loadDeployment, setApiKey, unwrap, type Me } from './api.ts';
import { setTimeZone } from './format.ts';
import { AcceptInvitation, ResetPassword, SignIn, SignUp } from './pages/auth.tsx';
import { Overview } from './pages/overview.tsx';
import { CreditNoteList, CustomerList, InvoiceList, PaymentList, PlanList, SubscriptionList } from './pages/lists.tsx';
import { CreditNoteDetail, CustomerDetail, InvoiceDetail, PaymentDetail, PlanDetail, SubscriptionDetail } from './pages/details.tsx';
import { WebhookDetail, WebhookList } from './pages/webhooks.tsx';
import { Settings } from './pages/settings.tsx';
import { CouponList, Features, Periods } from './pages/billing.tsx';
import { Metrics } from './pages/usage.tsx';
import { Analytics, AuditLog, Dunning, GstReturns, Reconciliation } from './pages/operations.tsx';
import { AdvanceDetail, AdvanceList } from './pages/advances.tsx';
import { CheckoutLinks, GiftList, QuoteList } from './pages/sales.tsx';
import { Accounting } from './pages/accounting.tsx';
import { Link, Loading, MeContext, navigate, useLoad, useLocation } from './ui.tsx';

const PUBLIC = new Set(['/sign-in', '/sign-up', '/accept-invitation', '/reset-password']);

const NAV: [string, string, ((me: Me) => boolean)?][] = [
  ['/', 'Overview'],
  ['/customers', 'Customers'],
  ['/subscriptions', 'Subscriptions'],
  ['/invoices', 'Invoices'],
  ['/payments', 'Payments'],
  ['/credit-notes', 'Credit notes'],
  ['/advances', 'Advances'],
  ['/quotes', 'Quotes'],
  ['/gifts', 'Gifts'],
  ['/checkout-links', 'Checkout links'],
  ['/plans', 'Plans'],
  ['/metrics', 'Usage'],
  ['/coupons', 'Coupons'],
  ['/features', 'Features'],
  ['/webhooks', 'Webhooks'],
  ['/dunning', 'Dunning'],
  ['/reconciliation', 'Reconciliation'],
  ['/gst-returns', 'GST returns'],
  ['/accounting', 'Accounting'],
  ['/periods', 'Periods'],
  ['/analytics', 'Analytics'],
  ['/audit-log', 'Audit log', (me) => can(me, 'admin')],
  ['/settings', 'Settings'],
];

function route(path: string): ReactNode {
  const [, section, id, sub] = path.split('/');
  switch (section) {
    case '':
      return <Overview />;
    case 'customers':
      return id ? <CustomerDetail id={id} /> : <CustomerList />;
    case 'subscriptions':
      return id ? <SubscriptionDetail id={id} /> : <SubscriptionList />;
    case 'invoices':
      return id ? <InvoiceDetail id={id} /> : <InvoiceList />;
    case 'payments':
      return id ? <PaymentDetail id={id} /> : <PaymentList />;
    case 'credit-notes':
      return id ? <CreditNoteDetail id={id} /> : <CreditNoteList />;
    case 'plans':
      return id ? <PlanDetail id={id} /> : <PlanList />;
    case 'advances':
      return id ? <AdvanceDetail id={id} /> : <AdvanceList />;
    case 'quotes':
      return <QuoteList />;
    case 'gifts':
      return <GiftList />;
    case 'checkout-links':
      return <CheckoutLinks />;
    case 'accounting':
      return <Accounting />;
    case 'metrics':
      return <Metrics />;
    case 'coupons':
      return <CouponList />;
    case 'features':
      return <Features />;
    case 'periods':
      return <Periods />;
    case 'webhooks':
      return id ? <WebhookDetail id={id} /> : <WebhookList />;
    case 'dunning':
      return <Dunning />;
    case 'reconciliation':
      return <Reconciliation />;
    case 'gst-returns':
      return <GstReturns />;
    case 'analytics':
      return <Analytics />;
    case 'audit-log':
      return <AuditLog />;
    case 'settings':
      // Where the accounting providers' sign-in sends the browser back (the API's default landing).
      if (id === 'accounting') return <Accounting />;
      return <Settings tab={id ?? 'general'} sub={sub} />;
    default:
      return (
        <>
          <h1>Not found</h1>
          <p>
            No page here. <Link to="/">Back to the overview</Link>
          </p>
        </>
      );
  }
}

async function loadMe(): Promise<Me | null> {
  if (apiKey()) {
    try {
      const settings = unwrap(await kosh.GET('/v1/settings'));
      return {
        user: { id: 'api_key', email: 'API key', name: 'API key', role: 'owner', totp_enabled: false, created_at: settings.data.created_at },
        tenant: { id: settings.data.tenant_id, name: settings.data.tenant_name },
        viaApiKey: true,
      };
    } catch {
      setApiKey(null);
      return null;
    }
  }
  // No session cookie pair: nobody is signed in; asking the server would only log a 401.
  if (!csrfToken()) return null;
  try {
    return (await call<{ data: Me }>('GET', '/v1/auth/me')).data;
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 404)) return null;
    throw error;
  }
}

async function loadTimeZone(): Promise<void> {
  try {
    const entities = unwrap(await kosh.GET('/v1/entities', { params: { query: { limit: 100 } } }));
    const primary = entities.data.find((e) => e.is_primary) ?? entities.data[0];
    setTimeZone(primary?.time_zone);
  } catch {
    // The default (Asia/Kolkata) stands.
  }
}

/** With no SMTP server nothing is e-mailed: say so on every page rather than fail silently. */
function MailNote() {
  const { data } = useLoad(loadDeployment, []);
  if (!data || data.mail_configured) return null;
  return (
    <p className="notice" role="status" data-testid="mail-not-configured">
      E-mail is not configured (no <code>SMTP_URL</code>): invitations, invoices and reminders are not sent.
      {data.mode === 'test' ? ' In test mode the dashboard shows invitation and portal links on screen instead.' : ' Copy portal links from the customer page.'}
    </p>
  );
}

function Shell({ me, children }: { me: Me; children: ReactNode }) {
  const [open, setOpen] = useState(false);
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <span className="brand">Kosh</span>
        <span className="tenant" data-testid="tenant-name">
          {me.tenant.name}
        </span>
        <button type="button" className="menu" aria-expanded={open} aria-controls="nav" onClick={() => setOpen((o) => !o)}>
          Menu
        </button>
        <span className="who">
          {me.user.name ?? me.user.email} · {me.user.role}
        </span>
        <button
          type="button"
          className="link"
          onClick={async () => {
            if (me.viaApiKey) setApiKey(null);
            else await call('POST', '/v1/auth/sign-out').catch(() => undefined);
            window.location.assign('/dashboard/sign-in');
          }}
        >
          Sign out
        </button>
      </header>
      <nav id="nav" className={open ? 'side open' : 'side'} aria-label="Main">
        <ul onClick={() => setOpen(false)}>
          {NAV.filter(([, , visible]) => !visible || visible(me)).map(([to, label]) => (
            <li key={to}>
              <Link to={to}>{label}</Link>
            </li>
          ))}
        </ul>
      </nav>
      <main id="main" tabIndex={-1}>
        <MailNote />
        {children}
      </main>
    </div>
  );
}

function App() {
  const { path } = useLocation();
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const refresh = useCallback(async () => {
    try {
      // Who is signed in, then (signed in only) the entity's time zone.
      const next = await loadMe();
      if (next) await loadTimeZone();
      setMe(next);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
    }
  }, []);
  useEffect(() => {
    void refresh();
  }, [refresh]);
  useEffect(() => {
    if (me === null && !PUBLIC.has(path)) navigate(`/sign-in${path === '/' ? '' : `?next=${encodeURIComponent(path)}`}`, true);
  }, [me, path]);
  // Focus moves to the page on navigation, for keyboard and screen-reader users.
  useEffect(() => {
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path]);
  let body: ReactNode;
  if (error) body = <p role="alert">The dashboard could not reach Kosh: {error}</p>;
  else if (path === '/sign-in') body = <SignIn />;
  else if (path === '/sign-up') body = <SignUp />;
  else if (path === '/accept-invitation') body = <AcceptInvitation />;
  else if (path === '/reset-password') body = <ResetPassword />;
  else if (me === undefined || me === null) body = <Loading />;
  else body = <Shell me={me}>{route(path)}</Shell>;
  return <MeContext.Provider value={{ me: me ?? null, refresh }}>{body}</MeContext.Provider>;
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
