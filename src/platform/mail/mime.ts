import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import { wrap as wrapBase64 } from 'nodemailer/lib/base64';
import { buildHeaderValue, encodeWord, encodeWords, foldLines } from 'nodemailer/lib/mime-funcs';
import { encode as encodeQuotedPrintable, wrap as wrapQuotedPrintable } from 'nodemailer/lib/qp';

/** One message as handed to the SMTP server (the mailer's `OutgoingMail`). */
export type MimeMessage = {
  from: { name: string; address: string };
  to: string;
  replyTo?: string;
  subject: string;
  text: string;
  html?: string;
  /** `<id@domain>`; kept the same across retries so receivers can drop a duplicate. */
  messageId: string;
  attachments: { filename: string; contentType: string; content: Buffer }[];
};

/**
 * The MIME message of one MimeMessage, built in one synchronous pass (RFC 5322, 2045–2047, 2231).
 *
 * Kosh's messages all have one shape: a text part, an optional HTML alternative, optional
 * attachments. nodemailer's MailComposer builds the same message through a tree of streams
 * and took ~0.3 ms per message (about 40 % of Kosh's CPU for an e-mail); this writes the shape
 * directly and leaves every encoding to nodemailer's own encoders (quoted-printable, base64,
 * RFC 2047 words, RFC 2231 parameters, header folding). Decision 0197.
 *
 * - Text parts are always quoted-printable in UTF-8, and attachments base64; boundaries contain
 *   `=_`, which neither encoding ever writes, so no part can contain its boundary.
 * - Header values from tenants (names, subjects) lose control characters first: a CR or LF in a
 *   business name must not start a header of its own.
 */
export function buildMime(mail: MimeMessage, date: Date): Buffer {
  const lines: string[] = [header('From', mailbox(mail.from.name, mail.from.address)), header('To', address(mail.to))];
  if (mail.replyTo) lines.push(header('Reply-To', address(mail.replyTo)));
  lines.push(
    header('Subject', encodeWholeValue(oneLine(mail.subject), 'Q', 52, true)),
    `Message-ID: ${oneLine(mail.messageId)}`,
    `Date: ${date.toUTCString().replace(/GMT/, '+0000')}`,
    'MIME-Version: 1.0',
  );
  const alternative =
    mail.html === undefined
      ? textPart('text/plain', mail.text)
      : multipart('alternative', [textPart('text/plain', mail.text), textPart('text/html', mail.html)]);
  const root = mail.attachments.length === 0 ? alternative : multipart('mixed', [alternative, ...mail.attachments.map(attachmentPart)]);
  lines.push(...root.headers, '', root.body);
  return Buffer.from(lines.join('\r\n'), 'utf8');
}

type Part = { headers: string[]; body: string };

function textPart(type: 'text/plain' | 'text/html', content: string): Part {
  const crlf = content.replace(/\r?\n|\r/g, '\r\n');
  return {
    headers: [`Content-Type: ${type}; charset=utf-8`, 'Content-Transfer-Encoding: quoted-printable'],
    body: wrapQuotedPrintable(encodeQuotedPrintable(crlf), 76),
  };
}

function attachmentPart(attachment: MimeMessage['attachments'][number]): Part {
  const filename = oneLine(attachment.filename);
  const type = /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(attachment.contentType) ? attachment.contentType : 'application/octet-stream';
  return {
    headers: [
      header('Content-Type', buildHeaderValue({ value: type, params: { name: filename } })),
      'Content-Transfer-Encoding: base64',
      header('Content-Disposition', buildHeaderValue({ value: 'attachment', params: { filename } })),
    ],
    body: wrapBase64(attachment.content.toString('base64'), 76),
  };
}

function multipart(subtype: 'alternative' | 'mixed', parts: Part[]): Part {
  const boundary = nextBoundary();
  const body = parts.map((part) => `--${boundary}\r\n${part.headers.join('\r\n')}\r\n\r\n${part.body}\r\n`).join('') + `--${boundary}--\r\n`;
  return { headers: [`Content-Type: multipart/${subtype}; boundary="${boundary}"`], body };
}

/** `=_` never occurs in quoted-printable or base64 output, so the boundary cannot occur in a part. */
const BOUNDARY_PREFIX = `----=_Kosh_${randomBytes(6).toString('hex')}_`;
let boundaries = 0;
function nextBoundary(): string {
  boundaries = (boundaries + 1) % Number.MAX_SAFE_INTEGER;
  return `${BOUNDARY_PREFIX}${boundaries.toString(36)}`;
}

/**
 * nodemailer's own call for Subject: once a value needs encoding, all of it is encoded (some
 * clients drop the whitespace around a lone encoded word). The typings lack the fourth argument.
 */
const encodeWholeValue = encodeWords as (value: string, encoding: 'Q' | 'B', maxLength: number, encodeAll: boolean) => string;

function header(name: string, value: string): string {
  return foldLines(`${name}: ${value}`, 76);
}

/** `Name <address>`: a plain name as is, or quoted when it holds specials, else an RFC 2047 word. */
function mailbox(name: string, emailAddress: string): string {
  const cleanName = oneLine(name).trim();
  if (!cleanName) return address(emailAddress);
  let display: string;
  if (/[^\x20-\x7e]/.test(cleanName)) display = encodeWord(cleanName, 'Q', 52);
  else if (/[()<>[\]:;@\\,."]/.test(cleanName)) display = `"${cleanName.replace(/["\\]/g, '\\$&')}"`;
  else display = cleanName;
  return `${display} <${address(emailAddress)}>`;
}

/** The address with its domain in ASCII (IDNA), as SMTP servers expect it. */
function address(emailAddress: string): string {
  const clean = oneLine(emailAddress).trim();
  const at = clean.lastIndexOf('@');
  if (at < 0) return clean;
  const domain = clean.slice(at + 1);
  return `${clean.slice(0, at)}@${/^[\x20-\x7e]*$/.test(domain) ? domain : domainToASCII(domain) || domain}`;
}

function oneLine(value: string): string {
  // eslint-disable-next-line no-control-regex
  return value.replace(/[\x00-\x1f\x7f]+/g, ' ');
}
