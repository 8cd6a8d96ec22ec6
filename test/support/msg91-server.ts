import { randomBytes } from 'node:crypto';
import { startProviderServer, type ProviderServer } from './provider-server.js';

/**
 * A local MSG91 Flow API (v5), written from MSG91's public reference: `POST /api/v5/flow/` with
 * the `authkey` header and a JSON body `{ template_id, sender?, short_url?, recipients: [{ mobiles,
 * …variables }] }` (`mobiles`: country code and number, no `+`). Answers `{ type: 'success',
 * message: <request id> }`; errors `{ type: 'error', message, code }` (401 bad authkey, 400 bad
 * body or unknown template). Records every accepted recipient; faults come from provider-server.
 */
export type Msg91Message = { request_id: string; template_id: string; sender: string | null; mobiles: string; variables: Record<string, string> };

export type Msg91Server = ProviderServer & { authKey: string; templateId: string; messages: Msg91Message[] };

const error = (status: number, message: string) => ({ status, body: { type: 'error', message, code: String(status) } });

export async function startMsg91Server(): Promise<Msg91Server> {
  const authKey = randomBytes(16).toString('hex');
  const templateId = randomBytes(12).toString('hex');
  const messages: Msg91Message[] = [];
  const server = await startProviderServer({
    parseBody: (raw) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        return { unparsable: raw };
      }
    },
    serverErrorBody: () => ({ type: 'error', message: 'Internal Server Error' }),
    handle: (request) => {
      if (request.method !== 'POST' || !/^\/api\/v5\/flow\/?$/.test(request.path)) return error(404, 'Not found');
      if (request.headers.authkey !== authKey) return error(401, 'Authentication failure');
      if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) return error(400, 'Content-Type must be application/json');
      const body = request.body as { template_id?: unknown; sender?: unknown; recipients?: unknown };
      if (body.template_id !== templateId) return error(400, 'Invalid template id');
      if (!Array.isArray(body.recipients) || body.recipients.length === 0) return error(400, 'recipients are required');
      const requestId = randomBytes(12).toString('hex');
      for (const recipient of body.recipients as Record<string, unknown>[]) {
        const { mobiles, ...variables } = recipient;
        if (typeof mobiles !== 'string' || !/^[1-9]\d{7,14}$/.test(mobiles)) return error(400, `Invalid mobile number ${String(mobiles)}`);
        messages.push({
          request_id: requestId,
          template_id: templateId,
          sender: typeof body.sender === 'string' ? body.sender : null,
          mobiles,
          variables: variables as Record<string, string>,
        });
      }
      return { status: 200, body: { type: 'success', message: requestId } };
    },
  });
  return Object.assign(server, { authKey, templateId, messages });
}
