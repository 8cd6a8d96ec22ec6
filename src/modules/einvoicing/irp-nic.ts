import { constants, createCipheriv, createDecipheriv, publicEncrypt, randomBytes } from 'node:crypto';
import type { EinvoicingCredentials } from '../entities/index.js';
import { IrpRejection, IrpUnavailable, type IrpClient, type IrpDocumentRef, type IrpRegistration } from './irp-client.js';
import type { IrpDocument } from './irp-document.js';

/**
 * The NIC e-invoice API (and GSPs that expose it unchanged at their own base URL):
 *
 * - `POST {base}/eivital/v1.04/auth`, headers `client_id`, `client_secret`, `Gstin`; body
 *   `{ Data }` = base64 of the RSA (PKCS#1 v1.5) encryption, under the IRP's public key, of
 *   `{ UserName, Password, AppKey, ForceRefreshAccessToken }`, where AppKey is 32 random bytes in
 *   base64. The answer's `Sek` is the session key, AES-256-ECB-encrypted under the app key.
 * - Every later call carries `client_id`, `client_secret`, `Gstin`, `user_name`, `AuthToken`, and
 *   its JSON payload as `{ Data }` = base64(AES-256-ECB(SEK, json)); answers' `Data` likewise.
 * - `POST {base}/eicore/v1.03/Invoice` generates; `GET …/Invoice/irnbydocdetails?doctype=&docnum=&docdate=`
 *   finds a registered document; `POST …/Invoice/Cancel` cancels.
 * - Refusals: `{ Status: 0, ErrorDetails: [{ ErrorCode, ErrorMessage }] }` (2150: duplicate IRN).
 */

export type NicOptions = {
  baseUrl: string;
  gstin: string;
  credentials: EinvoicingCredentials;
  /** PEM of the IRP's public key (credentials.public_key wins). */
  publicKey: string;
  fetch?: typeof fetch;
};

type Session = { authToken: string; sek: Buffer };

function aesEncrypt(key: Buffer, plaintext: Buffer): string {
  const cipher = createCipheriv('aes-256-ecb', key, null);
  return Buffer.concat([cipher.update(plaintext), cipher.final()]).toString('base64');
}

function aesDecrypt(key: Buffer, base64: string): Buffer {
  const decipher = createDecipheriv('aes-256-ecb', key, null);
  return Buffer.concat([decipher.update(Buffer.from(base64, 'base64')), decipher.final()]);
}

type NicAnswer = { Status: number | string; Data?: unknown; ErrorDetails?: { ErrorCode: string; ErrorMessage: string }[] | string };

function refusal(answer: NicAnswer): IrpRejection {
  let details = answer.ErrorDetails;
  if (typeof details === 'string') {
    try {
      details = JSON.parse(Buffer.from(details, 'base64').toString('utf8')) as { ErrorCode: string; ErrorMessage: string }[];
    } catch {
      details = [{ ErrorCode: 'unknown', ErrorMessage: String(details) }];
    }
  }
  const codes = (details ?? []).map((d) => irpErrorCode(d.ErrorCode));
  const raw = details?.map((d) => `${d.ErrorCode}: ${d.ErrorMessage}`).join('; ') || undefined;
  // The IRP's own text is logged, never stored: Kosh words the refusal (DESIGN §21).
  const summary = codes.length ? `the IRP refused the request (IRP error ${[...new Set(codes)].join(', ')})` : 'the IRP refused the request';
  return new IrpRejection(codes[0] ?? 'unknown', summary, raw);
}

/** An IRP error code as stored: NIC's codes are short numbers; anything else is `unknown`. */
function irpErrorCode(value: unknown): string {
  const code = String(value ?? '');
  return /^[A-Za-z0-9_-]{1,16}$/.test(code) ? code : 'unknown';
}

type NicRegistration = { AckNo: number | string; AckDt: string; Irn: string; SignedInvoice: string; SignedQRCode: string };

/** The IRP's `yyyy-MM-dd HH:mm:ss` in Indian time → an instant. */
function irpTime(value: string): Date {
  return new Date(`${value.replace(' ', 'T')}+05:30`);
}

function toRegistration(data: NicRegistration): IrpRegistration {
  return { irn: data.Irn, ack_no: String(data.AckNo), ack_date: irpTime(data.AckDt), signed_invoice: data.SignedInvoice, signed_qr_code: data.SignedQRCode };
}

export function createNicIrp(options: NicOptions): IrpClient {
  const http = options.fetch ?? fetch;
  const base = options.baseUrl.replace(/\/$/, '');
  const creds = options.credentials;
  const baseHeaders = { 'content-type': 'application/json', client_id: creds.client_id ?? '', client_secret: creds.client_secret ?? '', Gstin: options.gstin };
  let session: Session | null = null;

  async function call(method: 'GET' | 'POST', path: string, headers: Record<string, string>, body?: unknown): Promise<NicAnswer> {
    let response: Response;
    let text: string;
    try {
      response = await http(`${base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
        // The credentials travel in headers: never re-sent wherever a redirect points.
        redirect: 'error',
      });
      text = await response.text();
    } catch (error) {
      const e = error as Error & { cause?: { code?: string; message?: string } };
      throw new IrpUnavailable('the IRP could not be reached', e.cause?.code ?? e.cause?.message ?? e.message);
    }
    // 5xx and non-JSON answers are the IRP being down: retried.
    if (response.status >= 500) throw new IrpUnavailable(`the IRP answered HTTP ${response.status}`, text.slice(0, 500));
    try {
      return JSON.parse(text) as NicAnswer;
    } catch {
      throw new IrpUnavailable(`the IRP answered HTTP ${response.status} without JSON`, text.slice(0, 500));
    }
  }

  async function authenticate(): Promise<Session> {
    const appKey = randomBytes(32);
    const payload = JSON.stringify({ UserName: creds.username, Password: creds.password, AppKey: appKey.toString('base64'), ForceRefreshAccessToken: false });
    const data = publicEncrypt({ key: creds.public_key ?? options.publicKey, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(payload)).toString('base64');
    const answer = await call('POST', '/eivital/v1.04/auth', baseHeaders, { Data: data });
    if (String(answer.Status) !== '1') throw refusal(answer);
    const result = answer.Data as { AuthToken: string; Sek: string };
    return { authToken: result.AuthToken, sek: aesDecrypt(appKey, result.Sek) };
  }

  async function authorized(method: 'GET' | 'POST', path: string, payload?: unknown): Promise<unknown> {
    session ??= await authenticate();
    const headers = { ...baseHeaders, user_name: creds.username, AuthToken: session.authToken };
    const body = payload === undefined ? undefined : { Data: aesEncrypt(session.sek, Buffer.from(JSON.stringify(payload))) };
    const answer = await call(method, path, headers, body);
    if (String(answer.Status) !== '1') throw refusal(answer);
    return JSON.parse(aesDecrypt(session.sek, String(answer.Data)).toString('utf8'));
  }

  return {
    async generate(document: IrpDocument) {
      return toRegistration((await authorized('POST', '/eicore/v1.03/Invoice', document)) as NicRegistration);
    },
    async findByDocument(ref: IrpDocumentRef) {
      const query = new URLSearchParams({ doctype: ref.type, docnum: ref.number, docdate: ref.date });
      return toRegistration((await authorized('GET', `/eicore/v1.03/Invoice/irnbydocdetails?${query}`)) as NicRegistration);
    },
    async cancel(irn, reasonCode, remarks) {
      const result = (await authorized('POST', '/eicore/v1.03/Invoice/Cancel', { Irn: irn, CnlRsn: String(reasonCode), CnlRem: remarks })) as {
        CancelDate: string;
      };
      return { canceled_at: irpTime(result.CancelDate) };
    },
  };
}
