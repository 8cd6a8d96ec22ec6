import { z } from 'zod';
import { fields } from '../../platform/http/envelope.js';

const filing = z.object({ filed_at: fields.timestamp(), arn: z.string().nullable() });

export const periodSchema = z
  .object({
    entity_id: z.uuid(),
    period: z.string().describe('YYYY-MM, a calendar month in the entity time zone'),
    status: z.enum(['open', 'closed']),
    closed_at: fields.timestamp().nullable(),
    closed_by: z.string().nullable(),
    reopened_at: fields.timestamp().nullable(),
    reopened_by: z.string().nullable(),
    reopen_reason: z.string().nullable(),
    gst_filed: z.object({ gstr1: filing.optional(), gstr3b: filing.optional() }),
  })
  .meta({ id: 'Period' });
export type Period = z.infer<typeof periodSchema>;

/** The period is checked after the entity (a foreign entity answers 404 whatever the period). */
export const periodParams = z.object({ id: z.uuid({ message: 'must be a UUID' }), period: z.string().max(32).describe('YYYY-MM') });
export const gstPeriodParams = z.object({
  period: z
    .string()
    .regex(/^\d{4}-\d{2}$|^\d{6}$/, 'must be YYYY-MM (or MMYYYY)')
    .describe('YYYY-MM'),
});

export const reopenPeriodBody = z.object({ reason: fields.requiredText(500) });

export const recordFilingBody = z.object({
  entity_id: z.uuid(),
  arn: z.string().trim().min(1).max(64).optional().describe('the acknowledgement reference number the GST portal gave'),
  filed_at: fields.instant().optional().describe('when it was filed (default: now); not in the future'),
});
export type RecordFilingBody = z.infer<typeof recordFilingBody>;
