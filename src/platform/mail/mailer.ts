// nodemailer loads with the first message, not at start-up.
import type { createTransport as CreateTransport } from 'nodemailer';
import type { Config } from '../config.js';

/** One message as handed to the SMTP server. */
export type OutgoingMail = {
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

export type MailReceipt = { messageId: string; response: string };

export type Mailer = { send(mail: OutgoingMail): Promise<MailReceipt> };

/** Whether this deployment can send e-mail at all (SPEC 4.8: "no email provider configured"). */
export function isMailConfigured(config: Pick<Config, 'smtpUrl'>): boolean {
  return config.smtpUrl !== undefined;
}

/**
 * `MAIL_FROM` ("Name <address>" or a bare address) split into its parts. The address is ours;
 * the display name may be replaced per message by the sending business's name.
 */
export function parseMailFrom(mailFrom: string): { name: string; address: string } {
  const angled = /^\s*"?([^"<]*?)"?\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(mailFrom);
  if (angled) return { name: angled[1]!.trim(), address: angled[2]! };
  const bare = mailFrom.trim();
  if (/^[^\s<>@]+@[^\s<>@]+$/.test(bare)) return { name: '', address: bare };
  throw new Error(`MAIL_FROM is not an e-mail address: "${mailFrom}"`);
}

/**
 * Timeouts well under the job lease (5 min), so a server that stalls fails this attempt instead
 * of letting the lease expire while the first attempt might still complete (a double send).
 * Query parameters of SMTP_URL (`?socketTimeout=…`) override them.
 */
const TIMEOUTS = { connectionTimeout: 30_000, greetingTimeout: 30_000, socketTimeout: 60_000 };

/**
 * A Mailer over nodemailer's SMTP transport. `SMTP_URL` is `smtp://user:pass@host:587` (STARTTLS
 * when offered) or `smtps://…:465` (TLS from the start); nodemailer's URL options apply, e.g.
 * `?ignoreTLS=true` or `?tls.rejectUnauthorized=false`. One connection per message: mail volume
 * here is invoices and sign-in links, not bulk.
 */
export function createSmtpMailer(smtpUrl: string): Mailer {
  return {
    async send(mail) {
      const { createTransport } = (await import('nodemailer')) as { createTransport: typeof CreateTransport };
      const transport = createTransport({ url: smtpUrl, ...TIMEOUTS });
      try {
        const info = await transport.sendMail({
          from: mail.from.name ? { name: mail.from.name, address: mail.from.address } : mail.from.address,
          to: mail.to,
          replyTo: mail.replyTo,
          subject: mail.subject,
          text: mail.text,
          html: mail.html,
          messageId: mail.messageId,
          attachments: mail.attachments,
        });
        return { messageId: String(info.messageId ?? mail.messageId), response: String(info.response ?? '') };
      } finally {
        transport.close();
      }
    },
  };
}
