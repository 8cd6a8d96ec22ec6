/** Accounting connections (QuickBooks, Xero, Zoho Books): connect, sync status and errors, sync now, disconnect. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import { count, dateTime } from '../format.ts';
import {
  ActionButton,
  ActionForm,
  Badge,
  ErrorNote,
  Field,
  Loading,
  PagedTable,
  PageTitle,
  str,
  Table,
  useLoad,
  useLocation,
  useMe,
  type Column,
} from '../ui.tsx';

type Connection = Schema<'AccountingConnection'>;
type Run = Schema<'AccountingSyncRun'>;
type SyncRecord = Schema<'AccountingSyncRecord'>;

const PROVIDERS: [Connection['provider'], string][] = [
  ['quickbooks', 'QuickBooks Online'],
  ['xero', 'Xero'],
  ['zoho_books', 'Zoho Books'],
];
const providerName = (p: string) => PROVIDERS.find(([k]) => k === p)?.[1] ?? p;

function runText(run: Run | undefined): string {
  if (!run) return 'never synced';
  return `${run.status.replace(/_/g, ' ')}: ${count(run.synced)} synced, ${count(run.failed)} failed, ${count(run.skipped)} skipped${run.finished_at ? `, ${dateTime(run.finished_at)}` : ''}`;
}

/** What the provider's redirect brought back (`?status=connected` or `?error=…`), said once. */
function ReturnNote() {
  const { query } = useLocation();
  const error = query.get('error');
  const provider = providerName(query.get('provider') ?? '');
  if (error) return <ErrorNote error={`${provider} was not connected: ${query.get('error_description') ?? error}`} />;
  if (query.get('status') === 'connected')
    return (
      <p className="ok" role="status">
        {provider} is connected.
      </p>
    );
  return null;
}

export function Accounting() {
  const { me } = useMe();
  const [note, setNote] = useState<string | null>(null);
  const connections = useLoad(async () => unwrap(await kosh.GET('/v1/accounting/connections', { params: { query: { limit: 100 } } })).data, []);
  const status = useLoad(async () => unwrap(await kosh.GET('/v1/accounting/sync-status', { params: { query: { limit: 1 } } })).runs, []);
  const [tick, setTick] = useState(0);
  const admin = can(me, 'admin');
  const refresh = () => {
    connections.reload();
    status.reload();
    setTick((n) => n + 1);
  };
  const columns: Column<Connection>[] = [
    { header: 'Provider', cell: (c) => providerName(c.provider) },
    { header: 'Organisation', cell: (c) => c.external_tenant_name ?? c.external_tenant_id },
    { header: 'Status', cell: (c) => <Badge>{c.status}</Badge> },
    { header: 'Last synced', cell: (c) => dateTime(c.last_synced_at) },
    { header: 'Latest run', cell: (c) => runText(status.data?.find((r) => r.connection_id === c.id)) },
    { header: 'Last error', cell: (c) => c.last_error ?? '—' },
  ];
  if (admin)
    columns.push({
      header: 'Actions',
      cell: (c) => (
        <>
          <ActionButton
            label={`Sync ${providerName(c.provider)} now`}
            run={async () => {
              unwrap(await kosh.POST('/v1/accounting/sync', { body: { connection_id: c.id } }));
              setNote(`A sync of ${providerName(c.provider)} is queued.`);
              refresh();
            }}
          />
          <ActionButton
            label={`Disconnect ${providerName(c.provider)}`}
            danger
            confirm={`Disconnect ${providerName(c.provider)}? Its token is revoked; nothing more is synced.`}
            run={async () => {
              unwrap(await kosh.DELETE('/v1/accounting/connections/{id}', { params: { path: { id: c.id } } }));
              setNote(`${providerName(c.provider)} is disconnected.`);
              refresh();
            }}
          />
        </>
      ),
    });
  const failedColumns: Column<SyncRecord>[] = [
    { header: 'Provider', cell: (r) => providerName(connections.data?.find((c) => c.id === r.connection_id)?.provider ?? '') },
    { header: 'Record', cell: (r) => r.record_type.replace(/_/g, ' ') },
    { header: 'Error', cell: (r) => r.last_error ?? '—' },
    { header: 'Attempts', cell: (r) => count(r.attempts), numeric: true },
    { header: 'Updated', cell: (r) => dateTime(r.updated_at) },
  ];
  return (
    <>
      <PageTitle>Accounting</PageTitle>
      <p className="muted">Customers, invoices, payments, credit notes and refunds are pushed to your accounting system after each change, and on demand.</p>
      <ReturnNote />
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <ErrorNote error={connections.error ?? status.error} />
      {connections.data ? <Table caption="Accounting connections" columns={columns} rows={connections.data} /> : <Loading />}
      {admin && connections.data?.length ? (
        <ActionButton
          label="Sync every connection now"
          run={async () => {
            const runs = unwrap(await kosh.POST('/v1/accounting/sync', { body: {} })).data;
            setNote(`${count(runs.length)} sync${runs.length === 1 ? '' : 's'} queued.`);
            refresh();
          }}
        />
      ) : null}
      <section className="card">
        <h2>Records that failed to sync</h2>
        <PagedTable
          caption="Records that failed to sync"
          columns={failedColumns}
          filterKey={String(tick)}
          load={async (page, limit) => unwrap(await kosh.GET('/v1/accounting/sync-status', { params: { query: { status: 'failed', page, limit } } }))}
        />
      </section>
      {admin ? (
        <ActionForm
          title="Connect an accounting system"
          submit="Connect"
          onSubmit={async (form, key) => {
            const provider = (str(form, 'provider') ?? 'quickbooks') as Connection['provider'];
            // The provider's sign-in page asks for consent; its tokens are kept sealed by Kosh and never shown.
            const answer = unwrap(await kosh.POST('/v1/accounting/connect/{provider}', { params: { path: { provider } }, body: {}, ...idem(key) }));
            window.location.assign(answer.auth_url);
            return `Opening ${providerName(provider)}…`;
          }}
        >
          <Field label="Provider" name="provider" defaultValue="quickbooks" options={PROVIDERS} />
          <p className="muted">You sign in at the provider and choose the organisation; you come back here when it is connected.</p>
        </ActionForm>
      ) : (
        <p>Accounting systems are connected by an admin.</p>
      )}
    </>
  );
}
