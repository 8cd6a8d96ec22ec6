/**
 * The section a customer deducted TDS under (docs/decisions/0510). Pure functions; no clock.
 *
 * - A deduction dated before 1 April 2026 falls under the Income-tax Act 1961: its section is an
 *   old code (194C, 194H, 194-I(a), 194J(b), …) and its certificate is Form 16A (Income-tax Rules
 *   1962, rule 31(1)(b)).
 * - From 1 April 2026 the Income-tax Act 2025 applies (s.536 repeals the 1961 Act; s.393 is the
 *   table of payments to residents): its section is a four-digit payment code (1001–1092) and the
 *   certificate is Form 131. An old code dated on or after that day is refused, naming the code it
 *   maps to — a return quoting an old section for a new-Act payment is defective.
 * - Old codes map to the new codes for reports (`payment_code`). The map holds only the codes
 *   that several secondary sources agree on (no primary CBDT table was found; see the decision);
 *   an old code without a corroborated new code (194C, bare 194J) maps to null.
 */

import { z } from 'zod';

export const NEW_ACT_FROM = '2026-04-01';

export type TdsAct = 'income_tax_act_1961' | 'income_tax_act_2025';

export type ResolvedTdsSection = {
  /** As given, normalized: `194-i(A)` → `194I(a)`. */
  section: string;
  /** The new Act's payment code: the section itself from 1 April 2026, the mapped code before (null when not corroborated). */
  payment_code: string | null;
  act: TdsAct;
  certificate_form: 'Form 16A' | 'Form 131';
  /** The configured entry's rate (basis points), when the operator's table gives one. */
  rate_bp?: number;
};

/**
 * The operator's TDS code table (KOSH_TDS_CODES, decision 0610): entries that add or override a
 * code for the days `from`–`until` (YYYY-MM-DD, both included; no `until`: open-ended). A four-digit
 * `code` is a payment code of the Income-tax Act 2025 (1001–1092, on or after 1 April 2026); any
 * other `code` is a section of the 1961 Act (before 1 April 2026) with the `payment_code` it maps
 * to (null: none). While a code has entries, a deduction on a day none of them covers is refused.
 */
export const tdsCodeEntrySchema = z
  .object({
    code: z.string().regex(/^(\d{4}|19[0-9][A-Z]*(\([a-z]\))?)$/, 'must be a payment code (1001–1092) or a 1961 Act section such as 194J(b)'),
    payment_code: z
      .string()
      .regex(/^\d{4}$/)
      .nullable()
      .optional(),
    description: z.string().trim().min(1).max(200),
    rate_bp: z.int().min(0).max(10_000).optional(),
    from: z.iso.date(),
    until: z.iso.date().optional(),
  })
  .strict();
export type TdsCodeEntry = z.infer<typeof tdsCodeEntrySchema>;

const inRange = (code: string) => Number(code) >= 1001 && Number(code) <= 1092;

/** The table's problems (`[index].field: message`), none when it is valid. */
export function tdsCodeTableProblems(entries: readonly TdsCodeEntry[]): string[] {
  const problems: string[] = [];
  entries.forEach((e, i) => {
    const at = `[${i}]`;
    const newCode = /^\d{4}$/.test(e.code);
    if (e.until !== undefined && e.until < e.from) problems.push(`${at}.until: is before from`);
    if (newCode && !inRange(e.code)) problems.push(`${at}.code: ${e.code} is not in 1001–1092`);
    if (newCode && e.from < NEW_ACT_FROM) problems.push(`${at}.from: a payment code of the Income-tax Act 2025 applies from ${NEW_ACT_FROM}`);
    if (newCode && e.payment_code !== undefined && e.payment_code !== e.code) problems.push(`${at}.payment_code: a payment code maps to itself`);
    if (!newCode && e.from >= NEW_ACT_FROM) problems.push(`${at}.from: a section of the 1961 Act applies only before ${NEW_ACT_FROM}`);
    if (!newCode && e.payment_code === undefined) problems.push(`${at}.payment_code: give the payment code the section maps to (or null)`);
    if (e.payment_code && !inRange(e.payment_code)) problems.push(`${at}.payment_code: ${e.payment_code} is not in 1001–1092`);
    entries.forEach((o, j) => {
      const overlaps = j > i && o.code === e.code && o.from <= (e.until ?? '9999-12-31') && e.from <= (o.until ?? '9999-12-31');
      if (overlaps) problems.push(`${at}: overlaps [${j}] for ${e.code}`);
    });
  });
  return problems;
}

/** The operator's entry for a code on a day: undefined when the code has no entries, null when none covers the day. */
function configuredEntry(table: readonly TdsCodeEntry[], code: string, day: string): TdsCodeEntry | null | undefined {
  const entries = table.filter((e) => e.code === code);
  if (entries.length === 0) return undefined;
  return entries.find((e) => e.from <= day && (e.until === undefined || day <= e.until)) ?? null;
}

function configuredWindow(table: readonly TdsCodeEntry[], code: string): string {
  return table
    .filter((e) => e.code === code)
    .map((e) => `${e.from}–${e.until ?? ''}`)
    .join(', ');
}

type LegacySection = { description: string; paymentCode: string | null };

/** Old sections Kosh accepts (the ones a customer of a billing business deducts under), and their new payment codes. */
export const LEGACY_SECTIONS: Readonly<Record<string, LegacySection>> = {
  '194C': { description: 'payments to contractors', paymentCode: null },
  '194H': { description: 'commission or brokerage', paymentCode: '1006' },
  '194I(a)': { description: 'rent of plant, machinery or equipment', paymentCode: '1008' },
  '194I(b)': { description: 'rent of land, building or furniture', paymentCode: '1009' },
  '194J': { description: 'fees for professional or technical services (sub-clause not given)', paymentCode: null },
  '194J(a)': { description: 'fees for technical services, call centre, royalty for films (2 %)', paymentCode: '1026' },
  '194J(b)': { description: 'fees for professional services, royalty, other (10 %)', paymentCode: '1027' },
};

/** New payment codes whose meaning several secondary sources agree on (the others in 1001–1092 are accepted as given). */
export const PAYMENT_CODES: Readonly<Record<string, string>> = {
  '1006': 'commission or brokerage — s.393(1) Table sl. 1(ii)',
  '1008': 'rent of plant, machinery or equipment — s.393(1) Table sl. 2(ii)(a)',
  '1009': 'rent of land, building or furniture — s.393(1) Table sl. 2(ii)(b)',
  '1026': 'fees for technical services, call centre, royalty for films — s.393(1) Table sl. 6(iii), 2 %',
  '1027': 'fees for professional services and other sums — s.393(1) Table sl. 6(iii), 10 %',
  '1028': "director's remuneration, fees or commission — s.393(1) Table sl. 6(iii)",
};

const FIRST_CODE = 1001;
const LAST_CODE = 1092;

/** `194-I(a)`, `194 J(B)`, `194j(b)` → the table's key (`194I(a)`, `194J(b)`). */
function legacyKey(section: string): string {
  // Only a bracketed sub-clause is read as one: `194IA` is s.194-IA (immovable property), not 194-I(a).
  return section
    .toUpperCase()
    .replace(/[\s-]/g, '')
    .replace(/\(([A-Z])\)$/, (_, c: string) => `(${c.toLowerCase()})`);
}

export class TdsSectionError extends Error {}

/**
 * Reads a section given for a deduction on `deductedOn` (YYYY-MM-DD, the deductor's date of credit
 * or payment in India). Throws TdsSectionError with the reason for an unknown code, a new code
 * before 1 April 2026, or an old code on or after it.
 */
export function resolveTdsSection(section: string, deductedOn: string, table: readonly TdsCodeEntry[] = []): ResolvedTdsSection {
  const newAct = deductedOn >= NEW_ACT_FROM;
  const key = legacyKey(section);
  const entry = configuredEntry(table, key, deductedOn);
  if (entry === null) throw new TdsSectionError(`${key} is configured for deductions on ${configuredWindow(table, key)} only, not on ${deductedOn}`);
  if (entry && !newAct && !/^\d{4}$/.test(key)) {
    return { section: key, payment_code: entry.payment_code ?? null, act: 'income_tax_act_1961', certificate_form: 'Form 16A', ...rateOf(entry) };
  }
  return { ...resolveBuiltIn(section, key, newAct, deductedOn), ...(entry ? rateOf(entry) : {}) };
}

const rateOf = (entry: TdsCodeEntry) => (entry.rate_bp === undefined ? {} : { rate_bp: entry.rate_bp });

function resolveBuiltIn(section: string, key: string, newAct: boolean, deductedOn: string): ResolvedTdsSection {
  if (/^\d{4}$/.test(key)) {
    const code = Number(key);
    if (code < FIRST_CODE || code > LAST_CODE) {
      throw new TdsSectionError(`${section} is not a payment code of the Income-tax Act 2025 (1001–1092)`);
    }
    if (!newAct) {
      throw new TdsSectionError(
        `payment code ${key} is of the Income-tax Act 2025, in force from 1 April 2026; a deduction on ${deductedOn} takes its Income-tax Act 1961 section (e.g. 194J(b))`,
      );
    }
    return { section: key, payment_code: key, act: 'income_tax_act_2025', certificate_form: 'Form 131' };
  }
  const legacy = LEGACY_SECTIONS[key];
  if (!legacy) {
    throw new TdsSectionError(
      `${section} is not a section Kosh knows: give a payment code of the Income-tax Act 2025 (1001–1092) or, for deductions before 1 April 2026, one of ${Object.keys(LEGACY_SECTIONS).join(', ')}`,
    );
  }
  if (newAct) {
    const hint = legacy.paymentCode ? `its payment code is ${legacy.paymentCode}` : 'give the payment code of the Income-tax Act 2025 (1001–1092)';
    throw new TdsSectionError(
      `section ${key} is of the Income-tax Act 1961, repealed from 1 April 2026; a deduction on ${deductedOn} is under s.393 of the Income-tax Act 2025 — ${hint}`,
    );
  }
  return { section: key, payment_code: legacy.paymentCode, act: 'income_tax_act_1961', certificate_form: 'Form 16A' };
}

/** The certificate a deduction on that date is evidenced by (no section given). */
export function certificateFormOn(deductedOn: string): 'Form 16A' | 'Form 131' {
  return deductedOn >= NEW_ACT_FROM ? 'Form 131' : 'Form 16A';
}

/**
 * KOSH_TDS_CODES read and checked (decision 0610): the table, or an Error naming every problem —
 * thrown at start-up, so a malformed table never reaches a deduction.
 */
export function parseTdsCodeTable(raw: string | undefined): TdsCodeEntry[] {
  if (!raw) return [];
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    throw new Error('Invalid configuration: KOSH_TDS_CODES: must be a JSON array of entries');
  }
  const parsed = z.array(tdsCodeEntrySchema).safeParse(json);
  if (!parsed.success) {
    throw new Error(`Invalid configuration: KOSH_TDS_CODES: ${parsed.error.issues.map((i) => `[${i.path.join('.')}] ${i.message}`).join('; ')}`);
  }
  const problems = tdsCodeTableProblems(parsed.data);
  if (problems.length > 0) throw new Error(`Invalid configuration: KOSH_TDS_CODES: ${problems.join('; ')}`);
  return parsed.data;
}
