import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * The security headers helmet sets for `options`, computed once. helmet builds its middleware —
 * every directive parsed and joined again — each time it is called, and @fastify/helmet called it
 * on every request; the headers depend on nothing in the request (no per-request nonces here), so
 * the server sets this fixed list instead.
 */
export function securityHeaders(options: HelmetOptions): readonly (readonly [string, string])[] {
  const headers: [string, string][] = [];
  const collect = {
    setHeader(name: string, value: string | number | readonly string[]) {
      headers.push([name.toLowerCase(), Array.isArray(value) ? value.join(', ') : String(value)]);
    },
    removeHeader() {},
  };
  helmet(options)({} as IncomingMessage, collect as unknown as ServerResponse, (error?: unknown) => {
    if (error) throw error;
  });
  return headers;
}
