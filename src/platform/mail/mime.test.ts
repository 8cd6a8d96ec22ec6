import { simpleParser } from 'mailparser';
import { describe, expect, it } from 'vitest';
import { buildMime, type MimeMessage } from './mime.js';

/**
 * buildMime's messages read back by mailparser (an independent MIME parser, the one the
 * nodemailer project maintains): what a mail client would show is what Kosh meant to send.
 */

const sentAt = new Date('2026-11-24T09:30:00Z');

function mail(overrides: Partial<MimeMessage> = {}): MimeMessage {
  return {
    from: { name: 'Acme Pvt Ltd', address: 'billing@kosh.test' },
    to: 'asha@example.com',
    subject: 'Invoice INV-0001',
    text: 'Hello Asha,\nyour invoice is ready.',
    messageId: '<a1b2@kosh.test>',
    attachments: [],
    ...overrides,
  };
}

describe('buildMime', () => {
  it('writes a text part and an HTML alternative with the headers a client shows', async () => {
    const parsed = await simpleParser(buildMime(mail({ html: '<p>Hello <b>Asha</b></p>', replyTo: 'accounts@acme.example' }), sentAt));
    expect(parsed.from?.value).toEqual([{ name: 'Acme Pvt Ltd', address: 'billing@kosh.test' }]);
    expect(parsed.to && !Array.isArray(parsed.to) ? parsed.to.value : []).toEqual([{ name: '', address: 'asha@example.com' }]);
    expect(parsed.replyTo?.value).toEqual([{ name: '', address: 'accounts@acme.example' }]);
    expect(parsed.subject).toBe('Invoice INV-0001');
    expect(parsed.messageId).toBe('<a1b2@kosh.test>');
    expect(parsed.date?.toISOString()).toBe('2026-11-24T09:30:00.000Z');
    expect(parsed.headers.get('mime-version')).toBe('1.0');
    expect(parsed.text).toBe('Hello Asha,\nyour invoice is ready.');
    expect(parsed.html).toBe('<p>Hello <b>Asha</b></p>');
  });

  it('keeps non-ASCII text, long lines, trailing spaces and lines that start with a dot', async () => {
    const text = [
      `₹1,180.00 due — ${'very long line '.repeat(12)}`,
      'trailing spaces   ',
      '.a line starting with a dot',
      '',
      'From the start of a line, = signs and tabs\there',
    ].join('\n');
    const raw = buildMime(mail({ text, html: `<p>${'₹ '.repeat(80)}</p>`, subject: 'Rechnung für Ünïcode — ₹ 1,180' }), sentAt);
    for (const line of raw.toString('latin1').split('\r\n')) expect(line.length).toBeLessThanOrEqual(78);
    const parsed = await simpleParser(raw);
    expect(parsed.text).toBe(text);
    expect(parsed.html).toBe(`<p>${'₹ '.repeat(80)}</p>`);
    expect(parsed.subject).toBe('Rechnung für Ünïcode — ₹ 1,180');
  });

  it('encodes a business name with specials or non-ASCII letters', async () => {
    for (const name of ['Sharma & Sons, Pvt. Ltd.', 'शर्मा ट्रेडर्स', 'Quote "Q" \\ Co']) {
      const parsed = await simpleParser(buildMime(mail({ from: { name, address: 'billing@kosh.test' } }), sentAt));
      expect(parsed.from?.value).toEqual([{ name, address: 'billing@kosh.test' }]);
    }
  });

  it('cannot be made to carry an extra header through a name or a subject', async () => {
    const raw = buildMime(mail({ from: { name: 'Acme\r\nBcc: victim@example.com', address: 'billing@kosh.test' }, subject: 'Hi\r\nX-Injected: yes' }), sentAt);
    const parsed = await simpleParser(raw);
    expect(parsed.headers.has('bcc')).toBe(false);
    expect(parsed.headers.has('x-injected')).toBe(false);
    expect(parsed.subject).toBe('Hi X-Injected: yes');
  });

  it('attaches files as base64 parts with their names, ASCII or not', async () => {
    const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.alloc(5000, 7)]);
    const parsed = await simpleParser(
      buildMime(
        mail({
          html: '<p>Attached</p>',
          attachments: [
            { filename: 'INV-0001.pdf', contentType: 'application/pdf', content: pdf },
            { filename: 'चालान 1.txt', contentType: 'text/plain', content: Buffer.from('नमस्ते') },
          ],
        }),
        sentAt,
      ),
    );
    expect(parsed.text).toBe('Hello Asha,\nyour invoice is ready.');
    expect(parsed.html).toBe('<p>Attached</p>');
    expect(parsed.attachments.map((a) => [a.filename, a.contentType, a.contentDisposition])).toEqual([
      ['INV-0001.pdf', 'application/pdf', 'attachment'],
      ['चालान 1.txt', 'text/plain', 'attachment'],
    ]);
    expect(parsed.attachments[0]!.content.equals(pdf)).toBe(true);
    expect(parsed.attachments[1]!.content.toString('utf8')).toBe('नमस्ते');
  });

  it('writes a text-only message as a single part', async () => {
    const raw = buildMime(mail(), sentAt).toString('latin1');
    expect(raw).toMatch(/^Content-Type: text\/plain; charset=utf-8$/m);
    expect(raw).not.toMatch(/multipart/);
    expect((await simpleParser(Buffer.from(raw, 'latin1'))).text).toBe('Hello Asha,\nyour invoice is ready.');
  });

  it('gives every multipart message its own boundary', () => {
    const boundary = (raw: Buffer) => /boundary="([^"]+)"/.exec(raw.toString('latin1'))![1];
    const first = boundary(buildMime(mail({ html: '<p>a</p>' }), sentAt));
    expect(first).toContain('=_');
    expect(boundary(buildMime(mail({ html: '<p>a</p>' }), sentAt))).not.toBe(first);
  });
});
