import type { AddressInfo } from 'node:net';
import { SMTPServer, type SMTPServerSession } from 'smtp-server';

/**
 * A real SMTP server on 127.0.0.1 for tests (the `smtp-server` package): Kosh talks SMTP to it
 * over TCP exactly as to a provider. It keeps every accepted message, parsed just enough for
 * assertions (headers, the text part, attachments), and can be told to refuse recipients.
 * No MIME library is installed, so the small parser below decodes what nodemailer writes:
 * multipart bodies, base64 and quoted-printable parts, RFC 2047 encoded words.
 */

export type ReceivedAttachment = { filename: string | undefined; contentType: string; content: Buffer };

export type ReceivedMail = {
  /** SMTP envelope: what the server was told in MAIL FROM / RCPT TO. */
  envelope: { from: string | undefined; to: string[] };
  /** Decoded header values, lower-case names (last one wins). */
  headers: Record<string, string>;
  subject: string;
  text: string | undefined;
  html: string | undefined;
  attachments: ReceivedAttachment[];
  raw: Buffer;
};

export type SinkBehaviour = { kind: 'accept' } | { kind: 'reject-recipient'; code: number; message?: string };

export type MailSink = {
  url: string;
  port: number;
  messages: ReceivedMail[];
  /** RCPT TO commands seen, accepted or not: how many delivery attempts reached the server. */
  recipientAttempts: string[];
  behave: (behaviour: SinkBehaviour) => void;
  close: () => Promise<void>;
};

type Part = { headers: Record<string, string>; body: string };

function splitHeaders(raw: string): Part {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end === -1 ? raw : raw.slice(0, end);
  const body = end === -1 ? '' : raw.slice(end).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

/** Bytes held in a "binary" (latin1) string, decoded as UTF-8. */
const utf8 = (binary: string) => Buffer.from(binary, 'latin1').toString('utf8');

function decodeQuotedPrintable(value: string): Buffer {
  const soft = value.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else bytes.push(soft.charCodeAt(i) & 0xff);
  }
  return Buffer.from(bytes);
}

/** RFC 2047: `=?UTF-8?B?…?=` and `=?UTF-8?Q?…?=`; whitespace between adjacent encoded words is dropped. */
export function decodeEncodedWords(value: string): string {
  return value
    .replace(/(\?=)\s+(=\?)/g, '$1$2')
    .replace(/=\?([^?]+)\?([BbQq])\?([^?]*)\?=/g, (_m, _charset: string, encoding: string, text: string) =>
      encoding.toUpperCase() === 'B' ? Buffer.from(text, 'base64').toString('utf8') : decodeQuotedPrintable(text.replace(/_/g, ' ')).toString('utf8'),
    );
}

function parameter(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  const match = new RegExp(`;\\s*${name}\\*?=("([^"]*)"|[^;\\s]+)`, 'i').exec(header);
  if (!match) return undefined;
  const value = match[2] ?? match[1]!;
  // RFC 2231 (name*=utf-8''…) as nodemailer writes non-ASCII file names.
  const extended = /^([^']*)'[^']*'(.*)$/.exec(value);
  return extended ? decodeURIComponent(extended[2]!) : decodeEncodedWords(value);
}

function decodeBody(part: Part): Buffer {
  const encoding = (part.headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  if (encoding === 'base64') return Buffer.from(part.body.replace(/\s+/g, ''), 'base64');
  if (encoding === 'quoted-printable') return decodeQuotedPrintable(part.body);
  return Buffer.from(part.body, 'latin1');
}

function walk(part: Part, mail: Pick<ReceivedMail, 'text' | 'html' | 'attachments'>): void {
  const type = part.headers['content-type'] ?? 'text/plain';
  const mime = type.split(';')[0]!.trim().toLowerCase();
  if (mime.startsWith('multipart/')) {
    const boundary = parameter(type, 'boundary');
    if (!boundary) return;
    const sections = part.body.split(`--${boundary}`).slice(1);
    for (const section of sections) {
      if (section.startsWith('--')) break;
      // The line break before a boundary belongs to the boundary (RFC 2046), not to the part.
      walk(splitHeaders(section.replace(/^\r?\n/, '').replace(/\r?\n$/, '')), mail);
    }
    return;
  }
  const disposition = part.headers['content-disposition'];
  const filename = parameter(disposition, 'filename') ?? parameter(type, 'name');
  const content = decodeBody(part);
  if (disposition?.toLowerCase().startsWith('attachment') || filename) {
    mail.attachments.push({ filename, contentType: mime, content });
  } else if (mime === 'text/plain' && mail.text === undefined) {
    mail.text = content.toString('utf8');
  } else if (mime === 'text/html' && mail.html === undefined) {
    mail.html = content.toString('utf8');
  }
}

export function parseMail(raw: Buffer, envelope: ReceivedMail['envelope']): ReceivedMail {
  const top = splitHeaders(raw.toString('latin1'));
  const headers = Object.fromEntries(Object.entries(top.headers).map(([k, v]) => [k, decodeEncodedWords(utf8(v))]));
  const mail: ReceivedMail = { envelope, headers, subject: headers.subject ?? '', text: undefined, html: undefined, attachments: [], raw };
  walk(top, mail);
  return mail;
}

function addresses(session: SMTPServerSession): ReceivedMail['envelope'] {
  const from = session.envelope.mailFrom;
  return { from: from ? from.address : undefined, to: session.envelope.rcptTo.map((r) => r.address) };
}

export async function startMailSink(): Promise<MailSink> {
  const messages: ReceivedMail[] = [];
  const recipientAttempts: string[] = [];
  let behaviour: SinkBehaviour = { kind: 'accept' };
  const server = new SMTPServer({
    authOptional: true,
    // Plain SMTP on loopback: no certificate to trust, nothing for STARTTLS to negotiate.
    disabledCommands: ['STARTTLS'],
    logger: false,
    onRcptTo(address, _session, callback) {
      recipientAttempts.push(address.address);
      if (behaviour.kind === 'reject-recipient') {
        const error = new Error(behaviour.message ?? 'mailbox unavailable') as Error & { responseCode: number };
        error.responseCode = behaviour.code;
        return callback(error);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('error', callback);
      stream.on('end', () => {
        messages.push(parseMail(Buffer.concat(chunks), addresses(session)));
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    messages,
    recipientAttempts,
    behave: (next) => {
      behaviour = next;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
