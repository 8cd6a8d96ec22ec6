import { constants, createCipheriv, createDecipheriv, createHash, generateKeyPairSync, privateDecrypt, randomBytes, sign, type KeyObject } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local IRP speaking the NIC e-invoice API as its public documentation describes it, for
 * testing Kosh's `nic` provider: `POST /eivital/v1.04/auth` (payload RSA-encrypted with this
 * server's public key; the answer's SEK AES-256-ECB-encrypted with the caller's AppKey), then
 * `POST /eicore/v1.03/Invoice`, `GET /eicore/v1.03/Invoice/irnbydocdetails` and
 * `POST /eicore/v1.03/Invoice/Cancel` with `client_id`, `client_secret`, `Gstin`, `user_name`,
 * `AuthToken` headers and `{ Data }` payloads AES-256-ECB-encrypted with the SEK. It records every
 * request decrypted, as Kosh sent it. Refusals are `{ Status: 0, ErrorDetails: [...] }`; a
 * document number seen before is refused with 2150 (duplicate IRN), a buyer GSTIN marked inactive
 * (`deactivate`) with 3028 (GSTIN not present in the taxpayer master).
 */

/** What the IRP answers in `setDown('html')`: text that must never reach a stored record. */
export const HTML_ANSWER = '<html><title>Router admin</title><body>internal-only page</body></html>';

export type NicRequest = { method: string; path: string; headers: IncomingHttpHeaders; payload: unknown };

const aesEncrypt = (key: Buffer, data: Buffer) => {
  const c = createCipheriv('aes-256-ecb', key, null);
  return Buffer.concat([c.update(data), c.final()]).toString('base64');
};
const aesDecrypt = (key: Buffer, base64: string) => {
  const d = createDecipheriv('aes-256-ecb', key, null);
  return Buffer.concat([d.update(Buffer.from(base64, 'base64')), d.final()]);
};

/**
 * RSA PKCS#1 v1.5 decryption (the IRP's RSA/ECB/PKCS1Padding). Node refuses that padding for
 * private decryption (CVE-2023-46809, a timing oracle — irrelevant to a test server), so the
 * block is decrypted raw and the padding `00 02 <nonzero bytes> 00 <message>` removed here.
 */
function decryptPkcs1(key: KeyObject, data: Buffer): Buffer {
  const block = privateDecrypt({ key, padding: constants.RSA_NO_PADDING }, data);
  if (block[0] !== 0 || block[1] !== 2) throw new Error('not a PKCS#1 v1.5 encryption block');
  return block.subarray(block.indexOf(0, 2) + 1);
}

/** `yyyy-MM-dd HH:mm:ss` in Indian time, the IRP's timestamp format. */
function irpTime(date: Date): string {
  return new Date(date.getTime() + 5.5 * 3600_000).toISOString().slice(0, 19).replace('T', ' ');
}

export async function startNicIrp(options: { username: string; password: string; clientId: string; clientSecret: string; now: () => Date }) {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const sessions = new Map<string, Buffer>();
  const registry = new Map<string, { Irn: string; AckNo: number; AckDt: string; SignedInvoice: string; SignedQRCode: string }>();
  const requests: NicRequest[] = [];
  let down: boolean | 'html' = false;
  const inactive = new Set<string>();
  let ackCounter = 112010000000000;

  const signed = (claims: unknown) => {
    const head = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims)).toString('base64url');
    return `${head}.${body}.${sign('sha256', Buffer.from(`${head}.${body}`), privateKey).toString('base64url')}`;
  };
  const refuse = (code: string, message: string) => ({ Status: 0, ErrorDetails: [{ ErrorCode: code, ErrorMessage: message }] });

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://irp');
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      if (down === 'html') return void res.writeHead(200, { 'content-type': 'text/html' }).end(HTML_ANSWER);
      if (down) return answer(503, { message: 'Service Unavailable' });
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { Data?: string }) : {};
      if (req.headers.client_id !== options.clientId || req.headers.client_secret !== options.clientSecret)
        return answer(200, refuse('1004', 'Invalid client id or secret'));
      if (url.pathname === '/eivital/v1.04/auth' && req.method === 'POST') {
        const payload = JSON.parse(decryptPkcs1(privateKey, Buffer.from(body.Data ?? '', 'base64')).toString('utf8'));
        requests.push({ method: 'POST', path: url.pathname, headers: req.headers, payload });
        if (payload.UserName !== options.username || payload.Password !== options.password) return answer(200, refuse('1005', 'Invalid Token / credentials'));
        const sek = randomBytes(32);
        const token = randomBytes(16).toString('hex');
        sessions.set(token, sek);
        return answer(200, {
          Status: 1,
          Data: {
            ClientId: options.clientId,
            UserName: payload.UserName,
            AuthToken: token,
            Sek: aesEncrypt(Buffer.from(payload.AppKey, 'base64'), sek),
            TokenExpiry: irpTime(new Date(options.now().getTime() + 6 * 3600_000)),
          },
        });
      }
      const sek = sessions.get(String(req.headers.authtoken ?? ''));
      if (!sek || req.headers.user_name !== options.username || !req.headers.gstin) return answer(200, refuse('1005', 'Invalid Token'));
      const payload = body.Data ? JSON.parse(aesDecrypt(sek, body.Data).toString('utf8')) : Object.fromEntries(url.searchParams);
      requests.push({ method: req.method ?? '', path: url.pathname, headers: req.headers, payload });
      const reply = (data: unknown) => answer(200, { Status: 1, Data: aesEncrypt(sek, Buffer.from(JSON.stringify(data))) });
      if (url.pathname === '/eicore/v1.03/Invoice' && req.method === 'POST') {
        const doc = payload as { DocDtls: { Typ: string; No: string; Dt: string }; SellerDtls: { Gstin: string }; BuyerDtls: { Gstin: string } };
        if (inactive.has(doc.BuyerDtls.Gstin)) return answer(200, refuse('3028', `GSTIN - ${doc.BuyerDtls.Gstin} is not present in taxpayer master`));
        const key = `${doc.DocDtls.Typ}|${doc.DocDtls.No}|${doc.DocDtls.Dt}`;
        const seen = registry.get(key);
        if (seen)
          return answer(200, {
            ...refuse('2150', 'Duplicate IRN'),
            InfoDtls: [{ InfCd: 'DUPIRN', Desc: { AckNo: seen.AckNo, AckDt: seen.AckDt, Irn: seen.Irn } }],
          });
        const [, mm, yyyy] = doc.DocDtls.Dt.split('/').map(Number);
        const fyStart = mm! >= 4 ? yyyy! : yyyy! - 1;
        const irn = createHash('sha256')
          .update(`${doc.SellerDtls.Gstin}${fyStart}-${String((fyStart + 1) % 100).padStart(2, '0')}${doc.DocDtls.Typ}${doc.DocDtls.No}`)
          .digest('hex');
        const ackDt = irpTime(options.now());
        const record = {
          Irn: irn,
          AckNo: ++ackCounter,
          AckDt: ackDt,
          SignedInvoice: signed({ data: JSON.stringify(payload) }),
          SignedQRCode: signed({ data: JSON.stringify({ Irn: irn, DocNo: doc.DocDtls.No }) }),
        };
        registry.set(key, record);
        return reply({ ...record, Status: 'ACT' });
      }
      if (url.pathname === '/eicore/v1.03/Invoice/irnbydocdetails' && req.method === 'GET') {
        const seen = registry.get(`${url.searchParams.get('doctype')}|${url.searchParams.get('docnum')}|${url.searchParams.get('docdate')}`);
        return seen ? reply({ ...seen, Status: 'ACT' }) : answer(200, refuse('2283', 'IRN details are not found'));
      }
      if (url.pathname === '/eicore/v1.03/Invoice/Cancel' && req.method === 'POST') {
        const { Irn } = payload as { Irn: string };
        return reply({ Irn, CancelDate: irpTime(options.now()) });
      }
      return answer(404, { message: 'not found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    publicKey: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    requests,
    /** Registers a document as if an earlier, lost answer had done it (for the duplicate-IRN path). */
    preRegister(type: string, number: string, date: string, irn: string) {
      registry.set(`${type}|${number}|${date}`, {
        Irn: irn,
        AckNo: 999000000000001,
        AckDt: irpTime(options.now()),
        SignedInvoice: 'x.y.z',
        SignedQRCode: signed({ data: JSON.stringify({ Irn: irn }) }),
      });
    },
    /** Buyer GSTINs the IRP's taxpayer master does not know (refused with 3028). */
    deactivate(gstin: string) {
      inactive.add(gstin);
    },
    /** true: 503; 'html': 200 with an HTML page (what a wrong address would answer). */
    setDown(value: boolean | 'html') {
      down = value;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
