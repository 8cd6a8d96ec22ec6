import { setTimeout as sleep } from 'node:timers/promises';
import { RATE_LIMIT_ABUSE_WINDOW_MS } from '../../src/platform/http/rate-limits.js';

/**
 * On PostgreSQL, budgets count in windows aligned to their length (decision 0270): a test that
 * spends a budget starts well inside a window, or its requests could straddle two.
 */
export async function awayFromWindowEnd(windowMs: number, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await sleep(left + 50);
}

/** Well inside both the per-minute and the abuse (15-minute) windows. */
export async function awayFromWindowEnds(): Promise<void> {
  await awayFromWindowEnd(RATE_LIMIT_ABUSE_WINDOW_MS);
  await awayFromWindowEnd(60_000);
}
