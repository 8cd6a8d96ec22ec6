// nodemailer loads with the first message, not at start-up.
import type { createTransport as CreateTransport, Transporter } from 'nodemailer';
import { systemClock } from '../clock.js';
import type { Config } from '../config.js';
import type { buildMime as BuildMime, MimeMessage } from './mime.js';

/** One message as handed to the SMTP server. */
export type OutgoingMail = MimeMessage;

export type MailReceipt = { messageId: string; response: string };

/** Sends messages; `close()` ends its SMTP connections (the app's close calls it). */
export type Mailer = { send(mail: OutgoingMail): Promise<MailReceipt>; close(): void };

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
 * Pooled connections: a few SMTP sessions are kept open and each carries many messages one after
 * the other, instead of a TCP connect, greeting, EHLO and QUIT per message (which held delivery to
 * a few hundred messages a second). A pooled connection is closed after `maxMessages` messages or
 * when idle, and reopened on demand. `?maxConnections=…&maxMessages=…&pool=false` on SMTP_URL
 * override these (a provider that limits concurrent sessions).
 */
export const SMTP_POOL = { pool: true, maxConnections: 8, maxMessages: 500 } as const;

/**
 * A Mailer over nodemailer's SMTP transport. `SMTP_URL` is `smtp://user:pass@host:587` (STARTTLS
 * when offered) or `smtps://…:465` (TLS from the start); nodemailer's URL options apply, e.g.
 * `?ignoreTLS=true` or `?tls.rejectUnauthorized=false`. The transport (a pool, SMTP_POOL) is made
 * with the first message and lives until `close()`.
 */
export function createSmtpMailer(smtpUrl: string, options: { maxWaitMs?: number } = {}): Mailer {
  let transport: Promise<{ buildMime: typeof BuildMime; transport: Transporter }> | undefined;
  let closed = false;
  const slots = new Slots(connectionsOf(smtpUrl), options.maxWaitMs ?? MAX_WAIT_MS);
  const open = async () => {
    const { createTransport } = (await import('nodemailer')) as { createTransport: typeof CreateTransport };
    const { buildMime } = await import('./mime.js');
    return { buildMime, transport: createTransport({ url: smtpUrl, ...SMTP_POOL, ...TIMEOUTS }) };
  };
  return {
    async send(mail) {
      if (closed) throw new Error('the mailer is closed');
      transport ??= open();
      const { buildMime, transport: pool } = await transport;
      // The MIME message is built into one buffer here (mime.ts) and handed over raw: streamed by
      // nodemailer it reached the socket as many small writes (a system call each).
      // Date: when the message leaves, on the real clock (receivers compare it with their own).
      const raw = buildMime(mail, systemClock.now());
      await slots.acquire();
      let info;
      try {
        info = await pool.sendMail({ envelope: { from: mail.from.address, to: [mail.to] }, raw });
      } finally {
        slots.release();
      }
      // A raw message's Message-ID is the one composed into it (nodemailer reports a made-up one).
      return { messageId: mail.messageId, response: String(info.response ?? '') };
    },
    close() {
      closed = true;
      slots.refuseWaiting();
      void transport?.then((t) => t.transport.close());
    },
  };
}

/**
 * How long a message may wait for a free pooled connection before the attempt gives up (and is
 * retried with the mail backoff). Bounding the wait keeps a claimed job's send well inside its
 * 5-minute lease even when the server stalls: nodemailer would otherwise hold the queued message
 * and might send it after the lease expired and another worker had claimed the job (a double send).
 */
const MAX_WAIT_MS = 60_000;

function connectionsOf(smtpUrl: string): number {
  const query = new URL(smtpUrl).searchParams;
  if (query.get('pool') === 'false') return 1;
  const n = Number(query.get('maxConnections'));
  return Number.isInteger(n) && n > 0 ? n : SMTP_POOL.maxConnections;
}

/** At most `size` messages handed to nodemailer at once; the rest wait here, for at most `maxWaitMs`. */
class Slots {
  private busy = 0;
  private readonly waiting: { grant: () => void; refuse: (e: Error) => void }[] = [];

  constructor(
    private readonly size: number,
    private readonly maxWaitMs: number,
  ) {}

  acquire(): Promise<void> {
    if (this.busy < this.size) {
      this.busy += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry = {
        grant: () => {
          clearTimeout(timer);
          resolve();
        },
        refuse: (error: Error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(entry), 1);
        reject(new Error(`no SMTP connection became free within ${this.maxWaitMs / 1000} s`));
      }, this.maxWaitMs);
      this.waiting.push(entry);
    });
  }

  /** Hands the slot to the next waiting message, if any. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next.grant();
    else this.busy -= 1;
  }

  refuseWaiting(): void {
    for (const entry of this.waiting.splice(0)) entry.refuse(new Error('the mailer is closed'));
  }
}
