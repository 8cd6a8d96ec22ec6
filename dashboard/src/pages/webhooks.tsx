/** Webhook endpoints, their delivery log, and redelivery of an event. */
import { useState } from 'react';
import { can, idem, kosh, unwrap, type Schema } from '../api.ts';
import type { paths } from '../../../clients/typescript/src/index.ts';

type WebhookEventType = NonNullable<paths['/v1/webhooks']['post']['requestBody']['content']['application/json']['events']>[number];
import { dateTime } from '../format.ts';
import {
  ActionButton,
  ActionForm,
  Badge,
  ErrorNote,
  Field,
  Fields,
  Link,
  Loading,
  navigate,
  PagedTable,
  PageTitle,
  str,
  useLoad,
  useMe,
  type Column,
} from '../ui.tsx';

export function WebhookList() {
  const { me } = useMe();
  const [secret, setSecret] = useState<string | null>(null);
  const columns: Column<Schema<'WebhookEndpoint'>>[] = [
    { header: 'URL', cell: (w) => <Link to={`/webhooks/${w.id}`}>{w.url}</Link> },
    { header: 'Events', cell: (w) => (w.events.length ? w.events.join(', ') : 'all') },
    { header: 'Enabled', cell: (w) => (w.enabled ? 'yes' : 'no') },
    { header: 'Created', cell: (w) => dateTime(w.created_at) },
  ];
  return (
    <>
      <PageTitle>Webhooks</PageTitle>
      <PagedTable
        caption="Webhook endpoints"
        columns={columns}
        filterKey={secret ?? ''}
        load={async (page, limit) => unwrap(await kosh.GET('/v1/webhooks', { params: { query: { page, limit } } }))}
      />
      {secret ? (
        <p className="ok" role="status">
          Signing secret (shown once): <code>{secret}</code>
        </p>
      ) : null}
      {can(me, 'admin') ? (
        <details className="create">
          <summary>New endpoint</summary>
          <ActionForm
            submit="Add endpoint"
            onSubmit={async (form, key) => {
              // The server checks each name against its catalog (GET /v1/events/types) and says which it does not know.
              const events = (str(form, 'events') ?? '').split(/[\s,]+/).filter(Boolean) as WebhookEventType[];
              const created = unwrap(
                await kosh.POST('/v1/webhooks', { body: { url: str(form, 'url') ?? '', events, description: str(form, 'description') }, ...idem(key) }),
              );
              setSecret(created.data.secret);
            }}
          >
            <Field label="URL" name="url" type="url" required />
            <Field label="Events (comma separated; empty for all)" name="events" />
            <Field label="Description" name="description" />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

export function WebhookDetail({ id }: { id: string }) {
  const { me } = useMe();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/webhooks/{id}', { params: { path: { id } } })).data, [id]);
  const [status, setStatus] = useState<'' | 'pending' | 'succeeded' | 'failed'>('');
  const [note, setNote] = useState<string | null>(null);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const w = data;
  const path = { params: { path: { id } } };
  const admin = can(me, 'admin');
  const columns: Column<Schema<'WebhookDelivery'>>[] = [
    { header: 'Event', cell: (d) => <code>{d.event_id.slice(-8)}</code> },
    { header: 'Status', cell: (d) => <Badge>{d.status}</Badge> },
    { header: 'Attempts', cell: (d) => d.attempts, numeric: true },
    { header: 'Last answer', cell: (d) => (d.last_status_code ? String(d.last_status_code) : (d.last_error ?? '—')) },
    { header: 'Delivered', cell: (d) => dateTime(d.delivered_at) },
    {
      header: 'Redeliver',
      cell: (d) =>
        admin ? (
          <ActionButton
            label="Redeliver"
            run={async () => {
              unwrap(await kosh.POST('/v1/events/{id}/redeliver', { params: { path: { id: d.event_id } } }));
              setNote(`Event ${d.event_id.slice(-8)} queued again.`);
            }}
          />
        ) : (
          '—'
        ),
    },
  ];
  return (
    <>
      <PageTitle
        actions={
          admin ? (
            <>
              <ActionButton
                label={w.enabled ? 'Disable' : 'Enable'}
                run={async () => {
                  unwrap(await kosh.PATCH('/v1/webhooks/{id}', { ...path, body: { enabled: !w.enabled } }));
                  reload();
                }}
              />
              <ActionButton
                label="Rotate secret"
                confirm="Rotate the signing secret? The old one keeps working for a while."
                run={async () => {
                  const rotated = unwrap(await kosh.POST('/v1/webhooks/{id}/rotate-secret', path));
                  setNote(`New signing secret (shown once): ${rotated.data.secret}`);
                  reload();
                }}
              />
              <ActionButton
                label="Delete"
                danger
                confirm="Delete this endpoint?"
                run={async () => {
                  unwrap(await kosh.DELETE('/v1/webhooks/{id}', path));
                  navigate('/webhooks');
                }}
              />
            </>
          ) : null
        }
      >
        Webhook endpoint
      </PageTitle>
      {note ? (
        <p className="ok" role="status">
          {note}
        </p>
      ) : null}
      <Fields
        items={[
          ['URL', w.url],
          ['Events', w.events.length ? w.events.join(', ') : 'all'],
          ['Enabled', w.enabled ? 'yes' : 'no'],
          ['Description', w.description ?? '—'],
        ]}
      />
      <section className="card">
        <h2>Delivery log</h2>
        <div className="filters">
          <div className="field inline">
            <label htmlFor="delivery-status">Status</label>
            <select id="delivery-status" value={status} onChange={(e) => setStatus(e.target.value as typeof status)}>
              <option value="">Any</option>
              <option value="pending">pending</option>
              <option value="succeeded">succeeded</option>
              <option value="failed">failed</option>
            </select>
          </div>
        </div>
        <PagedTable
          caption="Deliveries"
          columns={columns}
          filterKey={`${status}|${note ?? ''}`}
          load={async (page, limit) =>
            unwrap(await kosh.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query: { page, limit, ...(status ? { status } : {}) } } }))
          }
        />
      </section>
    </>
  );
}
