import { describe, expect, it } from 'vitest';
import { Coalescer } from '../../src/platform/coalesce.js';

describe('Coalescer', () => {
  it('runs calls made in the same turn as one batch and answers each its own output', async () => {
    const batches: number[][] = [];
    const double = new Coalescer<number, number>(async (xs) => {
      batches.push(xs);
      return xs.map((x) => x * 2);
    });
    expect(await Promise.all([1, 2, 3].map((x) => double.call(x)))).toEqual([2, 4, 6]);
    expect(await double.call(4)).toBe(8);
    expect(batches).toEqual([[1, 2, 3], [4]]);
  });

  it('runs a batch as soon as it is full', async () => {
    const sizes: number[] = [];
    const c = new Coalescer<number, number>(async (xs) => (sizes.push(xs.length), xs), { maxBatch: 2 });
    await Promise.all([1, 2, 3, 4, 5].map((x) => c.call(x)));
    expect(sizes).toEqual([2, 2, 1]);
  });

  it('rejects every call of a failed batch, and later batches still run', async () => {
    let fail = true;
    const c = new Coalescer<number, number>(async (xs) => {
      if (fail) throw new Error('database down');
      return xs;
    });
    const results = await Promise.allSettled([c.call(1), c.call(2)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await c.call(3)).toBe(3);
  });

  it('waits windowMs to gather a batch when asked to', async () => {
    const batches: number[][] = [];
    const c = new Coalescer<number, number>(async (xs) => (batches.push(xs), xs), { windowMs: 20 });
    const first = c.call(1);
    await new Promise((r) => setImmediate(r));
    const second = c.call(2);
    await Promise.all([first, second]);
    expect(batches).toEqual([[1, 2]]);
  });
});
