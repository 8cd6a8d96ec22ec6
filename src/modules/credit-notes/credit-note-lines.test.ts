import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { allocateProRata, splitLines, sumLines, type LineRemaining } from './credit-note-lines.js';

const line = (position: number, subtotal: number, igst: number): LineRemaining => ({
  invoice_line_id: `line-${position}`,
  position,
  hsn_code: '998314',
  rate_bp: 1800,
  subtotal,
  cgst_amount: 0,
  sgst_amount: 0,
  igst_amount: igst,
  total: subtotal + igst,
});

describe('credit note lines', () => {
  describe('allocateProRata', () => {
    it.each([
      { lines: [line(1, 10_000, 1_800), line(2, 10_000, 500)], amount: 11_150, shares: [5_900, 5_250] },
      { lines: [line(1, 1, 0), line(2, 1, 0), line(3, 1, 0)], amount: 2, shares: [1, 1] },
      { lines: [line(1, 0, 0), line(2, 100, 18)], amount: 118, shares: [118] },
    ])('spreads $amount over what the lines have left, to the unit', ({ lines, amount, shares }) => {
      expect(allocateProRata(lines, amount).map((s) => s.amount)).toEqual(shares);
    });

    it('never gives a line more than it has left, and the shares add up to the amount', () => {
      const lineArb = fc.tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 2_000_000 }));
      fc.assert(
        fc.property(fc.array(lineArb, { minLength: 1, maxLength: 6 }), fc.double({ min: 0, max: 1, noNaN: true }), (parts, fraction) => {
          const lines = parts.map(([subtotal, igst], i) => line(i + 1, subtotal, igst));
          const left = lines.reduce((sum, l) => sum + l.total, 0);
          fc.pre(left > 0);
          const amount = Math.max(1, Math.floor(left * fraction));
          const credited = splitLines(allocateProRata(lines, amount));
          for (const c of credited) {
            expect(c.split.total).toBeLessThanOrEqual(c.line.total);
            expect(c.split.igst_amount).toBeLessThanOrEqual(c.line.igst_amount);
            expect(c.split.subtotal).toBeLessThanOrEqual(c.line.subtotal);
          }
          expect(sumLines(credited).total).toBe(amount);
        }),
      );
    });
  });
});
