import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/**
 * A real webhook receiver on 127.0.0.1 for tests and the benchmark. Every request is verified
 * with the published `standardwebhooks` library (not Kosh's own code); a request that does not
 * verify is answered 400, as a careful receiver would. It can be told to fail with a status,
 * to hang (never answer), or to redirect.
 */

export type ReceiverBehaviour = { kind: 'ok' } | { kind: 'fail'; status: number } | { kind: 'hang' } | { kind: 'redirect'; status?: number; location: string };

export type ReceivedRequest = {
  headers: IncomingHttpHeaders;
  body: string;
  /** The verified, parsed payload; undefined when verification failed. */
  event: { id: string; type: string; created_at: string; tenant_id: string; data: { object: Record<string, unknown> } } | undefined;
  verified: boolean;
  verifyError: string | undefined;
  /** What the receiver answered (undefined while hanging). */
  answered: number | undefined;
};

export type ReceiverOptions = {
  /** Secret(s) to verify with; a request verifies when any of them matches. Set later with `setSecrets`. */
  secrets?: string[];
  /**
   * The receiver's "now" for the library's timestamp tolerance (±5 min). Kosh under test runs on
   * a ManualClock, so tests pass that clock here; the signature check itself is the library's.
   * Defaults to real time.
   */
  now?: () => Date;
  behaviour?: ReceiverBehaviour;
  /** Keep request records (the benchmark turns this off and only counts). */
  record?: boolean;
};

export type WebhookReceiver = {
  url: string;
  received: ReceivedRequest[];
  /** Requests that verified. */
  verifiedCount: () => number;
  /** Requests that arrived (verified or not). */
  count: () => number;
  /** Requests being held open by the `hang` behaviour. */
  openRequests: () => number;
  setSecrets: (secrets: string[]) => void;
  behave: (behaviour: ReceiverBehaviour) => void;
  /** Resolves once `n` requests have arrived; rejects after `timeoutMs` (default 15 s). */
  waitForRequests: (n: number, timeoutMs?: number) => Promise<void>;
  close: () => Promise<void>;
};

/** The library checks webhook-timestamp against Date.now(); judge it against the given clock instead. */
function verifierFor(secret: string, now: (() => Date) | undefined): Webhook {
  const webhook = new Webhook(secret);
  if (now) {
    (webhook as unknown as { verifyTimestamp: (header: string) => Date }).verifyTimestamp = (header: string) => {
      const timestamp = Number.parseInt(header, 10);
      if (Number.isNaN(timestamp)) throw new Error('Invalid Signature Headers');
      const current = Math.floor(now().getTime() / 1000);
      if (current - timestamp > 300) throw new Error('Message timestamp too old');
      if (timestamp > current + 300) throw new Error('Message timestamp too new');
      return new Date(timestamp * 1000);
    };
  }
  return webhook;
}

export async function startWebhookReceiver(options: ReceiverOptions = {}): Promise<WebhookReceiver> {
  let verifiers = (options.secrets ?? []).map((s) => verifierFor(s, options.now));
  let behaviour: ReceiverBehaviour = options.behaviour ?? { kind: 'ok' };
  const record = options.record ?? true;
  const received: ReceivedRequest[] = [];
  const hanging = new Set<ServerResponse>();
  let arrived = 0;
  let verified = 0;
  const waiters: { n: number; resolve: () => void }[] = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : (v ?? '')]));
      let event: ReceivedRequest['event'];
      let verifyError: string | undefined = verifiers.length ? undefined : 'no secret configured';
      for (const verifier of verifiers) {
        try {
          event = verifier.verify(body, headers) as ReceivedRequest['event'];
          verifyError = undefined;
          break;
        } catch (error) {
          verifyError = (error as Error).message;
        }
      }
      const entry: ReceivedRequest = { headers: req.headers, body, event, verified: event !== undefined, verifyError, answered: undefined };
      if (record) received.push(entry);
      arrived += 1;
      if (entry.verified) verified += 1;
      for (const w of waiters.filter((x) => arrived >= x.n)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }

      const answer = (status: number, extra: Record<string, string> = {}) => {
        entry.answered = status;
        res.writeHead(status, { 'content-type': 'text/plain', ...extra });
        res.end(status < 300 ? 'ok' : 'no');
      };
      if (!entry.verified) return answer(400);
      switch (behaviour.kind) {
        case 'ok':
          return answer(200);
        case 'fail':
          return answer(behaviour.status);
        case 'redirect':
          return answer(behaviour.status ?? 302, { location: behaviour.location });
        case 'hang':
          hanging.add(res);
          res.on('close', () => hanging.delete(res));
          return;
      }
    });
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    received,
    verifiedCount: () => verified,
    count: () => arrived,
    openRequests: () => hanging.size,
    setSecrets: (secrets) => {
      verifiers = secrets.map((s) => verifierFor(s, options.now));
    },
    behave: (next) => {
      behaviour = next;
    },
    waitForRequests: (n, timeoutMs = 15_000) =>
      new Promise<void>((resolve, reject) => {
        if (arrived >= n) return resolve();
        const timer = setTimeout(() => reject(new Error(`receiver got ${arrived} of ${n} requests`)), timeoutMs);
        waiters.push({
          n,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
