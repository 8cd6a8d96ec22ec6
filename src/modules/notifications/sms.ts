/**
 * SMS providers behind one interface. Twilio's Programmable Messaging REST API: `POST
 * {base}/2010-04-01/Accounts/{AccountSid}/Messages.json`, HTTP Basic auth (Account SID : Auth
 * Token), form-encoded `To`, `Body` and `From` (a number) or `MessagingServiceSid` (`MG…`);
 * 201 with the Message resource (`sid`, `status`), errors as `{ code, message, status }`.
 */
export type SmsCredentials = { account_sid: string; auth_token: string };
export type SmsMessage = { to: string; body: string };
export type SmsResult = { ok: true; id: string; status: string } | { ok: false; error: string };

export type SmsProvider = {
  send(config: { baseUrl: string; credentials: SmsCredentials; sender: string }, message: SmsMessage): Promise<SmsResult>;
};

export const SMS_TIMEOUT_MS = 10_000;

export const twilioProvider: SmsProvider = {
  async send({ baseUrl, credentials, sender }, message) {
    const form = new URLSearchParams({ To: message.to, Body: message.body });
    if (/^MG[0-9a-f]{32}$/i.test(sender)) form.set('MessagingServiceSid', sender);
    else form.set('From', sender);
    const url = `${baseUrl}/2010-04-01/Accounts/${encodeURIComponent(credentials.account_sid)}/Messages.json`;
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: {
          authorization: `Basic ${Buffer.from(`${credentials.account_sid}:${credentials.auth_token}`).toString('base64')}`,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(SMS_TIMEOUT_MS),
      });
    } catch (error) {
      return { ok: false, error: `Twilio unreachable: ${error instanceof Error ? error.message : String(error)}` };
    }
    const body = (await response.json().catch(() => ({}))) as { sid?: string; status?: string; code?: number; message?: string };
    if (response.ok && typeof body.sid === 'string') return { ok: true, id: body.sid, status: body.status ?? 'queued' };
    return { ok: false, error: `Twilio refused (HTTP ${response.status}${body.code ? `, code ${body.code}` : ''}): ${body.message ?? 'no message'}` };
  },
};

export const smsProviders = { twilio: twilioProvider } as const;
export type SmsProviderName = keyof typeof smsProviders;

/** E.164: what SMS providers take as `To`. */
export function isSmsNumber(value: string | null | undefined): value is string {
  return typeof value === 'string' && /^\+[1-9]\d{6,14}$/.test(value);
}
