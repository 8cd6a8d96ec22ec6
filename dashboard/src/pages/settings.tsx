/** Settings: tenant settings, what customers may do in the portal, legal entities (GSTIN, time zone), API keys, the team and invitations, customer e-mail and SMS, own security (TOTP). */
import { useState } from 'react';
import { call, can, idem, kosh, unwrap, type Me, type Role, type Schema } from '../api.ts';
import { AddressFields, addressOf, addressWithoutNulls, formatAddress, GstinField } from './address.tsx';
import { dateTime } from '../format.ts';
import { EmailSettings } from './email.tsx';
import { ActionButton, ActionForm, Badge, ErrorNote, Field, Link, Loading, PageTitle, str, Table, useLoad, useLocation, useMe } from '../ui.tsx';

/** Each tab and who may use it (the server refuses the rest; a tab a role cannot use is not shown). */
const TABS: [string, string, ((me: Me | null) => boolean)?][] = [
  ['general', 'General'],
  ['portal', 'Customer portal'],
  ['entities', 'Entities'],
  ['gateways', 'Payment gateways'],
  ['api-keys', 'API keys', (me) => can(me, 'admin')],
  ['team', 'Team', (me) => can(me, 'admin')],
  ['email', 'E-mail'],
  ['security', 'Your security', (me) => !me?.viaApiKey],
];

export function Settings({ tab, sub }: { tab: string; sub?: string }) {
  const { me } = useMe();
  return (
    <>
      <PageTitle>Settings</PageTitle>
      <nav className="tabs" aria-label="Settings sections">
        {TABS.filter(([, , visible]) => !visible || visible(me)).map(([id, label]) => (
          <Link key={id} to={`/settings${id === 'general' ? '' : `/${id}`}`} exact={id === 'general'}>
            {label}
          </Link>
        ))}
      </nav>
      {tab === 'general' ? <General me={me} /> : null}
      {tab === 'portal' ? <PortalSettings me={me} /> : null}
      {tab === 'entities' ? <Entities me={me} /> : null}
      {tab === 'gateways' ? <Gateways me={me} /> : null}
      {tab === 'api-keys' ? can(me, 'admin') ? <ApiKeys me={me} /> : <p>API keys are managed by an admin or the owner.</p> : null}
      {tab === 'team' ? can(me, 'admin') ? <Team me={me} /> : <p>The team is managed by an admin or the owner.</p> : null}
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
      keep
      onSubmit={async (form, key) => {
        unwrap(
          await kosh.PATCH('/v1/settings', {
            body: {
              gstin: str(form, 'gstin') ?? null,
              sac_code: str(form, 'sac_code') ?? null,
              invoice_due_days: Number(str(form, 'invoice_due_days') ?? data.invoice_due_days),
              credit_note_approval_required: form.get('credit_note_approval_required') === 'on',
            },
            ...idem(key),
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

const PORTAL_CANCELLATION: [Schema<'TenantSettings'>['portal_cancellation'], string][] = [
  ['at_period_end', 'At the end of the paid period'],
  ['immediately', 'Immediately, with the unused time credited'],
  ['disabled', 'Not in the portal'],
];

/** The portal settings that are on or off: the field, its label, and what it allows. */
const PORTAL_SWITCHES: ['portal_plan_change' | 'portal_quantity_change' | 'portal_billing_details', string, string][] = [
  ['portal_plan_change', 'Change plan', "To another active plan with a fixed price in the subscription's currency, prorated."],
  ['portal_quantity_change', 'Change seats', 'Prorated for the rest of the period.'],
  ['portal_billing_details', 'Update billing details', 'GSTIN, billing address and billing e-mail.'],
];

/** What a customer may do in the portal (the server refuses what is off, and the portal does not offer it). */
function PortalSettings({ me }: { me: Me | null }) {
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/settings')).data, []);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  return (
    <ActionForm
      title="What customers may do in the portal"
      submit={can(me, 'admin') ? 'Save portal settings' : 'Saving needs the admin role'}
      keep
      onSubmit={async (form, key) => {
        const cancellation = PORTAL_CANCELLATION.find(([value]) => value === str(form, 'portal_cancellation'))?.[0];
        unwrap(
          await kosh.PATCH('/v1/settings', {
            body: {
              portal_cancellation: cancellation ?? data.portal_cancellation,
              ...Object.fromEntries(PORTAL_SWITCHES.map(([name]) => [name, form.get(name) === 'on'])),
            },
            ...idem(key),
          }),
        );
        reload();
        return 'Portal settings saved.';
      }}
    >
      <Field
        label="Cancel a subscription"
        name="portal_cancellation"
        options={PORTAL_CANCELLATION}
        defaultValue={data.portal_cancellation}
        hint="The customer picks a reason and sees what cancelling means before confirming."
      />
      {PORTAL_SWITCHES.map(([name, label, hint]) => (
        <Field key={name} label={label} name={name} type="checkbox" defaultValue={String(data[name])} hint={hint} />
      ))}
    </ActionForm>
  );
}

const TIME_ZONES: [string, string][] = ['Asia/Kolkata', 'Asia/Dubai', 'Asia/Singapore', 'Europe/London', 'America/New_York', 'UTC'].map((z) => [z, z]);

type EntityBody = {
  name: string;
  legal_name?: string;
  invoice_prefix: string;
  gstin?: string;
  state_code?: string;
  address?: Record<string, string>;
  lut: boolean;
};

function entityBody(form: FormData): EntityBody {
  const gstin = str(form, 'gstin')?.toUpperCase();
  const address = addressWithoutNulls(addressOf(form));
  return {
    name: str(form, 'name') ?? '',
    legal_name: str(form, 'legal_name'),
    invoice_prefix: str(form, 'invoice_prefix') ?? '',
    gstin,
    // The entity's state is its GSTIN's, or the address's when it has none.
    state_code: gstin ? gstin.slice(0, 2) : address?.country === 'IN' ? address.state_code : undefined,
    address,
    lut: form.get('lut') === 'on',
  };
}

function einvoicingOf(form: FormData): { enabled: boolean; provider: 'sandbox' | 'nic' | 'gsp' } | undefined {
  const provider = str(form, 'einvoicing_provider') as 'sandbox' | 'nic' | 'gsp' | 'off' | undefined;
  if (!provider) return undefined;
  return provider === 'off' ? { enabled: false, provider: 'sandbox' } : { enabled: true, provider };
}

/** The fields of an entity, for create and edit: address (Rule 46 puts it on every invoice), GSTIN, time zone, LUT, e-invoicing. */
function EntityFields({ entity }: { entity?: Schema<'LegalEntity'> }) {
  return (
    <>
      <Field label="Name" name="name" required defaultValue={entity?.name} />
      <Field label="Legal name" name="legal_name" defaultValue={entity?.legal_name} hint="As registered; printed on invoices" />
      <Field
        label="Invoice prefix"
        name="invoice_prefix"
        required
        defaultValue={entity?.invoice_prefix}
        pattern="([A-Z0-9/\-]|\{FY\})+"
        hint="Uppercase letters, digits, / or -; {FY} writes the financial year (INV/{FY}/)"
      />
      <GstinField defaultValue={entity?.gstin} />
      <AddressFields legend="Registered address" value={entity?.address} />
      <Field label="Time zone" name="time_zone" defaultValue={entity?.time_zone ?? 'Asia/Kolkata'} options={TIME_ZONES} />
      <Field label="Has a Letter of Undertaking (exports without IGST)" name="lut" type="checkbox" defaultValue={String(entity?.lut ?? true)} />
      <Field
        label="E-invoicing (IRP)"
        name="einvoicing_provider"
        defaultValue={entity?.einvoicing.enabled ? (entity.einvoicing.provider ?? 'sandbox') : 'off'}
        options={[
          ['off', 'Off'],
          ['sandbox', 'Built-in sandbox (test)'],
          ['nic', 'NIC IRP'],
          ['gsp', 'GSP'],
        ]}
        hint="NIC and GSP need the IRP credentials (set through the API)"
      />
    </>
  );
}

function Entities({ me }: { me: Me | null }) {
  const { query } = useLocation();
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/entities', { params: { query: { limit: 100 } } })).data, []);
  const [editing, setEditing] = useState<string | null>(query.get('edit'));
  const admin = can(me, 'admin');
  const chosen = data?.find((e) => e.id === editing) ?? (editing === 'primary' ? data?.find((e) => e.is_primary) : undefined);
  return (
    <>
      <ErrorNote error={error} />
      {data ? (
        <Table
          caption="Legal entities"
          columns={[
            { header: 'Name', cell: (e: Schema<'LegalEntity'>) => `${e.name}${e.is_primary ? ' (primary)' : ''}` },
            { header: 'GSTIN', cell: (e) => e.gstin ?? '—' },
            { header: 'Address', cell: (e) => formatAddress(e.address) },
            { header: 'Invoice prefix', cell: (e) => e.invoice_prefix },
            { header: 'Time zone', cell: (e) => e.time_zone },
            { header: 'E-invoicing', cell: (e) => (e.einvoicing.enabled ? (e.einvoicing.provider ?? 'on') : 'off') },
            {
              header: 'Edit',
              cell: (e) =>
                admin ? (
                  <button type="button" className="link" onClick={() => setEditing(e.id)} aria-label={`Edit ${e.name}`}>
                    Edit
                  </button>
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
      {admin && chosen ? (
        <ActionForm
          key={chosen.id}
          title={`Edit ${chosen.name}`}
          submit="Save entity"
          keep
          onSubmit={async (form, key) => {
            const body = entityBody(form);
            unwrap(
              await kosh.PATCH('/v1/entities/{id}', {
                params: { path: { id: chosen.id } },
                body: {
                  ...body,
                  legal_name: body.legal_name ?? chosen.legal_name,
                  gstin: body.gstin ?? null,
                  state_code: body.state_code ?? null,
                  address: body.address ?? null,
                  time_zone: str(form, 'time_zone'),
                  einvoicing: einvoicingOf(form),
                },
                ...idem(key),
              }),
            );
            reload();
            return 'Entity saved.';
          }}
        >
          <EntityFields entity={chosen} />
        </ActionForm>
      ) : null}
      {admin ? (
        <details className="create">
          <summary>New entity</summary>
          <ActionForm
            submit="Create entity"
            onSubmit={async (form, key) => {
              const created = unwrap(await kosh.POST('/v1/entities', { body: entityBody(form), ...idem(key) }));
              // The time zone and e-invoicing are set on the entity once it exists (same action, its own key).
              const zone = str(form, 'time_zone');
              const einvoicing = einvoicingOf(form);
              if ((zone && zone !== created.data.time_zone) || einvoicing?.enabled) {
                unwrap(
                  await kosh.PATCH('/v1/entities/{id}', {
                    params: { path: { id: created.data.id } },
                    body: { time_zone: zone, einvoicing: einvoicing?.enabled ? einvoicing : undefined },
                    ...idem(`${key}-settings`),
                  }),
                );
              }
              reload();
              return 'Entity created.';
            }}
          >
            <EntityFields />
          </ActionForm>
        </details>
      ) : null}
    </>
  );
}

const GATEWAY_CREDENTIALS: Record<'test' | 'razorpay' | 'stripe', [string, string][]> = {
  test: [],
  razorpay: [
    ['key_id', 'Key id'],
    ['key_secret', 'Key secret'],
    ['webhook_secret', 'Webhook secret'],
  ],
  stripe: [
    ['secret_key', 'Secret key'],
    ['webhook_secret', 'Webhook signing secret'],
  ],
};

/** Payment gateways: the test gateway (test mode), Razorpay or Stripe; credentials go once and are never shown again. */
function Gateways({ me }: { me: Me | null }) {
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/gateway-connections')).data, []);
  const [provider, setProvider] = useState<'test' | 'razorpay' | 'stripe'>('test');
  const admin = can(me, 'admin');
  return (
    <>
      <ErrorNote error={error} />
      {data ? (
        <Table
          caption="Payment gateways"
          columns={[
            { header: 'Gateway', cell: (g: Schema<'GatewayConnection'>) => g.provider },
            { header: 'Currencies', cell: (g) => g.currencies.join(', ') || 'all' },
            { header: 'Credentials', cell: (g) => g.credential_keys.join(', ') || '—' },
            { header: 'Webhook URL', cell: (g) => (g.webhook_url ? <code>{g.webhook_url}</code> : '—') },
            { header: 'Connected', cell: (g) => dateTime(g.created_at) },
            {
              header: 'Remove',
              cell: (g) =>
                admin ? (
                  <ActionButton
                    label="Disconnect"
                    danger
                    confirm={`Disconnect ${g.provider}?`}
                    run={async () => {
                      unwrap(await kosh.DELETE('/v1/gateway-connections/{id}', { params: { path: { id: g.id } } }));
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
          title="Connect a gateway"
          submit="Connect gateway"
          onSubmit={async (form, key) => {
            const credentials: Record<string, string> = {};
            for (const [name] of GATEWAY_CREDENTIALS[provider]) {
              const value = str(form, name);
              if (value) credentials[name] = value;
            }
            const currencies = (str(form, 'currencies') ?? '')
              .split(/[,\s]+/)
              .map((c) => c.trim().toUpperCase())
              .filter(Boolean);
            unwrap(await kosh.POST('/v1/gateway-connections', { body: { provider, credentials, ...(currencies.length ? { currencies } : {}) }, ...idem(key) }));
            reload();
            return `${provider} connected.`;
          }}
        >
          <div className="field">
            <label htmlFor="gateway-provider">Gateway</label>
            <select id="gateway-provider" name="provider" value={provider} onChange={(e) => setProvider(e.target.value as typeof provider)}>
              <option value="test">Test gateway (test mode only)</option>
              <option value="razorpay">Razorpay</option>
              <option value="stripe">Stripe</option>
            </select>
          </div>
          {GATEWAY_CREDENTIALS[provider].map(([name, label]) => (
            <Field key={`${provider}-${name}`} label={label} name={name} type="password" required autoComplete="off" />
          ))}
          <Field label="Currencies (empty: all)" name="currencies" hint="e.g. INR, USD" />
        </ActionForm>
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
          onSubmit={async (form, key) => {
            const created = unwrap(await kosh.POST('/v1/developer/keys', { body: { name: str(form, 'key_name') }, ...idem(key) }));
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
  const [inviteLink, setInviteLink] = useState<{ email: string; url: string } | null>(null);
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
            onSubmit={async (form, key) => {
              const email = str(form, 'invite_email') ?? '';
              const invited = await call<{ data: { accept_url?: string } }>(
                'POST',
                '/v1/users/invitations',
                { email, role: str(form, 'invite_role') ?? 'viewer' },
                key,
              );
              invitations.reload();
              setInviteLink(invited.data.accept_url ? { email, url: invited.data.accept_url } : null);
              return invited.data.accept_url ? `Invitation created for ${email} (not e-mailed: mail is not configured).` : `Invitation sent to ${email}.`;
            }}
          >
            <Field label="E-mail" name="invite_email" type="email" required />
            <Field label="Role" name="invite_role" defaultValue="viewer" options={ROLES} />
          </ActionForm>
          {inviteLink ? (
            <p className="ok" role="status" data-testid="invitation-link">
              Invitation link for {inviteLink.email} (single use, 7 days): <a href={inviteLink.url}>{inviteLink.url}</a>
            </p>
          ) : null}
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
