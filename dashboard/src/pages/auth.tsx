/** Signing in (e-mail, password, then the TOTP step), accepting an invitation, resetting a password. */
import { useState } from 'react';
import { ApiError, call, setApiKey } from '../api.ts';
import { ActionForm, Field, Link, navigate, str, useLocation, useMe } from '../ui.tsx';

function AuthShell({ title, children }: { title: string; children: React.ReactNode }) {
  document.title = `${title} · Kosh`;
  return (
    <main id="main" className="auth">
      <p className="brand" aria-hidden="true">
        Kosh
      </p>
      <h1>{title}</h1>
      {children}
    </main>
  );
}

export function SignIn() {
  const { refresh } = useMe();
  const [step, setStep] = useState<{ email: string; password: string } | null>(null);
  const [useKey, setUseKey] = useState(false);
  const next = new URLSearchParams(window.location.search).get('next');
  const done = async () => {
    await refresh();
    navigate(next && next.startsWith('/') && !next.startsWith('//') ? next : '/', true);
  };
  if (useKey) {
    return (
      <AuthShell title="Sign in with an API key">
        <ActionForm
          submit="Sign in"
          onSubmit={async (form) => {
            setApiKey(str(form, 'api_key') ?? null);
            await done();
          }}
        >
          <Field
            label="API key"
            name="api_key"
            type="password"
            required
            autoComplete="off"
            hint="For development: the key acts with full rights and lasts for this tab."
          />
        </ActionForm>
        <p>
          <button type="button" className="link" onClick={() => setUseKey(false)}>
            Sign in with e-mail instead
          </button>
        </p>
      </AuthShell>
    );
  }
  if (step) {
    return (
      <AuthShell title="Two-factor code">
        <ActionForm
          submit="Verify"
          onSubmit={async (form) => {
            const code = str(form, 'code') ?? '';
            const recovery = /^\d{6}$/.test(code) ? {} : { recovery_code: code };
            await call('POST', '/v1/auth/sign-in', { email: step.email, password: step.password, ...(/^\d{6}$/.test(code) ? { totp_code: code } : recovery) });
            await done();
          }}
        >
          <Field label="Code from your authenticator app (or a recovery code)" name="code" required autoComplete="one-time-code" inputMode="text" />
        </ActionForm>
      </AuthShell>
    );
  }
  return (
    <AuthShell title="Sign in">
      <ActionForm
        submit="Sign in"
        onSubmit={async (form) => {
          const email = str(form, 'email') ?? '';
          const password = String(form.get('password') ?? '');
          try {
            await call('POST', '/v1/auth/sign-in', { email, password });
          } catch (error) {
            if (error instanceof ApiError && error.reason === 'totp_required') {
              setStep({ email, password });
              return;
            }
            throw error;
          }
          await done();
        }}
      >
        <Field label="E-mail" name="email" type="email" required autoComplete="username" />
        <Field label="Password" name="password" type="password" required autoComplete="current-password" />
      </ActionForm>
      <p>
        <Link to="/reset-password">Forgot your password?</Link>
      </p>
      <p>
        New to Kosh? <Link to="/sign-up">Create an account</Link>
      </p>
      <p>
        <button type="button" className="link" onClick={() => setUseKey(true)}>
          Use an API key (development)
        </button>
      </p>
    </AuthShell>
  );
}

function Expired({ what }: { what: string }) {
  return (
    <div className="card" role="alert">
      <h2>This link has expired</h2>
      <p>
        The {what} link was already used or is older than it may be.{' '}
        {what === 'invitation' ? 'Ask an admin of your team to invite you again.' : 'Ask for a new one below.'}
      </p>
    </div>
  );
}

export function AcceptInvitation() {
  const { query } = useLocation();
  const { refresh } = useMe();
  const token = query.get('token');
  const [expired, setExpired] = useState(false);
  if (!token || expired) {
    return (
      <AuthShell title="Accept invitation">
        <Expired what="invitation" />
        <p>
          <Link to="/sign-in">Go to sign-in</Link>
        </p>
      </AuthShell>
    );
  }
  return (
    <AuthShell title="Accept invitation">
      <p>Choose your name and a password to join the team.</p>
      <ActionForm
        submit="Join"
        onSubmit={async (form) => {
          const password = String(form.get('password') ?? '');
          if (password !== String(form.get('password2') ?? '')) throw new Error('the two passwords differ');
          try {
            await call('POST', '/v1/auth/invitations/accept', { token, name: str(form, 'name') ?? '', password });
          } catch (error) {
            if (error instanceof ApiError && error.status === 410) {
              setExpired(true);
              return;
            }
            throw error;
          }
          await refresh();
          navigate('/settings/security', true);
        }}
      >
        <Field label="Your name" name="name" required autoComplete="name" />
        <Field label="Password" name="password" type="password" required autoComplete="new-password" hint="At least 12 characters." />
        <Field label="Password again" name="password2" type="password" required autoComplete="new-password" />
      </ActionForm>
    </AuthShell>
  );
}

export function ResetPassword() {
  const { query } = useLocation();
  const token = query.get('token');
  const [expired, setExpired] = useState(false);
  if (!token || expired) {
    return (
      <AuthShell title="Reset password">
        {expired ? <Expired what="password reset" /> : null}
        <ActionForm
          submit="E-mail me a link"
          onSubmit={async (form) => {
            await call('POST', '/v1/auth/password-reset', { email: str(form, 'email') ?? '' });
            return 'If that address belongs to an operator, a link is on its way (valid for one hour).';
          }}
        >
          <Field label="E-mail" name="email" type="email" required autoComplete="username" />
        </ActionForm>
        <p>
          <Link to="/sign-in">Back to sign-in</Link>
        </p>
      </AuthShell>
    );
  }
  return (
    <AuthShell title="Choose a new password">
      <ActionForm
        submit="Set password"
        onSubmit={async (form) => {
          const password = String(form.get('password') ?? '');
          if (password !== String(form.get('password2') ?? '')) throw new Error('the two passwords differ');
          try {
            await call('POST', '/v1/auth/password-reset/confirm', { token, password });
          } catch (error) {
            if (error instanceof ApiError && error.status === 410) {
              setExpired(true);
              return;
            }
            throw error;
          }
          navigate('/sign-in?notice=password_reset', true);
        }}
      >
        <Field label="New password" name="password" type="password" required autoComplete="new-password" />
        <Field label="New password again" name="password2" type="password" required autoComplete="new-password" />
      </ActionForm>
    </AuthShell>
  );
}

/**
 * A new business and its owner in one step (POST /auth/register with the owner), then signed in
 * with the password just chosen. Where registration needs the admin token, the server says so.
 */
export function SignUp() {
  const { refresh } = useMe();
  return (
    <AuthShell title="Create an account">
      <ActionForm
        submit="Create account"
        onSubmit={async (form, key) => {
          const email = str(form, 'email') ?? '';
          const password = String(form.get('password') ?? '');
          if (password !== String(form.get('password2') ?? '')) throw new Error('The two passwords differ.');
          await call('POST', '/auth/register', { name: str(form, 'business') ?? '', email, owner: { email, password, name: str(form, 'name') ?? '' } }, key);
          await call('POST', '/v1/auth/sign-in', { email, password });
          await refresh();
          navigate('/', true);
        }}
      >
        <Field label="Business name" name="business" required autoComplete="organization" />
        <Field label="Your name" name="name" required autoComplete="name" />
        <Field label="E-mail" name="email" type="email" required autoComplete="username" />
        <Field label="Password" name="password" type="password" required autoComplete="new-password" hint="At least 12 characters." />
        <Field label="Password again" name="password2" type="password" required autoComplete="new-password" />
      </ActionForm>
      <p>
        Have an account? <Link to="/sign-in">Sign in</Link>
      </p>
    </AuthShell>
  );
}
