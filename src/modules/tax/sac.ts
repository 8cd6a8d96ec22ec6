/**
 * GST rates of the services classification (SAC, chapter 99), from Notification No. 11/2017-Central
 * Tax (Rate), 28 June 2017, as amended up to 15/2025-Central Tax (Rate) (rates from 22 September
 * 2025), with the matching Integrated Tax (Rate) notification 8/2017. Rates are IGST basis points
 * (1800 = 18 %; CGST and SGST/UTGST are each half).
 *
 * Every service code of the scheme of classification of services (the annexure to the
 * notification) is listed under its heading. A heading's rate applies to each of its codes unless
 * an override below names the code or its group. `rate_bp: null` means the notification sets the
 * rate by facts the code does not carry (the tariff of a hotel room, the class of travel, whether
 * the supplier forgoes input tax credit, who supplies, what is printed…): such a code is refused
 * unless the line or plan gives `tax_rate_bp`, rather than silently taxed at the 18 % residual.
 * A chapter-99 code missing from this list is not a service code and is refused the same way.
 *
 * Rates change by notification; update this table (and tax/gst.test.ts) when they do.
 */
export type SacHeading = {
  heading: string;
  description: string;
  /** IGST rate in basis points; null when the code alone does not decide it. */
  rate_bp: number | null;
  /** The notification entry that sets the rate. */
  source: string;
  /** The last two digits of every service code under the heading. */
  codes: readonly string[];
};

export type SacOverride = { code: string; rate_bp: number | null; description: string; source: string };

const NOTIFICATION = 'Notification 11/2017-Central Tax (Rate) as amended';

export const SAC_HEADINGS: readonly SacHeading[] = [
  {
    heading: '9954',
    description: 'Construction services',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9954: 1% to 18% by kind of project, promoter option and land value (paragraph 2 valuation)`,
    codes:
      '11 12 13 14 15 16 17 18 19 21 22 23 24 25 26 27 28 29 31 32 33 34 35 39 41 42 43 44 49 51 52 53 54 55 56 57 58 59 61 62 63 64 65 66 68 69 71 72 73 74 75 76 77 78 79'.split(
        ' ',
      ),
  },
  {
    heading: '9961',
    description: 'Services in wholesale trade',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9961 (distributive trade services)`,
    codes: '11'.split(' '),
  },
  {
    heading: '9962',
    description: 'Services in retail trade',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9962 (distributive trade services)`,
    codes: '11'.split(' '),
  },
  {
    heading: '9963',
    description: 'Accommodation, food and beverage services',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9963: 5% without input tax credit up to ₹7 500 a unit a day, 18% above it and in specified premises (as amended by 15/2025)`,
    codes: '11 12 13 21 22 29 31 32 33 34 35 36 37 39'.split(' '),
  },
  {
    heading: '9964',
    description: 'Passenger transport services',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9964: 5% or 18% by mode, class and input-tax-credit option; some exempt under 12/2017`,
    codes: '11 12 13 14 15 16 17 18 19 21 22 23 24 25 26 27 29 31 32 33 34 39 41 42 43 44 45 49 51 52 53 54 55 56 59'.split(' '),
  },
  {
    heading: '9965',
    description: 'Goods transport services',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9965: 5% without input tax credit or 18% (GTA, multimodal), 5% by rail or vessel; some exempt under 12/2017`,
    codes: '11 12 13 14 15 16 17 18 19 21 22 23 31 32 40'.split(' '),
  },
  {
    heading: '9966',
    description: 'Rental services of transport vehicles with operators',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9966: 5% without input tax credit or 18%`,
    codes: '01 02 03 04 05 06 07 09'.split(' '),
  },
  {
    heading: '9967',
    description: 'Supporting services in transport',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9967`,
    codes: '11 12 13 19 21 22 29 31 39 41 42 43 44 49 51 52 53 54 59 61 62 63 64 68 69 91 92 93 99'.split(' '),
  },
  { heading: '9968', description: 'Postal and courier services', rate_bp: 1800, source: `${NOTIFICATION}, Heading 9968`, codes: '11 12 13 19'.split(' ') },
  {
    heading: '9969',
    description: 'Electricity, gas, water and other distribution services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9969 (transmission and distribution of electricity exempt under 12/2017)`,
    codes: '11 12 13 21 22 29'.split(' '),
  },
  {
    heading: '9971',
    description: 'Financial and related services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9971 (some leasing at the rate of the goods, some services exempt under 12/2017)`,
    codes: '11 12 13 14 15 16 19 20 31 32 33 34 35 36 37 38 39 41 42 43 44 45 46 47 49 51 52 53 54 55 56 57 58 59 61 62 63 64 69 71 72'.split(' '),
  },
  {
    heading: '9972',
    description: 'Real estate services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9972`,
    codes: '11 12 13 14 15 19 21 22 23 24 29 31'.split(' '),
  },
  {
    heading: '9973',
    description: 'Leasing or rental services with or without operator',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9973: the rate of the goods leased for most entries; 18% residual`,
    codes: '11 12 13 14 15 16 17 18 19 21 22 23 24 25 26 27 28 29 31 32 33 34 35 36 37 38 39'.split(' '),
  },
  {
    heading: '9981',
    description: 'Research and development services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9981`,
    codes: '11 12 13 14 21 22 30 41 42 43 44 45 49'.split(' '),
  },
  {
    heading: '9982',
    description: 'Legal and accounting services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9982`,
    codes: '11 12 13 14 15 16 19 21 22 23 24 29 31 32 39 40'.split(' '),
  },
  {
    heading: '9983',
    description: 'Other professional, technical and business services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9983`,
    codes:
      '11 12 13 14 15 16 19 21 22 23 24 25 26 27 28 29 31 32 33 34 35 36 37 38 39 41 42 43 44 45 46 47 48 49 51 52 59 61 62 63 64 65 66 71 72 81 82 83 84 85 86 87 89 91 92 93 94 95 96 97 98 99'.split(
        ' ',
      ),
  },
  {
    heading: '9984',
    description: 'Telecommunications, broadcasting and information supply services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9984`,
    codes: '11 12 13 14 15 19 21 22 23 24 29 31 32 33 34 35 39 41 42 43 51 52 53 61 62 63 64 65 66 69'.split(' '),
  },
  {
    heading: '9985',
    description: 'Support services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9985 (tour operators 998552 at 5% without input tax credit)`,
    codes:
      '11 12 13 14 15 16 17 19 21 22 23 24 25 26 27 28 29 31 32 33 34 35 36 37 38 39 40 41 42 43 49 51 52 53 54 55 56 57 59 91 92 93 94 95 96 97 98 99'.split(
        ' ',
      ),
  },
  {
    heading: '9986',
    description: 'Support services to agriculture, hunting, forestry, fishing, mining and utilities',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9986: exempt for agriculture under 12/2017, 18% for mining support and others`,
    codes: '11 12 13 14 15 19 21 22 31 32 33 34 35'.split(' '),
  },
  {
    heading: '9987',
    description: 'Maintenance, repair and installation (except construction) services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9987 (aircraft and ship repair at 5%)`,
    codes: '11 12 13 14 15 16 17 18 19 21 22 23 24 25 26 27 29 31 32 33 34 35 36 39'.split(' '),
  },
  {
    heading: '9988',
    description: 'Manufacturing services on physical inputs owned by others (job work)',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9988: 5% for textiles, food, printing and other listed job work; 18% residual`,
    codes:
      '11 12 13 14 15 16 17 18 19 21 22 23 29 31 32 39 41 42 43 49 51 52 53 59 60 61 69 71 72 73 74 75 76 77 79 81 82 83 89 91 92 93 94 95 96 97 98 99'.split(
        ' ',
      ),
  },
  {
    heading: '9989',
    description: 'Other manufacturing services; publishing, printing and reproduction; materials recovery',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9989: 5% or 18% by the goods printed or made`,
    codes: '11 12 20 31 32 33 41 42 50'.split(' '),
  },
  {
    heading: '9991',
    description: 'Public administration and other services provided to the community as a whole',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9991: largely exempt under 12/2017 when supplied by government`,
    codes: '11 12 13 19 21 22 23 24 25 26 27 28 29 31 32 33 34 39'.split(' '),
  },
  {
    heading: '9992',
    description: 'Education services',
    rate_bp: 0,
    source: `${NOTIFICATION}, Heading 9992, exempt under 12/2017 entry 66 when supplied by an educational institution`,
    codes: '10 20 31 32 41 42 43 49 50 59 91 92 93 94 95 99'.split(' '),
  },
  {
    heading: '9993',
    description: 'Human health and social care services',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9993: exempt for clinical establishments under 12/2017; 18% otherwise`,
    codes: '11 12 13 14 15 16 17 18 19 21 22 31 32 33 34 41 49 51 52 53 59'.split(' '),
  },
  {
    heading: '9994',
    description: 'Sewage and waste collection, treatment and disposal and other environmental protection services',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9994`,
    codes: '11 12 13 19 21 22 23 24 29 31 32 33 39 41 42 43 49 51 59 90 91 99'.split(' '),
  },
  {
    heading: '9995',
    description: 'Services of membership organisations',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9995`,
    codes: '11 12 20 91 92 93 94 95 96 97 98 99'.split(' '),
  },
  {
    heading: '9996',
    description: 'Recreational, cultural and sporting services',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9996: cinema 5% or 18% by ticket price, 40% for betting, casinos and clubs`,
    codes: '11 12 13 14 15 16 17 21 22 23 24 29 31 32 33 41 42 51 52 53 59 61 62 91 92 93 94 99'.split(' '),
  },
  {
    heading: '9997',
    description: 'Other services (washing, cleaning, beauty, physical well-being and others)',
    rate_bp: null,
    source: `${NOTIFICATION}, Heading 9997: beauty and physical well-being 5% without input tax credit, 18% otherwise`,
    codes: '11 12 13 14 15 19 21 22 23 29 31 32 91 92 93 94 95 99'.split(' '),
  },
  { heading: '9998', description: 'Domestic services', rate_bp: 1800, source: `${NOTIFICATION}, Heading 9998`, codes: '00'.split(' ') },
  {
    heading: '9999',
    description: 'Services provided by extraterritorial organisations and bodies',
    rate_bp: 1800,
    source: `${NOTIFICATION}, Heading 9999`,
    codes: '00'.split(' '),
  },
];

/** Codes or groups (5 digits) whose rate differs from their heading's. */
export const SAC_OVERRIDES: readonly SacOverride[] = [
  {
    code: '99733',
    rate_bp: 1800,
    description: 'Licensing services for the right to use intellectual property and similar products (incl. software, 997331)',
    source: `${NOTIFICATION}, Heading 9973 (licensing of intellectual property)`,
  },
  {
    code: '997211',
    rate_bp: null,
    description: 'Rental or leasing of own or leased residential property',
    source: `${NOTIFICATION}, Heading 9972; exempt under 12/2017 for residential use except by a registered business`,
  },
  { code: '998552', rate_bp: null, description: 'Tour operator services', source: `${NOTIFICATION}, Heading 9985: 5% without input tax credit, else 18%` },
  {
    code: '99871',
    rate_bp: null,
    description: 'Maintenance and repair of fabricated metal products, machinery and transport equipment',
    source: `${NOTIFICATION}, Heading 9987: 5% for aircraft, ship and vessel MRO, 18% otherwise`,
  },
];

export type SacRate = { code: string; rate_bp: number | null; description: string; source: string };

const HEADINGS = new Map(SAC_HEADINGS.map((h) => [h.heading, h]));
const CODES = new Set(SAC_HEADINGS.flatMap((h) => h.codes.map((c) => h.heading + c)));
const OVERRIDES = new Map(SAC_OVERRIDES.map((o) => [o.code, o]));

/** Every six-digit service code of chapter 99, in order. */
export const SAC_CODES: readonly string[] = [...CODES];

/**
 * The rate of a SAC: a heading (4 digits) or a listed service code (6 digits); undefined for
 * anything else, including a chapter-99 code the classification does not have.
 */
export function findSacRate(code: string): SacRate | undefined {
  const heading = HEADINGS.get(code.slice(0, 4));
  if (!heading) return undefined;
  if (code.length === 4) return { code, rate_bp: heading.rate_bp, description: heading.description, source: heading.source };
  if (code.length !== 6 || !CODES.has(code)) return undefined;
  const override = OVERRIDES.get(code) ?? OVERRIDES.get(code.slice(0, 5));
  if (override) return { code, rate_bp: override.rate_bp, description: override.description, source: override.source };
  return { code, rate_bp: heading.rate_bp, description: heading.description, source: heading.source };
}
