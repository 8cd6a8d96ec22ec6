import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';

/**
 * What the local provider servers (razorpay-server.ts, stripe-server.ts) share: a real HTTP
 * server on 127.0.0.1 with a random port, a record of every request Kosh sent, and scripted
 * faults. The providers' behaviour itself lives in each server's `handle`.
 */

export type RecordedRequest = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** The body as the provider parses it (JSON for Razorpay, form encoding for Stripe). */
  body: unknown;
};

/** `text`: sent as is (a hosted page, a redirect) instead of `body` as JSON. */
export type ProviderAnswer = { status: number; body: unknown; headers?: Record<string, string>; text?: string };

/**
 * A scripted fault for the requests it matches (method and a path prefix or pattern):
 * - `status`: answer this status (with `body`) instead of the provider; with `afterProcessing`
 *   the provider does the work first and the answer is lost, as when a gateway times out inside.
 * - `hang`: the provider does the work, and the answer leaves only after `ms` (or never, when the
 *   connection is closed first).
 * - `reset`: the connection is cut (TCP reset) with no answer — with `afterProcessing` after the
 *   provider did the work, as when a connection drops after the request was sent.
 * `times` counts matching requests the fault applies to (default 1), after the first `skip`
 * matching requests (default 0) have passed untouched.
 */
export type Fault = {
  method?: string;
  path: string | RegExp;
  times?: number;
  skip?: number;
} & (
  { kind: 'status'; status: number; body?: unknown; afterProcessing?: boolean } | { kind: 'hang'; ms: number } | { kind: 'reset'; afterProcessing?: boolean }
);

export type ProviderServer = {
  url: string;
  requests: RecordedRequest[];
  /** Adds a fault; faults apply in the order added. */
  fault(fault: Fault): void;
  clearFaults(): void;
  /**
   * While true, nothing listens on the server's port: every new connection is refused
   * (ECONNREFUSED) before a byte of a request is sent, and open connections are closed.
   */
  setRefusingConnections(refusing: boolean): Promise<void>;
  /** Recorded requests matching a method and path (prefix string or pattern). */
  requestsTo(method: string, path: string | RegExp): RecordedRequest[];
  close(): Promise<void>;
};

function matches(path: string | RegExp, actual: string): boolean {
  return typeof path === 'string'
    ? actual === path || actual.startsWith(path.endsWith('/') ? path : `${path}/`) || actual.startsWith(`${path}?`)
    : path.test(actual);
}

export async function startProviderServer(options: {
  parseBody: (raw: string, headers: IncomingHttpHeaders) => unknown;
  handle: (request: RecordedRequest) => ProviderAnswer | Promise<ProviderAnswer>;
  /** The provider's body for a scripted 5xx without its own body. */
  serverErrorBody: (status: number) => unknown;
}): Promise<ProviderServer> {
  const requests: RecordedRequest[] = [];
  const faults: Array<Fault & { left: number; toSkip: number }> = [];
  const timers = new Set<NodeJS.Timeout>();

  const send = (res: ServerResponse, answer: ProviderAnswer) => {
    if (res.destroyed || res.writableEnded) return;
    if (answer.text !== undefined) {
      res.writeHead(answer.status, { 'content-type': 'text/html; charset=utf-8', ...(answer.headers ?? {}) });
      res.end(answer.text);
      return;
    }
    res.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
    res.end(JSON.stringify(answer.body));
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        const url = new URL(req.url ?? '/', 'http://127.0.0.1');
        const recorded: RecordedRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          rawBody,
          body: rawBody === '' ? {} : options.parseBody(rawBody, req.headers),
        };
        requests.push(recorded);
        let fault: (typeof faults)[number] | undefined;
        for (const candidate of faults) {
          if (candidate.left === 0 || (candidate.method && candidate.method !== recorded.method) || !matches(candidate.path, recorded.path)) continue;
          if (candidate.toSkip > 0) {
            candidate.toSkip -= 1;
            continue;
          }
          fault = candidate;
          fault.left -= 1;
          break;
        }
        try {
          if (fault?.kind === 'reset' && !fault.afterProcessing) {
            req.socket.resetAndDestroy();
            return;
          }
          if (fault?.kind === 'status' && !fault.afterProcessing) {
            send(res, { status: fault.status, body: fault.body ?? options.serverErrorBody(fault.status) });
            return;
          }
          const answer = await options.handle(recorded);
          if (fault?.kind === 'reset') req.socket.resetAndDestroy();
          else if (fault?.kind === 'status') send(res, { status: fault.status, body: fault.body ?? options.serverErrorBody(fault.status) });
          else if (fault?.kind === 'hang') {
            const timer = setTimeout(() => {
              timers.delete(timer);
              send(res, answer);
            }, fault.ms);
            timer.unref();
            timers.add(timer);
          } else send(res, answer);
        } catch (error) {
          send(res, { status: 500, body: options.serverErrorBody(500) });
          throw error;
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    fault: (fault) => faults.push({ ...fault, left: fault.times ?? 1, toSkip: fault.skip ?? 0 }),
    clearFaults: () => faults.splice(0, faults.length),
    setRefusingConnections: async (refusing) => {
      if (refusing === !server.listening) return;
      if (refusing) {
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      } else await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    },
    requestsTo: (method, path) => requests.filter((r) => r.method === method && matches(path, r.path)),
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      if (!server.listening) return;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Provider-style ids: a prefix and 14 letters and digits, unique within the server. */
export function providerIdFactory(): (prefix: string) => string {
  let counter = 0;
  return (prefix) => {
    counter += 1;
    const random = randomBytes(12)
      .toString('base64')
      .replace(/[^A-Za-z0-9]/g, '')
      .slice(0, 9);
    return `${prefix}_${counter.toString(36).padStart(5, '0')}${random}`;
  };
}

/**
 * Where a provider's hosted checkout page delivers its signed webhooks when the customer pays:
 * Kosh's endpoint for the connection, and the clock the signature is dated by (Kosh's, in tests).
 */
export type HostedCheckoutTarget = { webhookUrl: string; now: () => Date };

/** A minimal hosted payment page: what is paid for and one Pay button that POSTs back to the page. */
export function hostedPayPage(provider: string, what: string, amount: string, paid: boolean): string {
  const esc = (v: string) => v.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(provider)} checkout</title></head>
<body><main><h1 data-provider>${esc(provider)}</h1><p data-what>${esc(what)}</p><p data-amount>${esc(amount)}</p>
${paid ? '<p data-paid>Already paid.</p>' : ''}<form method="post"><button type="submit" id="provider-pay">Pay ${esc(amount)}</button></form></main></body></html>`;
}

/** POSTs signed webhook deliveries to Kosh, in order, as the provider does after a payment; answers their statuses. */
export async function deliverWebhooks(target: HostedCheckoutTarget, deliveries: { rawBody: Buffer; headers: Record<string, string> }[]): Promise<number[]> {
  const statuses: number[] = [];
  for (const delivery of deliveries) {
    const res = await fetch(target.webhookUrl, { method: 'POST', headers: delivery.headers, body: new Uint8Array(delivery.rawBody) });
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}
