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

/*
 * GSTR-1's sections as the builders write them (gstr1.ts, gstr1-advances.ts, amendments.ts), with
 * the GSTN offline tool's field names. Amounts are rupees (two decimals), rates percent.
 */
const supplyType = z.enum(['INTRA', 'INTER']);
const invoiceType = z.enum(['R', 'SEWP', 'SEWOP']).describe('R: regular; SEWP/SEWOP: to an SEZ unit with/without IGST');
const itemDetail = z.object({ txval: z.number(), rt: z.number(), iamt: z.number(), camt: z.number(), samt: z.number(), csamt: z.number() });
const numberedItems = z.array(z.object({ num: z.int(), itm_det: itemDetail }).meta({ id: 'Gstr1Item' }));
/** An original document's number and date, first in an amended invoice (b2ba, b2cla, expa) or note (cdnra, cdnura). */
const originalInvoice = { oinum: z.string(), oidt: z.string() };
const originalNote = { ont_num: z.string(), ont_dt: z.string() };

const b2bInvoice = {
  inum: z.string(),
  idt: z.string(),
  val: z.number(),
  pos: z.string(),
  rchrg: z.literal('N'),
  inv_typ: invoiceType,
  itms: numberedItems,
};
export const gstr1B2b = z.object({ ctin: z.string(), inv: z.array(z.object(b2bInvoice)) }).meta({ id: 'Gstr1B2b' });
export const gstr1B2ba = z.object({ ctin: z.string(), inv: z.array(z.object({ ...originalInvoice, ...b2bInvoice })) }).meta({ id: 'Gstr1B2ba' });

const b2clInvoice = { inum: z.string(), idt: z.string(), val: z.number(), itms: numberedItems };
export const gstr1B2cl = z.object({ pos: z.string(), inv: z.array(z.object(b2clInvoice)) }).meta({ id: 'Gstr1B2cl' });
export const gstr1B2cla = z.object({ pos: z.string(), inv: z.array(z.object({ ...originalInvoice, ...b2clInvoice })) }).meta({ id: 'Gstr1B2cla' });

const b2csFigures = { rt: z.number(), txval: z.number(), iamt: z.number(), camt: z.number(), samt: z.number(), csamt: z.number() };
export const gstr1B2cs = z.object({ sply_ty: supplyType, pos: z.string(), typ: z.literal('OE'), ...b2csFigures }).meta({ id: 'Gstr1B2cs' });
export const gstr1B2csa = z
  .object({ omon: z.string(), sply_ty: supplyType, pos: z.string(), typ: z.literal('OE'), itms: z.array(z.object(b2csFigures)) })
  .meta({ id: 'Gstr1B2csa' });

const exportInvoice = {
  inum: z.string(),
  idt: z.string(),
  val: z.number(),
  sbpcode: z.string().optional().describe("the shipping bill's port code, once recorded"),
  sbnum: z.string().optional(),
  sbdt: z.string().optional(),
  itms: z.array(z.object({ txval: z.number(), rt: z.number(), iamt: z.number(), csamt: z.number() })),
};
const exportType = z.enum(['WPAY', 'WOPAY']);
export const gstr1Exp = z.object({ exp_typ: exportType, inv: z.array(z.object(exportInvoice)) }).meta({ id: 'Gstr1Exp' });
export const gstr1Expa = z.object({ exp_typ: exportType, inv: z.array(z.object({ ...originalInvoice, ...exportInvoice })) }).meta({ id: 'Gstr1Expa' });

const noteBase = { ntty: z.literal('C'), nt_num: z.string(), nt_dt: z.string(), val: z.number() };
const registeredNote = { ...noteBase, pos: z.string(), rchrg: z.literal('N'), inv_typ: invoiceType, itms: numberedItems };
export const gstr1Cdnr = z.object({ ctin: z.string(), nt: z.array(z.object(registeredNote)) }).meta({ id: 'Gstr1Cdnr' });
export const gstr1Cdnra = z.object({ ctin: z.string(), nt: z.array(z.object({ ...originalNote, ...registeredNote })) }).meta({ id: 'Gstr1Cdnra' });
const unregisteredNote = {
  ...noteBase,
  typ: z.enum(['B2CL', 'EXPWP', 'EXPWOP']),
  pos: z.string().nullable().describe("96 for an export; a B2CL note's place of supply"),
  itms: numberedItems,
};
export const gstr1Cdnur = z.object(unregisteredNote).meta({ id: 'Gstr1Cdnur' });
export const gstr1Cdnura = z.object({ ...originalNote, ...unregisteredNote }).meta({ id: 'Gstr1Cdnura' });

export const gstr1Nil = z
  .object({
    inv: z.array(
      z.object({ sply_ty: z.enum(['INTRB2B', 'INTRAB2B', 'INTRB2C', 'INTRAB2C']), nil_amt: z.number(), expt_amt: z.number(), ngsup_amt: z.number() }),
    ),
  })
  .describe('table 8: nil-rated, exempt and non-GST supplies')
  .meta({ id: 'Gstr1Nil' });

const hsnRow = z
  .object({
    num: z.int(),
    hsn_sc: z.string(),
    uqc: z.string(),
    qty: z.number(),
    rt: z.number(),
    txval: z.number(),
    iamt: z.number(),
    camt: z.number(),
    samt: z.number(),
    csamt: z.number(),
  })
  .meta({ id: 'Gstr1HsnRow' });

export const gstr1DocIssue = z
  .object({
    doc_det: z.array(
      z.object({
        doc_num: z.int(),
        doc_typ: z.string(),
        docs: z.array(z.object({ num: z.int(), from: z.string(), to: z.string(), totnum: z.int(), cancel: z.int(), net_issue: z.int() })),
      }),
    ),
  })
  .describe('table 13: documents issued, per series')
  .meta({ id: 'Gstr1DocIssue' });

export const gstr1Table11Row = z
  .object({
    pos: z.string(),
    sply_ty: supplyType,
    itms: z.array(z.object({ rt: z.number(), ad_amt: z.number(), iamt: z.number(), camt: z.number(), samt: z.number(), csamt: z.number() })),
  })
  .meta({ id: 'Gstr1Table11Row' });

/** The GSTN offline tool's GSTR-1 JSON (see gstr1.ts). */
export const gstr1Schema = z
  .object({
    gstin: z.string(),
    fp: z.string(),
    b2b: z.array(gstr1B2b),
    b2cl: z.array(gstr1B2cl),
    b2cs: z.array(gstr1B2cs),
    cdnr: z.array(gstr1Cdnr),
    cdnur: z.array(gstr1Cdnur),
    exp: z.array(gstr1Exp),
    version: z.string().describe('the GSTN offline-tool format version'),
    nil: gstr1Nil,
    b2ba: z.array(gstr1B2ba).optional().describe('amended B2B invoices of filed months (oinum, oidt)'),
    cdnra: z.array(gstr1Cdnra).optional().describe('amended credit notes to registered persons of filed months (ont_num, ont_dt)'),
    b2cla: z.array(gstr1B2cla).optional().describe('amended B2CL invoices of filed months, by original place of supply (oinum, oidt)'),
    expa: z.array(gstr1Expa).optional().describe('amended export invoices of filed months, e.g. a shipping bill recorded later (oinum, oidt)'),
    cdnura: z.array(gstr1Cdnura).optional().describe('amended credit notes to unregistered persons and exports of filed months (ont_num, ont_dt)'),
    b2csa: z.array(gstr1B2csa).optional().describe("a filed month's B2CS figures of a place of supply as they now are (omon: the original month)"),
    hsn: z.object({ hsn_b2b: z.array(hsnRow), hsn_b2c: z.array(hsnRow) }).describe('table 12, B2B and B2C tabs (Phase III)'),
    doc_issue: gstr1DocIssue,
    at: z.array(gstr1Table11Row).optional().describe('table 11A: tax on advances received (gstr1-advances.ts)'),
    txpd: z.array(gstr1Table11Row).optional().describe('table 11B: advances adjusted or refunded'),
  })
  .meta({ id: 'Gstr1' });

export const gstr1aSchema = z
  .object({
    gstin: z.string(),
    fp: z.string(),
    version: z.string(),
    b2b: z.array(gstr1B2b),
    b2cl: z.array(gstr1B2cl),
    b2cs: z.array(gstr1B2cs).describe("the month's B2CS rows of each place of supply whose figures changed, as they now are"),
    exp: z.array(gstr1Exp),
    cdnr: z.array(gstr1Cdnr),
    cdnur: z.array(gstr1Cdnur),
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
export type Gstr1B2b = z.infer<typeof gstr1B2b>;
export type Gstr1B2bInvoice = Gstr1B2b['inv'][number];
export type Gstr1B2cl = z.infer<typeof gstr1B2cl>;
export type Gstr1B2clInvoice = Gstr1B2cl['inv'][number];
export type Gstr1B2cs = z.infer<typeof gstr1B2cs>;
export type Gstr1Exp = z.infer<typeof gstr1Exp>;
export type Gstr1ExpInvoice = Gstr1Exp['inv'][number];
export type Gstr1Cdnr = z.infer<typeof gstr1Cdnr>;
export type Gstr1CdnrNote = Gstr1Cdnr['nt'][number];
export type Gstr1Cdnur = z.infer<typeof gstr1Cdnur>;
export type Gstr1Nil = z.infer<typeof gstr1Nil>;
export type Gstr1DocIssue = z.infer<typeof gstr1DocIssue>;
export type Gstr1Table11Row = z.infer<typeof gstr1Table11Row>;
/** The amendment tables of a GSTR-1 (amendments.ts). */
export type Gstr1Amendments = Required<Pick<Gstr1, 'b2ba' | 'b2cla' | 'expa' | 'cdnra' | 'cdnura' | 'b2csa'>>;
/** GSTR-1 as Gstr1Builder.toJson writes it: without tables 11 and the amendment tables. */
export type Gstr1Built = Omit<Gstr1, 'at' | 'txpd' | keyof Gstr1Amendments>;
