import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseUsageEvent, usageEventBody } from './usage.schemas.js';

const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

describe('usage event parsing', () => {
  it('the hand-checked fast path agrees with the zod schema on every input', () => {
    const event = fc.record(
      {
        transaction_id: fc.oneof(fc.string({ maxLength: 210 }), fc.integer()),
        customer_id: maybe(fc.oneof(fc.uuid(), fc.string(), fc.constant('00000000-0000-0000-0000-000000000000'))),
        external_customer_id: maybe(fc.oneof(fc.string({ maxLength: 210 }), fc.constant(''))),
        metric_code: fc.oneof(fc.string({ maxLength: 110 }), fc.constant(null)),
        timestamp: maybe(
          fc.oneof(
            fc.date({ min: new Date(-1e13), max: new Date(3e14), noInvalidDate: true }).map((d) => d.toISOString()),
            fc.constantFrom(
              '2031-02-30T00:00:00Z',
              '2031-01-01T24:00:00Z',
              '2031-01-01T00:00:00+05:30',
              '2031-01-01',
              '2031-13-01T00:00:00Z',
              '1969-12-31T23:59:59Z',
            ),
            fc.string(),
          ),
        ),
        properties: maybe(fc.oneof(fc.dictionary(fc.string({ maxLength: 120 }), fc.jsonValue(), { maxKeys: 3 }), fc.array(fc.integer()), fc.constant(null))),
        extra: maybe(fc.string()),
      },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(fc.oneof(event, fc.anything()), (input) => {
        const fast = parseUsageEvent(input);
        const zod = usageEventBody.safeParse(input);
        expect(fast.success).toBe(zod.success);
        if (fast.success && zod.success) expect(fast.data).toEqual(zod.data);
      }),
      { numRuns: 3000 },
    );
  });
});
