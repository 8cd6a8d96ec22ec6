/**
 * SMS providers behind one interface (docs/decisions/0130, 0187). A failure says whether it is
 * worth retrying (`retryable`: the provider unreachable, timed out, 5xx or 429) — the job retries
 * those with backoff — or final (any other 4xx: bad credentials, number or template).
 *
 * Twilio's Programmable Messaging REST API: `POST
 * {base}/2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic auth (Account SID : Auth
 * Token), form-encoded `To`, `Body` and `From` (a number) or `MessagingServiceSid` (`MG…`);
 * 201 with the Message resource (`sid`, `status`), errors as `{ code, message, status }`.
 */
export type TwilioCredentials = { account_sid: string; auth_token: string };
export type Msg91Credentials = { auth_key: string; template_id: string };
export type SmsCredentials = TwilioCredentials | Msg91Credentials;
export type SmsMessage = { to: string; body: string };
export type SmsResult = { ok: true; id: string; status: string } | { ok: false; error: string; retryable: boolean };

const retryableStatus = (status: number) => status >= 500 || status === 429;

/** The request, or a retryable failure when the provider cannot be reached or does not answer in time. */
async function post(provider: string, url: string, init: RequestInit): Promise<Response | { ok: false; error: string; retryable: true }> {
  try {
    return await fetch(url, { ...init, signal: AbortSignal.timeout(SMS_TIMEOUT_MS) });
  } catch (error) {
    return { ok: false, error: `${provider} unreachable: ${error instanceof Error ? error.message : String(error)}`, retryable: true };
  }
}

export type SmsProvider<C extends SmsCredentials = SmsCredentials> = {
  send(config: { baseUrl: string; credentials: C; sender: string }, message: SmsMessage): Promise<SmsResult>;
};

export const SMS_TIMEOUT_MS = 10_000;

export const twilioProvider: SmsProvider<TwilioCredentials> = {
  async send({ baseUrl, credentials, sender }, message) {
    const form = new URLSearchParams({ To: message.to, Body: message.body });
    if (/^MG[0-9a-f]{32}$/i.test(sender)) form.set('MessagingServiceSid', sender);
    else form.set('From', sender);
    const url = `${baseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.account_sid)}/Messages.json`;
    const response = await post('Twilio', url, {
      method: 'POST',
      headers: {
        authorization: `Basic ${Buffer.from(`${credentials.account_sid}:${credentials.auth_token}`).toString('base64')}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      body: form.toString(),
    });
    if (!(response instanceof Response)) return response;
    const body = (await response.json().catch(() => ({}))) as { sid?: string; status?: string; code?: number; message?: string };
    if (response.ok && typeof body.sid === 'string') return { ok: true, id: body.sid, status: body.status ?? 'queued' };
    return {
      ok: false,
      error: `Twilio refused (HTTP ${response.status}${body.code ? `, code ${body.code}` : ''}): ${body.message ?? 'no message'}`,
      retryable: retryableStatus(response.status),
    };
  },
};

/**
 * MSG91's Flow API (v5): `POST {base}/api/v5/flow/` with the `authkey` header and a JSON body
 * `{ template_id, short_url, recipients: [{ mobiles, …variables }] }`; `mobiles` is the number
 * with its country code and no `+`. Every SMS in India goes through a DLT-registered template, so
 * the message is sent as the template's `content` variable (the tenant's MSG91 template reads
 * `##content##`); `sender` is the DLT sender ID when given. Answers `{ type: 'success', message:
 * <request id> }`, or `{ type: 'error', message }` — with an error status, or with 200.
 */
export const msg91Provider: SmsProvider<Msg91Credentials> = {
  async send({ baseUrl, credentials, sender }, message) {
    const response = await post('MSG91', `${baseUrl}/api/v5/flow/`, {
      method: 'POST',
      headers: { authkey: credentials.auth_key, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({
        template_id: credentials.template_id,
        ...(sender ? { sender } : {}),
        short_url: '0',
        recipients: [{ mobiles: message.to.replace(/^\+/, ''), content: message.body }],
      }),
    });
    if (!(response instanceof Response)) return response;
    const body = (await response.json().catch(() => ({}))) as { type?: string; message?: string; code?: string | number };
    if (response.ok && body.type === 'success' && typeof body.message === 'string') return { ok: true, id: body.message, status: 'accepted' };
    return {
      ok: false,
      error: `MSG91 refused (HTTP ${response.status}${body.code ? `, code ${body.code}` : ''}): ${body.message ?? 'no message'}`,
      retryable: retryableStatus(response.status),
    };
  },
};

export const smsProviders = { twilio: twilioProvider, msg91: msg91Provider } as const;
export type SmsProviderName = keyof typeof smsProviders;

/** E.164: what SMS providers take as `To`. */
export function isSmsNumber(value: string | null | undefined): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{6,14}$/.test(value);
}
