/**
 * The amendment tables for B2CL invoices and notes to unregistered persons (decision 0610), from a
 * filed month and the month as it now reads. No Kosh correction changes a B2CL invoice or such a
 * note today (the place of supply of a B2CL invoice is refused), so these are built by hand here:
 * a B2CL invoice to Tamil Nadu (33) of ₹2,00,000 + IGST ₹36,000 whose figures were filed wrongly,
 * and a B2CL credit note of ₹11,800 (₹10,000 + ₹1,800).
 */
import { describe, expect, it } from 'vitest';
import { amendmentSections, applyAmendments, changedDocuments, listedDocuments } from './amendments.js';
import { validateGstr1 } from './gstr1-schema.js';

const item = (txval: number, iamt: number) => [{ num: 1, itm_det: { txval, rt: 18, iamt, camt: 0, samt: 0, csamt: 0 } }];
const b2clInvoice = (val: number, txval: number, iamt: number) => ({ inum: 'INV-7', idt: '10-06-2026', val, itms: item(txval, iamt) });
const note = (val: number, txval: number, iamt: number) => ({
  ntty: 'C',
  nt_num: 'CN-2',
  nt_dt: '20-06-2026',
  val,
  typ: 'B2CL',
  pos: '33',
  itms: item(txval, iamt),
});
const base = {
  gstin: '29AAECK4321L1Z5',
  fp: '062026',
  version: 'GST3.2.3',
  b2b: [],
  b2cs: [],
  cdnr: [],
  exp: [],
  nil: { inv: [] },
  hsn: { hsn_b2b: [], hsn_b2c: [] },
  doc_issue: { doc_det: [] },
};

const filed = { ...base, b2cl: [{ pos: '33', inv: [b2clInvoice(2_30_000, 2_00_000, 30_000)] }], cdnur: [note(11_000, 10_000, 1_000)] };
const now = { ...base, b2cl: [{ pos: '33', inv: [b2clInvoice(2_36_000, 2_00_000, 36_000)] }], cdnur: [note(11_800, 10_000, 1_800)] };

describe('b2cla and cdnura', () => {
  const changed = changedDocuments(listedDocuments(filed), listedDocuments(now)).map((d) => ({ ...d, period: '062026' }));
  const tables = amendmentSections(changed);

  it('b2cla: the invoice as it now is, by its place of supply, with its original number and date', () => {
    expect(tables.b2cla).toEqual([{ pos: '33', inv: [{ oinum: 'INV-7', oidt: '10-06-2026', ...b2clInvoice(2_36_000, 2_00_000, 36_000) }] }]);
  });

  it('cdnura: the note as it now is, with its original number and date', () => {
    expect(tables.cdnura).toEqual([{ ont_num: 'CN-2', ont_dt: '20-06-2026', ...note(11_800, 10_000, 1_800) }]);
  });

  it('nothing else, and the tables conform to the committed schema', () => {
    expect([tables.b2ba, tables.expa, tables.cdnra, tables.b2csa]).toEqual([[], [], [], []]);
    expect(validateGstr1({ ...base, fp: '072026', b2cl: [], cdnur: [], b2cla: tables.b2cla, cdnura: tables.cdnura })).toEqual([]);
  });

  it('once a filed return declared them, nothing is declared again', () => {
    const known = listedDocuments(filed);
    applyAmendments(known, { ...base, fp: '072026', b2cla: tables.b2cla, cdnura: tables.cdnura }, '062026');
    expect(changedDocuments(known, listedDocuments(now))).toEqual([]);
  });

  it('a b2csa row applies to its own month only', () => {
    const june = listedDocuments({ ...filed, b2cs: [{ sply_ty: 'INTER', pos: '27', typ: 'OE', rt: 18, txval: 100, iamt: 18, camt: 0, samt: 0, csamt: 0 }] });
    const declared = { b2csa: [{ omon: '052026', sply_ty: 'INTER', pos: '27', typ: 'OE', itms: [{ rt: 18, txval: 0, iamt: 0, camt: 0, samt: 0, csamt: 0 }] }] };
    applyAmendments(june, declared, '062026');
    expect(june.get('b2cs|INTER|27')?.doc.itms).toEqual([{ rt: 18, txval: 100, iamt: 18, camt: 0, samt: 0, csamt: 0 }]);
  });
});
