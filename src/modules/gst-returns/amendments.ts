import type { Gstr1a, Gstr1Amendments } from './gst-returns.schemas.js';

/**
 * Corrections to filed GSTR-1 data (DESIGN §18, decisions 0365 and 0610). A filed return is stored
 * as filed and never changes; when a document of a filed month later reads differently (a buyer's
 * GSTIN corrected through the e-invoice retry, a B2CS invoice's place of supply corrected, an
 * export's shipping bill recorded), the difference is declared
 * - in GSTR-1A of that month while its GSTR-3B is not filed (the documents as they now are), and
 * - in the next unfiled GSTR-1's amendment tables once the month's GSTR-3B is filed: `b2ba`,
 *   `b2cla`, `expa` (the corrected invoice with `oinum`/`oidt`), `cdnra`, `cdnura` (the corrected
 *   note with `ont_num`/`ont_dt`) and `b2csa` (a month's B2CS figures of a place of supply as they
 *   now are, with the original month `omon`).
 */

type Doc = Record<string, unknown>;
export type Section = 'b2b' | 'cdnr' | 'b2cl' | 'exp' | 'cdnur' | 'b2cs';
/** A document (or, for `b2cs`, a place of supply's summary) of a month; `period` (MMYYYY) once known. */
type Listed = { section: Section; group: string | null; doc: Doc; period?: string };

const numberOf = (doc: Doc) => String(doc.inum ?? doc.nt_num ?? '').toUpperCase();

/**
 * B2CS rows of one supply type and place of supply as one entry: `{ sply_ty, pos, typ, itms }`
 * with one item per rate (`rt`, `txval` and the tax heads) — the shape of a `b2csa` row.
 */
function b2csEntries(rows: Doc[]): Map<string, Listed> {
  const out = new Map<string, Listed>();
  for (const row of rows) {
    const key = `b2cs|${String(row.sply_ty)}|${String(row.pos)}`;
    const entry = out.get(key) ?? {
      section: 'b2cs' as const,
      group: String(row.pos),
      doc: { sply_ty: row.sply_ty, pos: row.pos, typ: row.typ, itms: [] as Doc[] },
    };
    const item: Doc = { rt: row.rt, txval: row.txval };
    for (const head of ['iamt', 'camt', 'samt', 'csamt']) if (row[head] !== undefined) item[head] = row[head];
    (entry.doc.itms as Doc[]).push(item);
    out.set(key, entry);
  }
  for (const entry of out.values()) (entry.doc.itms as Doc[]).sort((a, b) => Number(a.rt) - Number(b.rt));
  return out;
}

/** The documents a GSTR-1 lists one by one, by section and number (numbers are case-insensitive), and its B2CS per place of supply. */
export function listedDocuments(json: Record<string, unknown>): Map<string, Listed> {
  const out = new Map<string, Listed>();
  const grouped = (section: 'b2b' | 'cdnr' | 'b2cl' | 'exp', groupKey: string, docsKey: string) => {
    for (const g of (json[section] as Doc[] | undefined) ?? []) {
      for (const doc of (g[docsKey] as Doc[]) ?? []) out.set(`${section}|${numberOf(doc)}`, { section, group: String(g[groupKey]), doc });
    }
  };
  grouped('b2b', 'ctin', 'inv');
  grouped('cdnr', 'ctin', 'nt');
  grouped('b2cl', 'pos', 'inv');
  grouped('exp', 'exp_typ', 'inv');
  for (const doc of (json.cdnur as Doc[] | undefined) ?? []) out.set(`cdnur|${numberOf(doc)}`, { section: 'cdnur', group: null, doc });
  for (const [key, entry] of b2csEntries((json.b2cs as Doc[] | undefined) ?? [])) out.set(key, entry);
  return out;
}

/** An amended document back to its plain form (the original number and date dropped). */
function withoutOriginal(doc: Doc, keys: string[]): Doc {
  return Object.fromEntries(Object.entries(doc).filter(([k]) => !keys.includes(k)));
}

/**
 * Applies the amendments a filed GSTR-1 declared to what was known of the month `period` (MMYYYY):
 * documents by their original number (any month: numbers are unique), `b2csa` rows of that month.
 */
export function applyAmendments(known: Map<string, Listed>, filed: Record<string, unknown>, period: string): void {
  const invoices = (table: string, section: 'b2b' | 'b2cl' | 'exp', groupKey: string) => {
    for (const g of (filed[table] as Doc[] | undefined) ?? []) {
      for (const amended of (g.inv as Doc[]) ?? []) {
        known.delete(`${section}|${String(amended.oinum).toUpperCase()}`);
        const doc = withoutOriginal(amended, ['oinum', 'oidt']);
        known.set(`${section}|${numberOf(doc)}`, { section, group: String(g[groupKey]), doc });
      }
    }
  };
  invoices('b2ba', 'b2b', 'ctin');
  invoices('b2cla', 'b2cl', 'pos');
  invoices('expa', 'exp', 'exp_typ');
  for (const g of (filed.cdnra as Doc[] | undefined) ?? []) {
    for (const amended of (g.nt as Doc[]) ?? []) {
      known.delete(`cdnr|${String(amended.ont_num).toUpperCase()}`);
      const doc = withoutOriginal(amended, ['ont_num', 'ont_dt']);
      known.set(`cdnr|${numberOf(doc)}`, { section: 'cdnr', group: String(g.ctin), doc });
    }
  }
  for (const amended of (filed.cdnura as Doc[] | undefined) ?? []) {
    known.delete(`cdnur|${String(amended.ont_num).toUpperCase()}`);
    const doc = withoutOriginal(amended, ['ont_num', 'ont_dt']);
    known.set(`cdnur|${numberOf(doc)}`, { section: 'cdnur', group: null, doc });
  }
  for (const row of (filed.b2csa as Doc[] | undefined) ?? []) {
    if (row.omon !== period) continue;
    known.set(`b2cs|${String(row.sply_ty)}|${String(row.pos)}`, { section: 'b2cs', group: String(row.pos), doc: withoutOriginal(row, ['omon']) });
  }
}

/** JSON with keys in one order: a stored return (jsonb reorders keys) compares equal to a fresh one. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}

/** A B2CS entry with every figure 0: what a place of supply shows once none of the month's supplies remain there. */
function emptied(entry: Listed): Listed {
  const itms = ((entry.doc.itms as Doc[]) ?? []).map((item) => Object.fromEntries(Object.entries(item).map(([k, v]) => [k, k === 'rt' ? v : 0])));
  return { ...entry, doc: { ...entry.doc, itms } };
}

/**
 * The documents that read differently now than in `known` (or that `known` lacks), and the B2CS
 * places of supply whose figures changed — emptied ones included (shown at 0).
 */
export function changedDocuments(known: Map<string, Listed>, now: Map<string, Listed>): Listed[] {
  const changed: Listed[] = [];
  for (const [key, current] of now) {
    const before = known.get(key);
    if (!before || before.group !== current.group || canonical(before.doc) !== canonical(current.doc)) changed.push(current);
  }
  for (const [key, before] of known) {
    if (before.section !== 'b2cs' || now.has(key)) continue;
    const zero = emptied(before);
    if (canonical(zero.doc) !== canonical(before.doc)) changed.push(zero);
  }
  return changed;
}

function groupBy(docs: Listed[], section: Section, groupKey: string, docsKey: string): Doc[] {
  const groups = new Map<string, Doc[]>();
  for (const d of docs.filter((x) => x.section === section)) groups.set(d.group!, [...(groups.get(d.group!) ?? []), d.doc]);
  return [...groups].map(([group, list]) => ({ [groupKey]: group, [docsKey]: list }));
}

/** B2CS entries back to `b2cs` rows (one per rate), as GSTR-1's table 7 writes them. */
function b2csRows(changed: Listed[]): Doc[] {
  return changed
    .filter((d) => d.section === 'b2cs')
    .flatMap((d) => ((d.doc.itms as Doc[]) ?? []).map((item) => ({ sply_ty: d.doc.sply_ty, pos: d.doc.pos, typ: d.doc.typ, ...item })));
}

/**
 * GSTR-1A's sections: the changed or missed documents of the month (and B2CS places of supply), as
 * they now are. The documents are GSTR-1's own (a fresh build's), regrouped: the sections' types.
 */
export function gstr1aSections(changed: Listed[]): Omit<Gstr1a, 'gstin' | 'fp' | 'version'> {
  return {
    b2b: groupBy(changed, 'b2b', 'ctin', 'inv'),
    b2cl: groupBy(changed, 'b2cl', 'pos', 'inv'),
    b2cs: b2csRows(changed),
    exp: groupBy(changed, 'exp', 'exp_typ', 'inv'),
    cdnr: groupBy(changed, 'cdnr', 'ctin', 'nt'),
    cdnur: changed.filter((d) => d.section === 'cdnur').map((d) => d.doc),
  } as Omit<Gstr1a, 'gstin' | 'fp' | 'version'>;
}

/**
 * Amendment tables for a later GSTR-1 (decision 0610, field names from the GSTN offline tool):
 * each corrected invoice with its original number and date first (`oinum`, `oidt`) — `b2ba` by
 * recipient, `b2cla` by place of supply, `expa` by export type; each corrected note with
 * `ont_num`/`ont_dt` — `cdnra` by recipient, `cdnura` flat; `b2csa`: a month's place of supply
 * with its original month (`omon`) and its figures per rate as they now are. Kosh never
 * renumbers, so an original number repeats the document's own.
 */
export function amendmentSections(changed: Listed[]): Gstr1Amendments {
  const invoices = (section: 'b2b' | 'b2cl' | 'exp') =>
    changed.filter((d) => d.section === section).map((d) => ({ ...d, doc: { oinum: d.doc.inum, oidt: d.doc.idt, ...d.doc } }));
  const notes = (section: 'cdnr' | 'cdnur') =>
    changed.filter((d) => d.section === section).map((d) => ({ ...d, doc: { ont_num: d.doc.nt_num, ont_dt: d.doc.nt_dt, ...d.doc } }));
  return {
    b2ba: groupBy(invoices('b2b'), 'b2b', 'ctin', 'inv'),
    b2cla: groupBy(invoices('b2cl'), 'b2cl', 'pos', 'inv'),
    expa: groupBy(invoices('exp'), 'exp', 'exp_typ', 'inv'),
    cdnra: groupBy(notes('cdnr'), 'cdnr', 'ctin', 'nt'),
    cdnura: notes('cdnur').map((d) => d.doc),
    b2csa: changed.filter((d) => d.section === 'b2cs').map((d) => ({ omon: d.period, ...d.doc })),
  } as Gstr1Amendments;
}
