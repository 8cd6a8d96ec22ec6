/**
 * Settings → E-mail: the customer e-mail templates (edit with a live preview, reset to the
 * default), which notifications are sent, and the SMS provider connection (Twilio or MSG91; its credentials
 * are sent once and never shown back). Reads are open to every operator; writes and previews need
 * the admin role (the server's table, src/api/access.ts).
 */
import { useEffect, useId, useState } from 'react';
import { can, idem, kosh, unwrap, type Me, type Schema } from '../api.ts';
import { dateTime } from '../format.ts';
import { ActionButton, ActionForm, Badge, ErrorNote, Field, Link, Loading, str, Table, useLoad } from '../ui.tsx';

type TemplateName = Schema<'EmailTemplate'>['name'];
type NotificationKind = keyof Schema<'NotificationSettings'>;

const TEMPLATE_LABELS: Record<TemplateName, string> = {
  invoice_finalized: 'Invoice issued',
  payment_receipt: 'Payment receipt',
  payment_failed: 'Payment failed',
  trial_ending: 'Trial ending',
  credit_note_issued: 'Credit note issued',
  dunning_reminder: 'Dunning reminder',
  dunning_final_notice: 'Dunning final notice',
  mandate_pre_debit: 'Mandate pre-debit notice',
  mandate_debit_canceled: 'Mandate debit canceled',
  mandate_post_debit: 'Mandate post-debit notice',
  mandate_pay_link: 'Mandate debit refused: pay link',
};

const NOTIFICATION_LABELS: Record<NotificationKind, string> = {
  invoice_finalized: 'Invoice issued',
  payment_receipt: 'Payment receipt',
  payment_failed: 'Payment failed',
  trial_ending: 'Trial ending',
  credit_note_issued: 'Credit note issued',
};

export function EmailSettings({ me, name }: { me: Me | null; name?: string }) {
  if (name) return name in TEMPLATE_LABELS ? <TemplateEditor me={me} name={name as TemplateName} /> : <ErrorNote error={`No e-mail template named ${name}.`} />;
  return (
    <>
      <Templates />
      <Notifications me={me} />
      <SmsConnections me={me} />
    </>
  );
}

function Templates() {
  const { data, error } = useLoad(async () => unwrap(await kosh.GET('/v1/email-templates')).data, []);
  return (
    <section className="card">
      <h2>E-mail templates</h2>
      <ErrorNote error={error} />
      {data ? (
        <Table
          caption="E-mail templates"
          rowKey={(t) => t.name}
          columns={[
            { header: 'Template', cell: (t: Schema<'EmailTemplate'>) => <Link to={`/settings/email/${t.name}`}>{TEMPLATE_LABELS[t.name] ?? t.name}</Link> },
            { header: 'Subject', cell: (t) => t.subject },
            { header: 'Version', cell: (t) => <Badge>{t.customized ? 'customized' : 'default'}</Badge> },
            { header: 'Updated', cell: (t) => dateTime(t.updated_at) },
          ]}
          rows={data}
        />
      ) : (
        <Loading />
      )}
    </section>
  );
}

function TextArea({
  label,
  value,
  onChange,
  rows,
  readOnly,
  hint,
}: {
  label: string;
  value: string;
  onChange: (v: string) => void;
  rows: number;
  readOnly: boolean;
  hint?: string;
}) {
  const id = useId();
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <textarea
        id={id}
        value={value}
        rows={rows}
        readOnly={readOnly}
        spellCheck={false}
        onChange={(e) => onChange(e.target.value)}
        aria-describedby={hint ? `${id}-hint` : undefined}
      />
      {hint ? (
        <small id={`${id}-hint`} className="muted">
          {hint}
        </small>
      ) : null}
    </div>
  );
}

function TemplateEditor({ me, name }: { me: Me | null; name: TemplateName }) {
  const admin = can(me, 'admin');
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/email-templates/{name}', { params: { path: { name } } })).data, [name]);
  const [source, setSource] = useState<{ subject: string; html: string; text: string } | null>(null);
  const [preview, setPreview] = useState<Schema<'EmailTemplatePreview'> | null>(null);
  const [previewError, setPreviewError] = useState<string | null>(null);
  const subjectId = useId();
  useEffect(() => {
    if (data) setSource({ subject: data.subject, html: data.html, text: data.text ?? '' });
  }, [data]);
  // A live preview: the source on screen, rendered by the server with sample data, half a second after the last edit.
  useEffect(() => {
    if (!admin || !source) return;
    let live = true;
    const timer = setTimeout(async () => {
      try {
        const rendered = unwrap(
          await kosh.POST('/v1/email-templates/{name}/preview', {
            params: { path: { name } },
            body: { subject: source.subject, html: source.html, text: source.text === '' ? null : source.text },
          }),
        ).data;
        if (live) {
          setPreview(rendered);
          setPreviewError(null);
        }
      } catch (e) {
        if (live) setPreviewError(e instanceof Error ? e.message : String(e));
      }
    }, 500);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [admin, name, source]);
  if (!data || !source) return error ? <ErrorNote error={error} /> : <Loading />;
  const set = (field: keyof typeof source) => (value: string) => setSource((s) => (s ? { ...s, [field]: value } : s));
  return (
    <>
      <p>
        <Link to="/settings/email">← All e-mail settings</Link>
      </p>
      <h2>
        {TEMPLATE_LABELS[name]} <Badge>{data.customized ? 'customized' : 'default'}</Badge>
      </h2>
      <p className="muted">
        Handlebars variables: <code>{data.variables.map((v) => `{{${v}}}`).join(' ')}</code>
      </p>
      <div className="grid2 editor">
        <ActionForm
          title="Source"
          submit={admin ? 'Save template' : 'Saving needs the admin role'}
          keep
          onSubmit={async (_form, key) => {
            if (!admin) throw new Error('Saving needs the admin role.');
            unwrap(
              await kosh.PUT('/v1/email-templates/{name}', {
                params: { path: { name } },
                body: { subject: source.subject, html: source.html, text: source.text === '' ? null : source.text },
                ...idem(key),
              }),
            );
            reload();
            return 'Template saved.';
          }}
        >
          <div className="field">
            <label htmlFor={subjectId}>Subject</label>
            <input id={subjectId} value={source.subject} readOnly={!admin} onChange={(e) => set('subject')(e.target.value)} />
          </div>
          <TextArea label="HTML" value={source.html} onChange={set('html')} rows={16} readOnly={!admin} />
          <TextArea
            label="Text"
            value={source.text}
            onChange={set('text')}
            rows={8}
            readOnly={!admin}
            hint="Leave empty to make the text part from the HTML."
          />
        </ActionForm>
        <section className="card preview" aria-labelledby={`${subjectId}-preview`}>
          <h2 id={`${subjectId}-preview`}>Preview (sample data)</h2>
          {!admin ? <p className="muted">Previews need the admin role.</p> : null}
          <ErrorNote error={previewError} />
          {preview ? (
            <>
              <p>
                Subject: <strong data-testid="preview-subject">{preview.subject}</strong>
              </p>
              {preview.missing_variables.length > 0 ? (
                <p className="error" role="status">
                  Not in the data (render empty): {preview.missing_variables.join(', ')}
                </p>
              ) : null}
              {/* sandbox="": no script, no forms, no navigation, an opaque origin: the tenant's HTML cannot touch the dashboard. */}
              <iframe className="mail" title={`Preview of the ${TEMPLATE_LABELS[name]} e-mail`} sandbox="" srcDoc={preview.html} />
              <details>
                <summary>Text part</summary>
                <pre className="mail-text">{preview.text}</pre>
              </details>
            </>
          ) : admin && !previewError ? (
            <Loading />
          ) : null}
        </section>
      </div>
      {admin && data.customized ? (
        <ActionButton
          label="Reset to the default"
          danger
          confirm="Replace this template with the default shipped with Kosh?"
          run={async () => {
            unwrap(await kosh.DELETE('/v1/email-templates/{name}', { params: { path: { name } } }));
            reload();
          }}
        />
      ) : null}
    </>
  );
}

function Notifications({ me }: { me: Me | null }) {
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/notification-settings')).data, []);
  if (!data) return error ? <ErrorNote error={error} /> : <Loading />;
  const admin = can(me, 'admin');
  const kinds = Object.keys(NOTIFICATION_LABELS) as NotificationKind[];
  return (
    <ActionForm
      title="Customer notifications"
      submit={admin ? 'Save notifications' : 'Saving needs the admin role'}
      keep
      onSubmit={async (form, key) => {
        unwrap(await kosh.PATCH('/v1/notification-settings', { body: Object.fromEntries(kinds.map((k) => [k, form.get(k) === 'on'])), ...idem(key) }));
        reload();
        return 'Saved.';
      }}
    >
      {kinds.map((k) => (
        <Field key={k} label={`E-mail: ${NOTIFICATION_LABELS[k]}`} name={k} type="checkbox" defaultValue={String(data[k])} />
      ))}
    </ActionForm>
  );
}

function SmsConnections({ me }: { me: Me | null }) {
  const admin = can(me, 'admin');
  const { data, error, reload } = useLoad(async () => unwrap(await kosh.GET('/v1/sms-connections')).data, []);
  return (
    <>
      <section className="card">
        <h2>SMS provider</h2>
        <ErrorNote error={error} />
        {data ? (
          <Table
            caption="SMS connections"
            columns={[
              { header: 'Provider', cell: (c: Schema<'SmsConnection'>) => c.provider },
              { header: 'Sender', cell: (c) => c.sender },
              { header: 'Account SID / template', cell: (c) => <code>{c.account_sid ?? c.template_id}</code> },
              { header: 'Connected', cell: (c) => dateTime(c.created_at) },
              {
                header: 'Remove',
                cell: (c) =>
                  admin ? (
                    <ActionButton
                      label="Remove"
                      danger
                      confirm="Remove the SMS connection? SMS notifications stop."
                      run={async () => {
                        unwrap(await kosh.DELETE('/v1/sms-connections/{id}', { params: { path: { id: c.id } } }));
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
      </section>
      {admin ? (
        <ActionForm
          title="Connect Twilio"
          submit="Connect"
          onSubmit={async (form, key) => {
            unwrap(
              await kosh.POST('/v1/sms-connections', {
                body: {
                  provider: 'twilio',
                  sender: str(form, 'sms_sender') ?? '',
                  credentials: { account_sid: str(form, 'sms_account_sid') ?? '', auth_token: String(form.get('sms_auth_token') ?? '') },
                },
                ...idem(key),
              }),
            );
            reload();
            return 'Twilio connected; it replaces any earlier connection. The auth token is stored encrypted and not shown again.';
          }}
        >
          <Field label="Sender (E.164 number or Messaging Service SID)" name="sms_sender" required hint="+919812345678 or MG…" />
          <Field label="Account SID" name="sms_account_sid" required autoComplete="off" hint="AC followed by 32 hex digits" />
          <Field label="Auth token" name="sms_auth_token" type="password" required autoComplete="new-password" />
        </ActionForm>
      ) : null}
      {admin ? (
        <ActionForm
          title="Connect MSG91"
          submit="Connect"
          onSubmit={async (form, key) => {
            const sender = str(form, 'msg91_sender');
            unwrap(
              await kosh.POST('/v1/sms-connections', {
                body: {
                  provider: 'msg91',
                  ...(sender ? { sender } : {}),
                  credentials: { auth_key: String(form.get('msg91_auth_key') ?? ''), template_id: str(form, 'msg91_template_id') ?? '' },
                },
                ...idem(key),
              }),
            );
            reload();
            return 'MSG91 connected; it replaces any earlier connection. The authkey is stored encrypted and not shown again.';
          }}
        >
          <Field label="DLT sender ID (optional)" name="msg91_sender" hint="e.g. KOSHBL; empty: the template's own" />
          <Field label="Flow template id" name="msg91_template_id" required autoComplete="off" hint="the template's text reads ##content##" />
          <Field label="Authkey" name="msg91_auth_key" type="password" required autoComplete="new-password" />
        </ActionForm>
      ) : null}
    </>
  );
}
