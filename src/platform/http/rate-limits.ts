import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';

/** The window of the abuse budgets (failed admin tokens, portal sign-in e-mails, wrong gift codes). */
export const RATE_LIMIT_ABUSE_WINDOW_MS = 15 * 60_000;

/** One request budget: `max` requests per `windowMs` for each key (a client address, an API key…). */
export type Limiter = {
  /** Counts this request; over the budget it answers 429 (RateLimit-* headers either way). */
  hit(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Answers 429 when the budget is already spent, without counting (checked before the work). */
  assertOpen(request: FastifyRequest, reply: FastifyReply): Promise<void>;
  /** Counts one failure (a wrong token or code) after the work found it wrong. */
  fail(request: FastifyRequest): Promise<void>;
};

type Outcome = { isAllowed: boolean; max?: number; remaining?: number; ttlInSeconds?: number; isExceeded?: boolean };
type Check = (request: FastifyRequest, options?: { increment?: boolean }) => Promise<Outcome>;

const open: Limiter = { hit: async () => {}, assertOpen: async () => {}, fail: async () => {} };

function setHeaders(reply: FastifyReply, outcome: Outcome): void {
  if (outcome.isAllowed || outcome.max === undefined) return;
  reply.header('ratelimit-limit', String(outcome.max));
  reply.header('ratelimit-remaining', String(outcome.remaining ?? 0));
  reply.header('ratelimit-reset', String(Math.max(1, outcome.ttlInSeconds ?? 1)));
}

function refuse(reply: FastifyReply, outcome: Outcome, what: string): never {
  const seconds = Math.max(1, outcome.ttlInSeconds ?? 1);
  reply.header('ratelimit-remaining', '0');
  reply.header('retry-after', String(seconds));
  throw errors.rateLimited(`too many ${what}; retry in ${seconds} s`, 'rate_limited');
}

/**
 * Registers @fastify/rate-limit (in-memory store, one per budget, per process) without any global
 * limit; budgets are made with `limiter()` and checked where the request's key is known.
 */
export async function registerRateLimits(app: FastifyInstance): Promise<void> {
  await app.register(rateLimit, { global: false });
}

/**
 * A budget of `max` per `windowMs` keyed by `key` (default: the client address, IPv6 by /64).
 * `max` 0 turns it off. `what` names the requests in the 429 message ("requests", "wrong gift codes").
 */
export function limiter(app: FastifyInstance, options: { max: number; windowMs: number; what: string; key?: (request: FastifyRequest) => string }): Limiter {
  if (options.max <= 0) return open;
  const check = app.createRateLimit({
    max: options.max,
    timeWindow: options.windowMs,
    ...(options.key ? { keyGenerator: options.key } : {}),
  }) as Check;
  return {
    async hit(request, reply) {
      const outcome = await check(request);
      setHeaders(reply, outcome);
      if (outcome.isExceeded) refuse(reply, outcome, options.what);
    },
    async assertOpen(request, reply) {
      const outcome = await check(request, { increment: false });
      if (!outcome.isAllowed && (outcome.remaining ?? 1) <= 0) {
        setHeaders(reply, outcome);
        refuse(reply, outcome, options.what);
      }
    },
    async fail(request) {
      await check(request);
    },
  };
}
