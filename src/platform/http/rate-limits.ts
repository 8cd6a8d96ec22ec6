import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../errors.js';
import type { Database } from '../db/database.js';
import { SharedCounters, type BudgetOptions, type RateLimitStore } from './rate-limit-store.js';

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

declare module 'fastify' {
  interface FastifyInstance {
    /** The shared budgets' counters (PostgreSQL only); every encapsulated context sees the root's. */
    rateLimitCounters?: SharedCounters;
  }
}

/**
 * Registers @fastify/rate-limit without any global limit; budgets are made with `limiter()` and
 * checked where the request's key is known. On a PostgreSQL server the budgets are held in the
 * database, shared by every process (decision 0270); the embedded database (one process) keeps
 * them in memory.
 */
export async function registerRateLimits(app: FastifyInstance, database?: Pick<Database, 'db' | 'kind'>): Promise<void> {
  if (database?.kind !== 'postgres') {
    await app.register(rateLimit, { global: false });
    return;
  }
  const counters = new SharedCounters(database.db);
  app.decorate('rateLimitCounters', counters);
  app.addHook('onClose', async () => counters.close());
  // The plugin makes its store with `new`; a constructor returning an object answers that object.
  const Store = function SharedStore(): RateLimitStore {
    return counters.store({});
  } as unknown as NonNullable<Parameters<typeof rateLimit>[1]>['store'];
  await app.register(rateLimit, { global: false, store: Store });
}

/**
 * A budget of `max` per `windowMs` keyed by `key` (default: the client address, IPv6 by /64).
 * `max` 0 turns it off. `what` names the requests in the 429 message ("requests", "wrong gift codes").
 * `batched`: counted on every request, so shared across processes within a flush interval rather
 * than exactly (decision 0270); the abuse budgets are exact.
 */
export function limiter(
  app: FastifyInstance,
  options: { max: number; windowMs: number; what: string; key?: (request: FastifyRequest) => string; batched?: boolean },
): Limiter {
  if (options.max <= 0) return open;
  const counters = app.rateLimitCounters;
  const budget: BudgetOptions = counters ? { budget: counters.name(options.what), batched: options.batched === true } : {};
  const check = app.createRateLimit({
    max: options.max,
    timeWindow: options.windowMs,
    ...(options.key ? { keyGenerator: options.key } : {}),
    ...budget,
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
