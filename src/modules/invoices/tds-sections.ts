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

export const NEW_ACT_FROM = '2026-04-01';

export type TdsAct = 'income_tax_act_1961' | 'income_tax_act_2025';

export type ResolvedTdsSection = {
  /** As given, normalized: `194-i(A)` → `194I(a)`. */
  section: string;
  /** The new Act's payment code: the section itself from 1 April 2026, the mapped code before (null when not corroborated). */
  payment_code: string | null;
  act: TdsAct;
  certificate_form: 'Form 16A' | 'Form 131';
};

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
export function resolveTdsSection(section: string, deductedOn: string): ResolvedTdsSection {
  const newAct = deductedOn >= NEW_ACT_FROM;
  const key = legacyKey(section);
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
