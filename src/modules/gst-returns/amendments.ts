/**
 * Corrections to filed GSTR-1 data (DESIGN §18, decision 0365). A filed return is stored as filed
 * and never changes; when a document of a filed month later reads differently (today: a buyer's
 * GSTIN corrected through the e-invoice retry), the difference is declared
 * - in GSTR-1A of that month while its GSTR-3B is not filed (the documents as they now are), and
 * - in the next unfiled GSTR-1's amendment sections (`b2ba`, `cdnra`: the corrected document with
 *   the original number and date) once the month's GSTR-3B is filed.
 */

type Doc = Record<string, unknown>;
type Listed = { section: 'b2b' | 'cdnr' | 'b2cl' | 'exp' | 'cdnur'; group: string | null; doc: Doc };

const numberOf = (doc: Doc) => String(doc.inum ?? doc.nt_num ?? '').toUpperCase();

/** The documents a GSTR-1 lists one by one, by section and number (numbers are case-insensitive). */
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
  return out;
}

/** Applies the amendments a filed GSTR-1 declared (`b2ba`, `cdnra`) to what was known of a month. */
export function applyAmendments(known: Map<string, Listed>, filed: Record<string, unknown>): void {
  for (const g of (filed.b2ba as Doc[] | undefined) ?? []) {
    for (const { oinum, oidt: _oidt, ...doc } of (g.inv as Doc[]) ?? []) {
      known.delete(`b2b|${String(oinum).toUpperCase()}`);
      known.set(`b2b|${numberOf(doc)}`, { section: 'b2b', group: String(g.ctin), doc });
    }
  }
  for (const g of (filed.cdnra as Doc[] | undefined) ?? []) {
    for (const { ont_num, ont_dt: _ontDt, ...doc } of (g.nt as Doc[]) ?? []) {
      known.delete(`cdnr|${String(ont_num).toUpperCase()}`);
      known.set(`cdnr|${numberOf(doc)}`, { section: 'cdnr', group: String(g.ctin), doc });
    }
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

/** The documents that read differently now than in `known` (or that `known` lacks). */
export function changedDocuments(known: Map<string, Listed>, now: Map<string, Listed>): Listed[] {
  const changed: Listed[] = [];
  for (const [key, current] of now) {
    const before = known.get(key);
    if (!before || before.group !== current.group || canonical(before.doc) !== canonical(current.doc)) changed.push(current);
  }
  return changed;
}

function groupBy(docs: Listed[], section: Listed['section'], groupKey: string, docsKey: string): Doc[] {
  const groups = new Map<string, Doc[]>();
  for (const d of docs.filter((x) => x.section === section)) groups.set(d.group!, [...(groups.get(d.group!) ?? []), d.doc]);
  return [...groups].map(([group, list]) => ({ [groupKey]: group, [docsKey]: list }));
}

/** GSTR-1A's sections: the changed or missed documents of the month, as they now are. */
export function gstr1aSections(changed: Listed[]): Record<string, unknown> {
  return {
    b2b: groupBy(changed, 'b2b', 'ctin', 'inv'),
    b2cl: groupBy(changed, 'b2cl', 'pos', 'inv'),
    exp: groupBy(changed, 'exp', 'exp_typ', 'inv'),
    cdnr: groupBy(changed, 'cdnr', 'ctin', 'nt'),
    cdnur: changed.filter((d) => d.section === 'cdnur').map((d) => d.doc),
  };
}

/**
 * Amendment sections for a later GSTR-1: each corrected B2B invoice or registered credit note with
 * its original number and date (`oinum`/`oidt`, `ont_num`/`ont_dt`) — the number does not change
 * in Kosh, so they repeat the document's own.
 */
export function amendmentSections(changed: Listed[]): { b2ba: Doc[]; cdnra: Doc[] } {
  const b2ba = groupBy(
    changed.filter((d) => d.section === 'b2b').map((d) => ({ ...d, doc: { oinum: d.doc.inum, oidt: d.doc.idt, ...d.doc } })),
    'b2b',
    'ctin',
    'inv',
  );
  const cdnra = groupBy(
    changed.filter((d) => d.section === 'cdnr').map((d) => ({ ...d, doc: { ont_num: d.doc.nt_num, ont_dt: d.doc.nt_dt, ...d.doc } })),
    'cdnr',
    'ctin',
    'nt',
  );
  return { b2ba, cdnra };
}
