import { z } from 'zod';

export const returnQuery = z.object({
  entity_id: z.uuid(),
  period: z
    .string()
    .regex(/^(0[1-9]|1[0-2])20[0-9]{2}$/, 'must be MMYYYY, e.g. 042026')
    .meta({ example: '042026' }),
  format: z.enum(['json', 'csv']).default('json'),
});
export type ReturnQuery = z.infer<typeof returnQuery>;

const amounts = z.object({ txval: z.number(), iamt: z.number(), camt: z.number(), samt: z.number(), csamt: z.number() });

/** The GSTN offline tool's GSTR-1 JSON; sections are passed through as built (see gstr1.ts). */
export const gstr1Schema = z
  .object({
    gstin: z.string(),
    fp: z.string(),
    b2b: z.array(z.unknown()),
    b2cl: z.array(z.unknown()),
    b2cs: z.array(z.unknown()),
    cdnr: z.array(z.unknown()),
    cdnur: z.array(z.unknown()),
    exp: z.array(z.unknown()),
    version: z.string().describe('the GSTN offline-tool format version'),
    nil: z.object({ inv: z.array(z.unknown()) }).describe('table 8: nil-rated, exempt and non-GST supplies'),
    b2ba: z.array(z.unknown()).optional().describe('amended B2B invoices of filed months (oinum, oidt)'),
    cdnra: z.array(z.unknown()).optional().describe('amended credit notes to registered persons of filed months (ont_num, ont_dt)'),
    b2cla: z.array(z.unknown()).optional().describe('amended B2CL invoices of filed months, by original place of supply (oinum, oidt)'),
    expa: z.array(z.unknown()).optional().describe('amended export invoices of filed months, e.g. a shipping bill recorded later (oinum, oidt)'),
    cdnura: z.array(z.unknown()).optional().describe('amended credit notes to unregistered persons and exports of filed months (ont_num, ont_dt)'),
    b2csa: z.array(z.unknown()).optional().describe("a filed month's B2CS figures of a place of supply as they now are (omon: the original month)"),
    hsn: z.object({ hsn_b2b: z.array(z.unknown()), hsn_b2c: z.array(z.unknown()) }).describe('table 12, B2B and B2C tabs (Phase III)'),
    doc_issue: z.object({ doc_det: z.array(z.unknown()) }),
    at: z.array(z.unknown()).optional().describe('table 11A: tax on advances received (gstr1-advances.ts)'),
    txpd: z.array(z.unknown()).optional().describe('table 11B: advances adjusted or refunded'),
  })
  .meta({ id: 'Gstr1' });

export const gstr1aSchema = z
  .object({
    gstin: z.string(),
    fp: z.string(),
    version: z.string(),
    b2b: z.array(z.unknown()),
    b2cl: z.array(z.unknown()),
    b2cs: z.array(z.unknown()).describe("the month's B2CS rows of each place of supply whose figures changed, as they now are"),
    exp: z.array(z.unknown()),
    cdnr: z.array(z.unknown()),
    cdnur: z.array(z.unknown()),
  })
  .meta({ id: 'Gstr1a' });

export const gstr1aQuery = returnQuery.omit({ format: true });

export const gstr3bSchema = z
  .object({
    gstin: z.string(),
    ret_period: z.string(),
    sup_details: z.object({ osup_det: amounts, osup_zero: amounts, osup_nil_exmp: amounts, isup_rev: amounts, osup_nongst: amounts }),
    carried_in: z
      .record(z.string(), z.object({ txval: z.number(), iamt: z.number(), camt: z.number(), samt: z.number() }))
      .optional()
      .describe("per 3.1 row: the earlier months' net reduction taken off this month (never below 0)"),
    carry_forward: z
      .record(z.string(), z.object({ txval: z.number(), iamt: z.number(), camt: z.number(), samt: z.number() }))
      .optional()
      .describe('per 3.1 row: the net reduction this month could not show (3.1 is never negative), carried to the next month'),
  })
  .meta({ id: 'Gstr3b' });

export const csvResponse = z.string().meta({ description: 'CSV (format=csv)' });
export type Gstr1 = z.infer<typeof gstr1Schema>;
export type Gstr3b = z.infer<typeof gstr3bSchema>;
export type Gstr1a = z.infer<typeof gstr1aSchema>;
