import { errors } from '../../platform/errors.js';
import { rateInForce } from './rate-changes.js';
import { findSacRate } from './sac.js';

/**
 * GST rates by HSN (goods) or SAC (services) code, in basis points of the full rate
 * (1800 = 18% = IGST; CGST and SGST/UTGST are each half).
 *
 * Sources:
 * - Services: every SAC of chapter 99 with its rate, in sac.ts (Notification No. 11/2017-Central
 *   Tax (Rate) as amended, last by 15/2025). Heading 9983 (professional, technical and business
 *   services, which holds every IT/SaaS SAC) is 9% CGST + 9% SGST = 18% IGST. A code that is not
 *   in the classification, or whose rate the code alone does not decide (9963, 9964, 9965, …), is
 *   refused unless the line or plan gives `tax_rate_bp`.
 * - Exemptions: Notification No. 12/2017-Central Tax (Rate) (entry 66, services by an
 *   educational institution). Exemption depends on who supplies: choose 9992 only when it applies.
 * - Goods: Notification No. 9/2025-Central Tax (Rate) (rates from 22 September 2025) and
 *   14/2025-Central Tax (Rate) (bricks). The goods rows are examples so the engine handles
 *   non-18% rates; review them against the current notification before billing real goods.
 *   Compensation cess (tobacco) is not a GST component and is not computed by Kosh.
 *
 * Rates change by notification; update this table (and its test) when they do.
 */
export type GstRateEntry = { code: string; rate_bp: number; description: string };

/** Goods (HSN) rows; the services (SAC) list is in sac.ts. */
export const GST_RATES: readonly GstRateEntry[] = [
  // Goods examples.
  { code: '0902', rate_bp: 500, description: 'Tea' },
  { code: '7108', rate_bp: 300, description: 'Gold, unwrought or semi-manufactured' },
  { code: '710231', rate_bp: 25, description: 'Diamonds, non-industrial, unworked or simply sawn' },
  { code: '6904', rate_bp: 1200, description: 'Ceramic building bricks' },
  { code: '2402', rate_bp: 2800, description: 'Cigars, cheroots, cigarettes (cess not included)' },
  // Changed on 22 September 2025 (rate-changes.ts has the earlier rates).
  { code: '8415', rate_bp: 1800, description: 'Air-conditioning machines' },
  { code: '2201', rate_bp: 500, description: 'Waters, including mineral and aerated waters, not sweetened' },
];

/** The SAC used when neither the line, the plan nor the tenant names one (DESIGN §6). */
export const DEFAULT_SAC_CODE = '998314';

/** The residual services rate (notification 11/2017-Central Tax (Rate), "services other than the above"). */
export const STANDARD_SERVICES_RATE_BP = 1800;

const HSN_FORMAT = /^(\d{4}|\d{6}|\d{8})$/;
const RATE_BY_CODE = new Map(GST_RATES.map((entry) => [entry.code, entry.rate_bp]));

/** What the tables say about a code: a rate, "conditional" (no single rate), or nothing. */
export type CodeRate = { kind: 'rate'; rate_bp: number } | { kind: 'conditional'; description: string; source: string } | { kind: 'unknown' };

/**
 * What the tables say about a code on `date` (the time of supply; now when not given): the rate in
 * force then (rate-changes.ts walks back through the dated changes).
 */
export function lookupGstCode(code: string, date?: Date): CodeRate {
  const now = lookupCurrentCode(code);
  if (!date || now.kind === 'unknown') return now;
  const rate = rateInForce(code, now.kind === 'rate' ? now.rate_bp : null, date);
  if (rate === null) return now.kind === 'conditional' ? now : { kind: 'conditional', description: `HSN/SAC ${code} on that date`, source: 'rate-changes.ts' };
  return { kind: 'rate', rate_bp: rate };
}

function lookupCurrentCode(code: string): CodeRate {
  if (!HSN_FORMAT.test(code)) return { kind: 'unknown' };
  if (code.startsWith('99')) {
    const sac = findSacRate(code);
    if (!sac) return { kind: 'unknown' };
    return sac.rate_bp === null ? { kind: 'conditional', description: sac.description, source: sac.source } : { kind: 'rate', rate_bp: sac.rate_bp };
  }
  for (const length of [8, 6, 4]) {
    if (code.length < length) continue;
    const rate = RATE_BY_CODE.get(code.slice(0, length));
    if (rate !== undefined) return { kind: 'rate', rate_bp: rate };
  }
  return { kind: 'unknown' };
}

/**
 * The rate of a code, or undefined when the tables give none: a goods HSN not listed (goods run
 * from 0 % to 40 %, with no catch-all), a chapter-99 code that is not a service code, or a SAC
 * whose rate depends on more than the code. A goods code inherits its heading's rate (an 8-digit
 * tariff item its 6- or 4-digit heading's) unless listed itself.
 */
export function findGstRate(code: string, date?: Date): number | undefined {
  const found = lookupGstCode(code, date);
  return found.kind === 'rate' ? found.rate_bp : undefined;
}

/**
 * The rate a line is taxed at: `explicitRate` (the line's or plan's `tax_rate_bp`) when given,
 * else the code's rate; a 400 when the code is malformed, unknown, or has no single rate.
 * `field(name)` names the request field in the error (`lines.0.hsn_code`). `date`: the time of
 * supply whose rate applies (timeOfSupplyForRate); the rate in force now when not given.
 */
export function gstRateBasisPoints(code: string, explicitRate?: number | null, field: (name: string) => string = (name) => name, date?: Date): number {
  if (!HSN_FORMAT.test(code)) throw errors.invalidField(field('hsn_code'), `"${code}" is not a 4, 6 or 8 digit HSN/SAC code`);
  if (explicitRate !== undefined && explicitRate !== null) return explicitRate;
  const found = lookupGstCode(code, date);
  if (found.kind === 'rate') return found.rate_bp;
  if (found.kind === 'conditional') {
    throw errors.invalidField(field('tax_rate_bp'), `SAC ${code} (${found.description}) has no single GST rate (${found.source}); give tax_rate_bp`);
  }
  throw errors.invalidField(
    field('hsn_code'),
    `no GST rate is configured for HSN/SAC code ${code}: not a listed goods code nor a service code of chapter 99; give tax_rate_bp`,
  );
}

/**
 * The code that sets a line's rate: the line's own code, else the plan's, else the tenant's SAC,
 * else 998314. Empty strings count as absent (SPEC: "when empty, the tenant SAC code applies").
 */
export function resolveHsnCode(lineCode: string | null | undefined, planCode: string | null | undefined, tenantSacCode: string | null | undefined): string {
  for (const candidate of [lineCode, planCode, tenantSacCode]) {
    const code = candidate?.trim();
    if (code) return code;
  }
  return DEFAULT_SAC_CODE;
}
