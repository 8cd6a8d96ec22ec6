import { z } from 'zod';
import { bodyExample, fields } from '../../platform/http/envelope.js';

export const testClockStatus = z.enum(['ready', 'advancing', 'internal_failure']);

export const createTestClockBody = z
  .object({
    frozen_time: fields.instant().describe("the clock's starting instant: its customers' billing begins here"),
    name: fields.text(200).nullable().optional(),
  })
  .meta(bodyExample({ frozen_time: '2026-01-01T00:00:00Z', name: 'Annual plan, a year ahead' }));
export type CreateTestClockBody = z.infer<typeof createTestClockBody>;

export const advanceTestClockBody = z
  .object({
    to: fields.instant().describe("the new frozen_time: later than the clock's, at most two years ahead of it"),
  })
  .meta(bodyExample({ to: '2026-04-01T00:00:00Z' }));
export type AdvanceTestClockBody = z.infer<typeof advanceTestClockBody>;

export const testClockSchema = z
  .object({
    id: z.uuid(),
    object: z.literal('test_clock'),
    name: z.string().nullable(),
    frozen_time: fields.timestamp(),
    status: testClockStatus.describe('ready; advancing while an advance runs (another is refused with 409); internal_failure when one failed'),
    advancing_to: fields.timestamp().nullable(),
    customer_count: z.int().describe('customers living on this clock'),
    created_at: fields.timestamp(),
    updated_at: fields.timestamp(),
  })
  .meta({ id: 'TestClock' });
export type TestClock = z.infer<typeof testClockSchema>;

export const deletedTestClockSchema = z.object({ id: z.uuid(), object: z.literal('test_clock'), deleted: z.literal(true) }).meta({ id: 'DeletedTestClock' });
