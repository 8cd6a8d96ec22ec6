import { randomBytes } from 'node:crypto';
import { startProviderServer, type ProviderServer } from './provider-server.js';

/**
 * A local Twilio Programmable Messaging API, written from Twilio's public reference: `POST
 * /2010-04-01/Accounts/{AccountSid}/Messages.json` with HTTP Basic auth (Account SID : Auth Token),
 * a form-encoded body with `To`, `Body` and `From` or `MessagingServiceSid`; 201 with the Message
 * resource; errors `{ code, message, more_info, status }` (20003 authenticate, 21211 invalid To,
 * 21604 To required, 21602 Body required, 21606/21703 sender missing).
 */
export type TwilioMessage = { sid: string; account_sid: string; to: string; from: string | null; messaging_service_sid: string | null; body: string };

export type TwilioServer = ProviderServer & { accountSid: string; authToken: string; messages: TwilioMessage[] };

const error = (status: number, code: number, message: string) => ({
  status,
  body: { code, message, more_info: `https://www.twilio.com/docs/errors/${code}`, status },
});

export async function startTwilioServer(): Promise<TwilioServer> {
  const accountSid = `AC${randomBytes(16).toString('hex')}`;
  const authToken = randomBytes(16).toString('hex');
  const messages: TwilioMessage[] = [];
  const server = await startProviderServer({
    parseBody: (raw) => Object.fromEntries(new URLSearchParams(raw)),
    serverErrorBody: (status) => ({ code: 20500, message: 'Internal Server Error', more_info: 'https://www.twilio.com/docs/errors/20500', status }),
    handle: (request) => {
      const match = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages\.json$/.exec(request.path);
      if (!match || request.method !== 'POST') return error(404, 20404, 'The requested resource was not found');
      const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
      if (request.headers.authorization !== expected || match[1] !== accountSid) return error(401, 20003, 'Authenticate');
      if (!String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
        return error(400, 20001, 'Unsupported content type');
      }
      const body = request.body as Record<string, string>;
      if (!body.To) return error(400, 21604, "A 'To' phone number is required.");
      if (!/^\+[1-9]\d{6,14}$/.test(body.To)) return error(400, 21211, `The 'To' number ${body.To} is not a valid phone number.`);
      if (!body.Body) return error(400, 21602, 'Message body is required.');
      if (!body.From && !body.MessagingServiceSid) return error(400, 21606, "A 'From' phone number or MessagingServiceSid is required.");
      const message: TwilioMessage = {
        sid: `SM${randomBytes(16).toString('hex')}`,
        account_sid: accountSid,
        to: body.To,
        from: body.From ?? null,
        messaging_service_sid: body.MessagingServiceSid ?? null,
        body: body.Body,
      };
      messages.push(message);
      return {
        status: 201,
        body: { ...message, status: 'queued', direction: 'outbound-api', api_version: '2010-04-01', num_segments: '1', error_code: null, error_message: null },
      };
    },
  });
  return Object.assign(server, { accountSid, authToken, messages });
}
