import { errors } from '../../platform/errors.js';

/**
 * GST rates by HSN (goods) or SAC (services) code, in basis points of the full rate
 * (1800 = 18% = IGST; CGST and SGST/UTGST are each half).
 *
 * Sources:
 * - Services: Notification No. 11/2017-Central Tax (Rate), 28 June 2017, as amended (last by
 *   15/2025-Central Tax (Rate), 17 September 2025), with the matching Integrated Tax (Rate)
 *   notification 8/2017. Heading 9983 (professional, technical and business services, which holds
 *   every IT/SaaS SAC) is 9% CGST + 9% SGST = 18% IGST. Entry 35 — "services other than the
 *   above" — is also 18%, which is why an unlisted chapter-99 SAC falls back to 18% below.
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

export const GST_RATES: readonly GstRateEntry[] = [
  // Services, SAC heading 9983 and group 99831 (IT and management consulting).
  { code: '9983', rate_bp: 1800, description: 'Other professional, technical and business services' },
  { code: '998311', rate_bp: 1800, description: 'Management consulting and management services' },
  { code: '998312', rate_bp: 1800, description: 'Business consulting services' },
  { code: '998313', rate_bp: 1800, description: 'IT consulting and support services' },
  { code: '998314', rate_bp: 1800, description: 'IT design and development services' },
  { code: '998315', rate_bp: 1800, description: 'Hosting and IT infrastructure provisioning services' },
  { code: '998316', rate_bp: 1800, description: 'IT infrastructure and network management services' },
  { code: '998319', rate_bp: 1800, description: 'Other information technology services n.e.c.' },
  { code: '997331', rate_bp: 1800, description: 'Licensing services for the right to use computer software' },
  // Exempt services.
  { code: '9992', rate_bp: 0, description: 'Education services (exempt when supplied by an educational institution)' },
  // Goods examples.
  { code: '0902', rate_bp: 500, description: 'Tea' },
  { code: '7108', rate_bp: 300, description: 'Gold, unwrought or semi-manufactured' },
  { code: '710231', rate_bp: 25, description: 'Diamonds, non-industrial, unworked or simply sawn' },
  { code: '6904', rate_bp: 1200, description: 'Ceramic building bricks' },
  { code: '2402', rate_bp: 2800, description: 'Cigars, cheroots, cigarettes (cess not included)' },
];

/** The SAC used when neither the line, the plan nor the tenant names one (DESIGN §6). */
export const DEFAULT_SAC_CODE = '998314';

/** The residual services rate (entry 35 of 11/2017-Central Tax (Rate)). */
export const STANDARD_SERVICES_RATE_BP = 1800;

const HSN_FORMAT = /^(\d{4}|\d{6}|\d{8})$/;
const RATE_BY_CODE = new Map(GST_RATES.map((entry) => [entry.code, entry.rate_bp]));

/**
 * The rate of a code, or undefined when Kosh does not know it. Looks up the code, then its
 * 6-digit and 4-digit prefixes (an 8-digit tariff item inherits its heading's rate unless listed).
 *
 * Unknown codes — decided: a chapter-99 code (every SAC is a chapter-99 service code) takes the
 * residual 18%, because the services notification itself has an 18% catch-all entry. An unknown
 * goods HSN has no such catch-all (goods run from 0% to 40%), so it is undefined here and an
 * error from `gstRateBasisPoints`: refusing the invoice beats silently mis-taxing it.
 */
export function findGstRate(code: string): number | undefined {
  if (!HSN_FORMAT.test(code)) return undefined;
  for (const length of [8, 6, 4]) {
    if (code.length < length) continue;
    const rate = RATE_BY_CODE.get(code.slice(0, length));
    if (rate !== undefined) return rate;
  }
  return code.startsWith('99') ? STANDARD_SERVICES_RATE_BP : undefined;
}

/** The rate of a code in basis points; a 400 `hsn_code` error when it is malformed or unknown goods. */
export function gstRateBasisPoints(code: string): number {
  const rate = findGstRate(code);
  if (rate !== undefined) return rate;
  if (!HSN_FORMAT.test(code)) throw errors.invalidField('hsn_code', `"${code}" is not a 4, 6 or 8 digit HSN/SAC code`);
  throw errors.invalidField('hsn_code', `no GST rate is configured for HSN code ${code}; use a listed code or a SAC (99…)`);
}

/**
 * The code that sets a line's rate: the line's own code, else the plan's, else the tenant's SAC,
 * else 998314. Empty strings count as absent (SPEC: "when empty, the tenant SAC code applies").
 */
export function resolveHsnCode(
  lineCode: string | null | undefined,
  planCode: string | null | undefined,
  tenantSacCode: string | null | undefined,
): string {
  for (const candidate of [lineCode, planCode, tenantSacCode]) {
    const code = candidate?.trim();
    if (code) return code;
  }
  return DEFAULT_SAC_CODE;
}
