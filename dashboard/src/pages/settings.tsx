/** Settings: tenant settings, legal entities (GSTIN, time zone), API keys, the team and invitations, customer e-mail and SMS, own security (TOTP). */
import { useState } from 'react';
import { call, can, kosh, unwrap, type Me, type Role, type Schema } from '../api.ts';
import { dateTime } from '../format.ts';
import { EmailSettings } from './email.tsx';
import { ActionButton, ActionForm, Badge, ErrorNote, Field, Link, Loading, PageTitle, str, Table, useLoad, useMe } from '../ui.tsx';

const TABS: [string, string][] = [
  ['general', 'General'],
  ['entities', 'Entities'],
  ['api-keys', 'API keys'],
  ['team', 'Team'],
  ['email', 'E-mail'],
  ['security', 'Your security'],
];

export function Settings({ tab, sub }: { tab: string; sub?: string }) {
  const { me } = useMe();
  return (
    <>
      <PageTitle>Settings</PageTitle>
      <nav className="tabs" aria-label="Settings sections">
        {TABS.map(([id, label]) => (
          <Link key={id} to={`/settings${id === 'general' ? '' : `/${id}`}`}>
            {label}
          </Link>
        ))}
      </nav>
      {tab === 'general' ? <General me={me} /> : null}
      {tab === 'entities' ? <Entities me={me} /> : null}
      {tab === 'api-keys' ? <ApiKeys me={me} /> : null}
      {tab === 'team' ? <Team me={me} /> : null}
      {tab === 'email' ? <EmailSettings me={me} name={sub} /> : null}
      {tab === 'security' ? <Security me={me} /> : null}
    </>
  );
}

function General({ me }: { me: Me | null }) {
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/settings')).data, []);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const admin = can(me, 'admin');
  return (
    <ActionForm
      title="Billing settings"
      submit={admin ? 'Save' : 'Saving needs the admin role'}
      onSubmit={async (form) => {
        unwrap(
          await kosh.PATCH('/v1/settings', {
            body: {
              gstin: str(form, 'gstin') ?? null,
              sac_code: str(form, 'sac_code') ?? null,
              invoice_due_days: Number(str(form, 'invoice_due_days') ?? data.invoice_due_days),
              credit_note_approval_required: form.get('credit_note_approval_required') === 'on',
            },
          }),
        );
        reload();
        return 'Saved.';
      }}
    >
      <Field label="GSTIN" name="gstin" defaultValue={data.gstin ?? ''} />
      <Field label="Default SAC code" name="sac_code" defaultValue={data.sac_code ?? ''} />
      <Field label="Invoices due after (days)" name="invoice_due_days" type="number" defaultValue={String(data.invoice_due_days)} />
      <Field
        label="Credit notes need approval"
        name="credit_note_approval_required"
        type="checkbox"
        defaultValue={String(data.credit_note_approval_required)}
      />
    </ActionForm>
  );
}

function Entities({ me }: { me: Me | null }) {
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/entities', { params: { query: { limit: 100 } } })).data, []);
  return (
    <>
      <ErrorNote error={error} />
      {data ? (
        <Table
          caption="Legal entities"
          columns={[
            { header: 'Name', cell: (e: Schema<'LegalEntity'>) => `${e.name}${e.is_primary ? ' (primary)' : ''}` },
            { header: 'GSTIN', cell: (e) => e.gstin ?? '—' },
            { header: 'State', cell: (e) => e.state_code ?? '—' },
            { header: 'Invoice prefix', cell: (e) => e.invoice_prefix },
            { header: 'Time zone', cell: (e) => e.time_zone },
          ]}
          rows={data}
        />
      ) : (
        <Loading />
      )}
      {can(me, 'admin') ? (
        <details className="create">
          <summary>New entity</summary>
          <ActionForm
            submit="Create entity"
            onSubmit={async (form) => {
              unwrap(
                await kosh.POST('/v1/entities', {
                  body: {
                    name: str(form, 'name') ?? '',
                    legal_name: str(form, 'legal_name'),
                    invoice_prefix: str(form, 'invoice_prefix') ?? '',
                    gstin: str(form, 'gstin'),
                    state_code: str(form, 'state_code'),
                  },
                }),
              );
              reload();
              return 'Entity created.';
            }}
          >
            <Field label="Name" name="name" required />
            <Field label="Legal name" name="legal_name" />
            <Field label="Invoice prefix" name="invoice_prefix" required />
            <Field label="GSTIN" name="gstin" />
            <Field label="State code (e.g. 29)" name="state_code" inputMode="numeric" />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

function ApiKeys({ me }: { me: Me | null }) {
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/developer/keys')).data, []);
  const [secret, setSecret] = useState<string | null>(null);
  const admin = can(me, 'admin');
  return (
    <>
      <ErrorNote error={error} />
      {secret ? (
        <p className="ok" role="status">
          New key (shown once): <code>{secret}</code>
        </p>
      ) : null}
      {data ? (
        <Table
          caption="API keys"
          columns={[
            { header: 'Name', cell: (k: Schema<'ApiKey'>) => k.name ?? '—' },
            { header: 'Key', cell: (k) => <code>{k.prefix}…</code> },
            { header: 'Mode', cell: (k) => k.mode },
            { header: 'Last used', cell: (k) => dateTime(k.last_used_at) },
            { header: 'Revoked', cell: (k) => dateTime(k.revoked_at) },
            {
              header: 'Revoke',
              cell: (k) =>
                admin && !k.revoked_at ? (
                  <ActionButton
                    label="Revoke"
                    danger
                    confirm="Revoke this key? Programs using it stop working."
                    run={async () => {
                      unwrap(await kosh.DELETE('/v1/developer/keys/{id}', { params: { path: { id: k.id } } }));
                      reload();
                    }}
                  />
                ) : (
                  '—'
                ),
            },
          ]}
          rows={data}
        />
      ) : (
        <Loading />
      )}
      {admin ? (
        <ActionForm
          title="New API key"
          submit="Create key"
          onSubmit={async (form) => {
            const created = unwrap(await kosh.POST('/v1/developer/keys', { body: { name: str(form, 'key_name') } }));
            setSecret(created.data.key);
            reload();
          }}
        >
          <Field label="Name" name="key_name" />
        </ActionForm>
      ) : null}
    </>
  );
}

type User = { id: string; email: string; name: string | null; role: Role; totp_enabled: boolean; created_at: string };
type Invitation = { id: string; email: string; role: Role; status: string; expires_at: string; created_at: string };
const ROLES: [Role, string][] = [
  ['viewer', 'Viewer (read only)'],
  ['support', 'Support (customers, portal links)'],
  ['finance', 'Finance (money actions)'],
  ['admin', 'Admin'],
  ['owner', 'Owner'],
];

function Team({ me }: { me: Me | null }) {
  const admin = can(me, 'admin');
  // The team is shown to admins only (decision 0120; the server refuses the list to other roles).
  const users = useLoad(async () => (admin ? (await call<{ data: User[] }>('GET', '/v1/users?limit=100')).data : []), [admin]);
  const invitations = useLoad(async () => (admin ? (await call<{ data: Invitation[] }>('GET', '/v1/users/invitations?limit=100')).data : []), [admin]);
  return (
    <>
      <section className="card">
        <h2>Team</h2>
        <ErrorNote error={users.error} />
        {!admin ? (
          <p>The team is shown to admins only.</p>
        ) : users.data ? (
          <Table
            caption="Operators"
            columns={[
              { header: 'Name', cell: (u: User) => u.name ?? '—' },
              { header: 'E-mail', cell: (u) => u.email },
              {
                header: 'Role',
                cell: (u) =>
                  admin && u.id !== me?.user.id ? (
                    <select
                      aria-label={`Role of ${u.email}`}
                      defaultValue={u.role}
                      onChange={async (e) => {
                        try {
                          await call('PATCH', `/v1/users/${u.id}`, { role: e.target.value });
                        } finally {
                          users.reload();
                        }
                      }}
                    >
                      {ROLES.map(([r]) => (
                        <option key={r} value={r}>
                          {r}
                        </option>
                      ))}
                    </select>
                  ) : (
                    <Badge>{u.role}</Badge>
                  ),
              },
              { header: 'Two-factor', cell: (u) => (u.totp_enabled ? 'on' : 'off') },
              {
                header: 'Remove',
                cell: (u) =>
                  admin && u.id !== me?.user.id ? (
                    <ActionButton
                      label="Remove"
                      danger
                      confirm={`Remove ${u.email} from the team?`}
                      run={async () => {
                        await call('DELETE', `/v1/users/${u.id}`);
                        users.reload();
                      }}
                    />
                  ) : (
                    '—'
                  ),
              },
            ]}
            rows={users.data}
          />
        ) : (
          <Loading />
        )}
      </section>
      {admin ? (
        <>
          <ActionForm
            title="Invite an operator"
            submit="Send invitation"
            onSubmit={async (form) => {
              const email = str(form, 'invite_email') ?? '';
              await call('POST', '/v1/users/invitations', { email, role: str(form, 'invite_role') ?? 'viewer' });
              invitations.reload();
              return `Invitation sent to ${email}.`;
            }}
          >
            <Field label="E-mail" name="invite_email" type="email" required />
            <Field label="Role" name="invite_role" defaultValue="viewer" options={ROLES} />
          </ActionForm>
          <section className="card">
            <h2>Invitations</h2>
            <ErrorNote error={invitations.error} />
            {invitations.data ? (
              <Table
                caption="Invitations"
                columns={[
                  { header: 'E-mail', cell: (i: Invitation) => i.email },
                  { header: 'Role', cell: (i) => i.role },
                  { header: 'Status', cell: (i) => <Badge>{i.status}</Badge> },
                  { header: 'Expires', cell: (i) => dateTime(i.expires_at) },
                  {
                    header: 'Revoke',
                    cell: (i) =>
                      i.status === 'pending' ? (
                        <ActionButton
                          label="Revoke"
                          run={async () => {
                            await call('DELETE', `/v1/users/invitations/${i.id}`);
                            invitations.reload();
                          }}
                        />
                      ) : (
                        '—'
                      ),
                  },
                ]}
                rows={invitations.data}
              />
            ) : null}
          </section>
        </>
      ) : null}
    </>
  );
}

function Security({ me }: { me: Me | null }) {
  const { refresh } = useMe();
  const [setup, setSetup] = useState<{ secret: string; otpauth_url: string; qr_svg: string } | null>(null);
  const [codes, setCodes] = useState<string[] | null>(null);
  if (!me || me.viaApiKey) return <p>Signed in with an API key: there is no operator account to secure.</p>;
  return (
    <>
      <section className="card">
        <h2>Two-factor authentication</h2>
        <p>
          Status: <strong>{me.user.totp_enabled ? 'on' : 'off'}</strong>
        </p>
        {codes ? (
          <div role="status">
            <p>Recovery codes — store them somewhere safe; each works once:</p>
            <ul className="codes">
              {codes.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          </div>
        ) : null}
        {!me.user.totp_enabled && !setup ? (
          <ActionButton
            label="Set up two-factor"
            run={async () => {
              setSetup((await call<{ data: { secret: string; otpauth_url: string; qr_svg: string } }>('POST', '/v1/auth/totp/setup')).data);
            }}
          />
        ) : null}
        {setup && !me.user.totp_enabled ? (
          <>
            <img
              className="qr"
              alt="QR code for your authenticator app"
              src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(setup.qr_svg)}`}
              width={200}
              height={200}
            />
            <p>
              Or enter this key: <code data-testid="totp-secret">{setup.secret}</code>
            </p>
            <ActionForm
              submit="Turn on"
              onSubmit={async (form) => {
                const enabled = await call<{ data: { recovery_codes: string[] } }>('POST', '/v1/auth/totp/enable', { code: str(form, 'totp') ?? '' });
                setCodes(enabled.data.recovery_codes);
                setSetup(null);
                await refresh();
              }}
            >
              <Field label="Six-digit code from the app" name="totp" required inputMode="numeric" autoComplete="one-time-code" />
            </ActionForm>
          </>
        ) : null}
        {me.user.totp_enabled ? (
          <ActionForm
            submit="Turn off two-factor"
            onSubmit={async (form) => {
              await call('POST', '/v1/auth/totp/disable', { password: String(form.get('password') ?? '') });
              await refresh();
            }}
          >
            <Field label="Your password" name="password" type="password" required autoComplete="current-password" />
          </ActionForm>
        ) : null}
      </section>
      <section className="card">
        <h2>Sessions</h2>
        <ActionButton
          label="Sign out everywhere"
          confirm="Sign out of every browser, this one included?"
          run={async () => {
            await call('POST', '/v1/auth/sign-out-everywhere');
            window.location.assign('/dashboard/sign-in');
          }}
        />
      </section>
    </>
  );
}
