/**
 * How many random histories an invariant harness runs, and from which seed (CONTRIBUTING,
 * "Invariant harness"). `npm test` runs a few histories from a fixed seed, so CI is reproducible
 * and a change that breaks an invariant on those histories fails every time. Longer hunts pick
 * their own:
 *   KOSH_INVARIANT_RUNS=300 KOSH_INVARIANT_SEED=random npx vitest run test/invariants/
 * and a failure printed by fast-check replays with its seed and path:
 *   KOSH_INVARIANT_SEED=<seed> KOSH_INVARIANT_PATH=<path> npx vitest run test/invariants/<file>
 * and KOSH_INVARIANT_END_ON_FAILURE=1 stops a hunt at its first failure, unshrunk (a long history
 * shrinks for many minutes).
 */
export const INVARIANT_RUNS = Number(process.env.KOSH_INVARIANT_RUNS ?? 4);

/** The fixed seed of the default runs. */
const DEFAULT_SEED = 20_261_127;

export function propertyRuns(): { numRuns: number; seed?: number; path?: string; endOnFailure?: boolean } {
  const seed = process.env.KOSH_INVARIANT_SEED;
  const path = process.env.KOSH_INVARIANT_PATH;
  // KOSH_INVARIANT_END_ON_FAILURE=1: stop at the first failing history without shrinking (long hunts).
  const end = process.env.KOSH_INVARIANT_END_ON_FAILURE === '1' ? { endOnFailure: true } : {};
  if (seed === 'random') return { numRuns: INVARIANT_RUNS, ...end };
  if (seed === undefined) return { numRuns: INVARIANT_RUNS, seed: DEFAULT_SEED };
  return { numRuns: INVARIANT_RUNS, seed: Number(seed), ...(path ? { path, endOnFailure: true } : {}) };
}
