import { describe, expect, it } from 'vitest';
import { toIso } from './time.js';

describe('toIso', () => {
  it('answers the same text whether given a Date or its ISO string, for any instant', () => {
    let seed = 42;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 5_000; i++) {
      const date = new Date(Date.UTC(1970, 0, 1) + Math.floor(next() * 8_000 * 365 * 86_400_000));
      expect(toIso(date.toISOString())).toBe(date.toISOString());
      expect(toIso(date)).toBe(date.toISOString());
    }
  });

  it('normalizes a string that is not already in the canonical form', () => {
    expect(toIso('2026-02-30T00:00:00.000Z')).toBe('2026-03-02T00:00:00.000Z');
    expect(toIso('2026-05-01T10:00:00+05:30')).toBe('2026-05-01T04:30:00.000Z');
    expect(toIso('2026-05-01 04:30:00.5+00')).toBe('2026-05-01T04:30:00.500Z');
  });
});
