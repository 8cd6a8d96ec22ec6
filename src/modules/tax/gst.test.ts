import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isKoshError, KoshError } from '../../platform/errors.js';
import {
  computeInvoiceTax,
  determineTaxRegime,
  lineNetAmount,
  splitTaxProRata,
  taxProviderOf,
  type GstCustomer,
  type GstSupplier,
  type TaxType,
} from './gst.js';
import { DEFAULT_SAC_CODE, findGstRate, gstRateBasisPoints, resolveHsnCode } from './rates.js';
import { GST_STATE_CODES, gstState } from './states.js';

const registration = (state: string) => `${state}AABCK1234M1ZK`;
const karnataka: GstSupplier = { country_code: 'IN', gstin: registration('29'), state_code: '29' };
const chandigarh: GstSupplier = { country_code: 'IN', gstin: registration('04'), state_code: '04' }; // UT without legislature
const delhi: GstSupplier = { country_code: 'IN', gstin: registration('07'), state_code: '07' }; // UT with legislature: SGST
const indiaNoState: GstSupplier = { country_code: 'IN', gstin: registration('29'), state_code: null };
const usSupplier: GstSupplier = { country_code: 'US', gstin: null, state_code: null };
const unregistered: GstSupplier = { country_code: 'IN', gstin: null, state_code: '29' };

const inKA: GstCustomer = { country_code: 'IN', state_code: '29' };
const inMH: GstCustomer = { country_code: 'IN', state_code: '27' };
const inCH: GstCustomer = { country_code: 'IN', state_code: '04' };
const usCustomer: GstCustomer = { country_code: 'US', state_code: null };
const gstin = (state: string) => `${state}AAPFU0939F1ZV`;

type Line = [quantity: number, unitAmount: number, hsnCode: string];
/** amount (net), rate_bp, cgst, sgst, igst — tax and line total follow from these. */
type LineExpected = [amount: number, rateBp: number, cgst: number, sgst: number, igst: number];
/** subtotal, cgst, sgst, igst, tax, total. */
type Totals = [subtotal: number, cgst: number, sgst: number, igst: number, tax: number, total: number];
type Case = {
  name: string;
  supplier: GstSupplier;
  customer: GstCustomer;
  lines: Line[];
  type: TaxType;
  pos: string | null;
  utgst?: boolean;
  expected: LineExpected[];
  totals: Totals;
};

// Every expected value below is worked by hand: IGST = net × rate / 10000 and CGST = SGST =
// net × rate / 20000, each rounded half-up (x.5 → up) per line.
const cases: Case[] = [
  // 18% SaaS, both regimes
  {
    name: 'intra-state 18% on ₹1000',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 100000, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[100000, 1800, 9000, 9000, 0]],
    totals: [100000, 9000, 9000, 0, 18000, 118000],
  },
  {
    name: 'inter-state 18% on ₹1000',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 100000, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[100000, 1800, 0, 0, 18000]],
    totals: [100000, 0, 0, 18000, 18000, 118000],
  },
  {
    name: 'intra-state 1 paisa: 0.09 rounds to 0',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 1, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[1, 1800, 0, 0, 0]],
    totals: [1, 0, 0, 0, 0, 1],
  },
  {
    name: 'inter-state 1 paisa: 0.18 rounds to 0',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 1, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[1, 1800, 0, 0, 0]],
    totals: [1, 0, 0, 0, 0, 1],
  },
  {
    name: 'inter-state 3 paise: 0.54 rounds to 1',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 3, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[3, 1800, 0, 0, 1]],
    totals: [3, 0, 0, 1, 1, 4],
  },
  {
    name: 'intra-state 6 paise: 0.54 + 0.54 gives 2 where IGST would give 1',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 6, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[6, 1800, 1, 1, 0]],
    totals: [6, 1, 1, 0, 2, 8],
  },
  {
    name: 'inter-state 25 paise: exactly 4.5 rounds up to 5',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 25, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[25, 1800, 0, 0, 5]],
    totals: [25, 0, 0, 5, 5, 30],
  },
  {
    name: 'intra-state 50 paise: each half exactly 4.5 rounds up to 5',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 50, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[50, 1800, 5, 5, 0]],
    totals: [50, 5, 5, 0, 10, 60],
  },
  {
    name: 'intra-state 49999: 4499.91 rounds to 4500',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 49999, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[49999, 1800, 4500, 4500, 0]],
    totals: [49999, 4500, 4500, 0, 9000, 58999],
  },
  {
    name: 'inter-state 49999: 8999.82 rounds to 9000',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 49999, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[49999, 1800, 0, 0, 9000]],
    totals: [49999, 0, 0, 9000, 9000, 58999],
  },
  {
    name: 'inter-state 12345: 2222.1 rounds down',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 12345, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[12345, 1800, 0, 0, 2222]],
    totals: [12345, 0, 0, 2222, 2222, 14567],
  },
  {
    name: 'intra-state 12345: 1111.05 rounds down each',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 12345, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[12345, 1800, 1111, 1111, 0]],
    totals: [12345, 1111, 1111, 0, 2222, 14567],
  },
  {
    name: 'quantity 3 × 33333 = 99999 inter-state',
    supplier: karnataka,
    customer: inMH,
    lines: [[3, 33333, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[99999, 1800, 0, 0, 18000]],
    totals: [99999, 0, 0, 18000, 18000, 117999],
  },
  {
    name: 'quantity 3 × 33333 = 99999 intra-state',
    supplier: karnataka,
    customer: inKA,
    lines: [[3, 33333, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[99999, 1800, 9000, 9000, 0]],
    totals: [99999, 9000, 9000, 0, 18000, 117999],
  },
  {
    name: 'quantity 0 line is taxed at nothing',
    supplier: karnataka,
    customer: inKA,
    lines: [[0, 99999, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[0, 1800, 0, 0, 0]],
    totals: [0, 0, 0, 0, 0, 0],
  },
  // per-line rounding differs from rounding the invoice total
  {
    name: 'three 3-paise lines: 3 × round(0.54) = 3, not round(1.62) = 2',
    supplier: karnataka,
    customer: inMH,
    lines: [
      [1, 3, '998314'],
      [1, 3, '998314'],
      [1, 3, '998314'],
    ],
    type: 'inter_state',
    pos: '27',
    expected: [
      [3, 1800, 0, 0, 1],
      [3, 1800, 0, 0, 1],
      [3, 1800, 0, 0, 1],
    ],
    totals: [9, 0, 0, 3, 3, 12],
  },
  {
    name: 'two 50-paise intra lines: 2 × 5 per half, not round(9.0) = 9',
    supplier: karnataka,
    customer: inKA,
    lines: [
      [1, 50, '998314'],
      [1, 50, '998314'],
    ],
    type: 'intra_state',
    pos: '29',
    expected: [
      [50, 1800, 5, 5, 0],
      [50, 1800, 5, 5, 0],
    ],
    totals: [100, 10, 10, 0, 20, 120],
  },
  {
    name: 'mixed rates on one invoice: 18% + 5% + 0%',
    supplier: karnataka,
    customer: inMH,
    lines: [
      [2, 49900, '998314'],
      [1, 10010, '0902'],
      [1, 50000, '9992'],
    ],
    type: 'inter_state',
    pos: '27',
    expected: [
      [99800, 1800, 0, 0, 17964],
      [10010, 500, 0, 0, 501],
      [50000, 0, 0, 0, 0],
    ],
    totals: [159810, 0, 0, 18465, 18465, 178275],
  },
  // large amounts: the product exceeds 2^53 and must not lose a paisa
  {
    name: 'inter-state 10^13 - 1 paise: 1799999999999.82 rounds up',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 9_999_999_999_999, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[9_999_999_999_999, 1800, 0, 0, 1_800_000_000_000]],
    totals: [9_999_999_999_999, 0, 0, 1_800_000_000_000, 1_800_000_000_000, 11_799_999_999_999],
  },
  {
    name: 'intra-state 10^13 paise exactly',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 10_000_000_000_000, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[10_000_000_000_000, 1800, 900_000_000_000, 900_000_000_000, 0]],
    totals: [10_000_000_000_000, 900_000_000_000, 900_000_000_000, 0, 1_800_000_000_000, 11_800_000_000_000],
  },
  {
    name: 'intra-state 9999999999995: 899999999999.55 rounds up',
    supplier: karnataka,
    customer: inKA,
    lines: [[5, 1_999_999_999_999, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[9_999_999_999_995, 1800, 900_000_000_000, 900_000_000_000, 0]],
    totals: [9_999_999_999_995, 900_000_000_000, 900_000_000_000, 0, 1_800_000_000_000, 11_799_999_999_995],
  },
  // other rates
  {
    name: '5% tea inter-state: 500.5 rounds up',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 10010, '0902']],
    type: 'inter_state',
    pos: '27',
    expected: [[10010, 500, 0, 0, 501]],
    totals: [10010, 0, 0, 501, 501, 10511],
  },
  {
    name: '5% tea intra-state: 250.25 rounds down each',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 10010, '0902']],
    type: 'intra_state',
    pos: '29',
    expected: [[10010, 500, 250, 250, 0]],
    totals: [10010, 250, 250, 0, 500, 10510],
  },
  {
    name: '12% bricks intra-state: 740.7 rounds up each',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 12345, '69041000']],
    type: 'intra_state',
    pos: '29',
    expected: [[12345, 1200, 741, 741, 0]],
    totals: [12345, 741, 741, 0, 1482, 13827],
  },
  {
    name: '12% bricks inter-state: 1481.4 rounds down',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 12345, '6904']],
    type: 'inter_state',
    pos: '27',
    expected: [[12345, 1200, 0, 0, 1481]],
    totals: [12345, 0, 0, 1481, 1481, 13826],
  },
  {
    name: '28% via an 8-digit tariff item inter-state',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 1000, '24022010']],
    type: 'inter_state',
    pos: '27',
    expected: [[1000, 2800, 0, 0, 280]],
    totals: [1000, 0, 0, 280, 280, 1280],
  },
  {
    name: '28% intra-state: 140.14 each',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 1001, '2402']],
    type: 'intra_state',
    pos: '29',
    expected: [[1001, 2800, 140, 140, 0]],
    totals: [1001, 140, 140, 0, 280, 1281],
  },
  {
    name: 'odd 25 bp intra-state: 2.5 per half rounds up to 3 each',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 2000, '710231']],
    type: 'intra_state',
    pos: '29',
    expected: [[2000, 25, 3, 3, 0]],
    totals: [2000, 3, 3, 0, 6, 2006],
  },
  {
    name: 'odd 25 bp inter-state: exactly 5',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 2000, '710231']],
    type: 'inter_state',
    pos: '27',
    expected: [[2000, 25, 0, 0, 5]],
    totals: [2000, 0, 0, 5, 5, 2005],
  },
  {
    name: '3% gold inter-state: 500.01',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 16667, '7108']],
    type: 'inter_state',
    pos: '27',
    expected: [[16667, 300, 0, 0, 500]],
    totals: [16667, 0, 0, 500, 500, 17167],
  },
  {
    name: '0% exempt education intra-state',
    supplier: karnataka,
    customer: inKA,
    lines: [[1, 50000, '999293']],
    type: 'intra_state',
    pos: '29',
    expected: [[50000, 0, 0, 0, 0]],
    totals: [50000, 0, 0, 0, 0, 50000],
  },
  {
    name: 'a service code takes its heading rate (9985 support services: 18%)',
    supplier: karnataka,
    customer: inMH,
    lines: [[1, 1000, '998596']],
    type: 'inter_state',
    pos: '27',
    expected: [[1000, 1800, 0, 0, 180]],
    totals: [1000, 0, 0, 180, 180, 1180],
  },
  // export and no GST
  {
    name: 'export to a US customer is zero-rated',
    supplier: karnataka,
    customer: usCustomer,
    lines: [
      [1, 100000, '998314'],
      [2, 555, '0902'],
    ],
    type: 'export',
    pos: null,
    expected: [
      [100000, 0, 0, 0, 0],
      [1110, 0, 0, 0, 0],
    ],
    totals: [101110, 0, 0, 0, 0, 101110],
  },
  {
    name: 'supplier outside India charges no GST, even to an Indian customer',
    supplier: usSupplier,
    customer: inKA,
    lines: [[1, 100000, '998314']],
    type: '',
    pos: null,
    expected: [[100000, 0, 0, 0, 0]],
    totals: [100000, 0, 0, 0, 0, 100000],
  },
  {
    name: 'an Indian supplier without a GSTIN is not registered: no GST, even inside its own state',
    supplier: unregistered,
    customer: inKA,
    lines: [[1, 100000, '998314']],
    type: '',
    pos: null,
    expected: [[100000, 0, 0, 0, 0]],
    totals: [100000, 0, 0, 0, 0, 100000],
  },
  {
    name: 'an unregistered Indian supplier charges no IGST to another state or a registered customer',
    supplier: unregistered,
    customer: { country_code: 'IN', gstin: gstin('27') },
    lines: [[2, 59000, '998314']],
    type: '',
    pos: null,
    expected: [[118000, 0, 0, 0, 0]],
    totals: [118000, 0, 0, 0, 0, 118000],
  },
  {
    name: 'supplier outside India does not need a known HSN code',
    supplier: usSupplier,
    customer: usCustomer,
    lines: [[4, 2500, '1234']],
    type: '',
    pos: null,
    expected: [[10000, 0, 0, 0, 0]],
    totals: [10000, 0, 0, 0, 0, 10000],
  },
  // union territories
  {
    name: 'Chandigarh supplier intra-state: UTGST in the SGST field',
    supplier: chandigarh,
    customer: inCH,
    lines: [[1, 100000, '998314']],
    type: 'intra_state',
    pos: '04',
    utgst: true,
    expected: [[100000, 1800, 9000, 9000, 0]],
    totals: [100000, 9000, 9000, 0, 18000, 118000],
  },
  {
    name: 'Chandigarh supplier inter-state: IGST, no UTGST',
    supplier: chandigarh,
    customer: inKA,
    lines: [[1, 100000, '998314']],
    type: 'inter_state',
    pos: '29',
    utgst: false,
    expected: [[100000, 1800, 0, 0, 18000]],
    totals: [100000, 0, 0, 18000, 18000, 118000],
  },
  {
    name: 'Delhi has a legislature: SGST, not UTGST',
    supplier: delhi,
    customer: { country_code: 'IN', state_code: '07' },
    lines: [[1, 50, '998314']],
    type: 'intra_state',
    pos: '07',
    utgst: false,
    expected: [[50, 1800, 5, 5, 0]],
    totals: [50, 5, 5, 0, 10, 60],
  },
  // place of supply
  {
    name: 'GSTIN state wins over the billing address',
    supplier: karnataka,
    customer: { country_code: 'IN', state_code: '29', gstin: gstin('27') },
    lines: [[1, 25, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[25, 1800, 0, 0, 5]],
    totals: [25, 0, 0, 5, 5, 30],
  },
  {
    name: 'GSTIN in the supplier state makes it intra-state despite another billing state',
    supplier: karnataka,
    customer: { country_code: 'IN', state_code: '27', gstin: gstin('29') },
    lines: [[1, 50, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[50, 1800, 5, 5, 0]],
    totals: [50, 5, 5, 0, 10, 60],
  },
  {
    name: 'a GSTIN holder with a foreign billing country is still an Indian supply',
    supplier: karnataka,
    customer: { country_code: 'SG', gstin: gstin('27') },
    lines: [[1, 25, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[25, 1800, 0, 0, 5]],
    totals: [25, 0, 0, 5, 5, 30],
  },
  {
    name: 'Indian customer with no state: place of supply is the supplier state (IGST s.12(2)(b)(ii))',
    supplier: karnataka,
    customer: { country_code: 'IN' },
    lines: [[1, 50, '998314']],
    type: 'intra_state',
    pos: '29',
    expected: [[50, 1800, 5, 5, 0]],
    totals: [50, 5, 5, 0, 10, 60],
  },
  {
    name: 'absent customer country means IN (the billing address default)',
    supplier: karnataka,
    customer: { country_code: null, state_code: '27' },
    lines: [[1, 25, '998314']],
    type: 'inter_state',
    pos: '27',
    expected: [[25, 1800, 0, 0, 5]],
    totals: [25, 0, 0, 5, 5, 30],
  },
  {
    name: 'Indian supplier with no state recorded: IGST',
    supplier: indiaNoState,
    customer: inKA,
    lines: [[1, 50, '998314']],
    type: 'inter_state',
    pos: '29',
    expected: [[50, 1800, 0, 0, 9]],
    totals: [50, 0, 0, 9, 9, 59],
  },
  {
    name: 'neither state known: IGST with no place of supply',
    supplier: indiaNoState,
    customer: { country_code: 'IN' },
    lines: [[1, 50, '998314']],
    type: 'inter_state',
    pos: null,
    expected: [[50, 1800, 0, 0, 9]],
    totals: [50, 0, 0, 9, 9, 59],
  },
  { name: 'no lines: all zero', supplier: karnataka, customer: inKA, lines: [], type: 'intra_state', pos: '29', expected: [], totals: [0, 0, 0, 0, 0, 0] },
];

describe('GST', () => {
  describe('computeInvoiceTax', () => {
    it.each(cases)('$name', (c) => {
      const result = computeInvoiceTax({
        supplier: c.supplier,
        customer: c.customer,
        lines: c.lines.map(([quantity, unit_amount, hsn_code]) => ({ quantity, unit_amount, hsn_code })),
      });
      expect(result.tax_type).toBe(c.type);
      expect(result.place_of_supply).toBe(c.pos);
      expect(result.utgst).toBe(c.utgst ?? false);
      expect(result.lines).toEqual(
        c.expected.map(([amount, rate_bp, cgst, sgst, igst], i) => ({
          amount,
          hsn_code: c.lines[i]![2],
          rate_bp,
          cgst_amount: cgst,
          sgst_amount: sgst,
          igst_amount: igst,
          tax_amount: cgst + sgst + igst,
          total: amount + cgst + sgst + igst,
          inr: null,
        })),
      );
      const [subtotal, cgst, sgst, igst, tax, total] = c.totals;
      expect(result).toMatchObject({ subtotal, cgst_amount: cgst, sgst_amount: sgst, igst_amount: igst, tax_amount: tax, total });
    });

    it('has at least 30 hand-computed cases', () => {
      expect(cases.length).toBeGreaterThanOrEqual(30);
    });

    const codeError = (hsnCode: string, supplier = karnataka, customer = inKA) => {
      try {
        computeInvoiceTax({ supplier, customer, lines: [{ quantity: 1, unit_amount: 100, hsn_code: hsnCode }] });
      } catch (error) {
        return error;
      }
      return undefined;
    };

    it.each([
      ['an unknown goods HSN', '1234', karnataka, inKA],
      ['an unknown goods HSN on an export', '8471', karnataka, usCustomer],
      ['a malformed code', '99831', karnataka, inMH],
      ['a code with letters', 'SAC998', karnataka, inMH],
    ])('refuses %s with a validation error on hsn_code', (_what, code, supplier, customer) => {
      const error = codeError(code, supplier, customer);
      expect(isKoshError(error)).toBe(true);
      expect(error).toMatchObject({ kind: 'validation_failed', details: [{ field: 'hsn_code' }] });
    });

    it.each([
      ['a negative quantity', -1, 100],
      ['a fractional quantity', 1.5, 100],
      ['a negative unit amount', 1, -100],
      ['a fractional unit amount', 1, 99.5],
    ])('throws RangeError for %s', (_what, quantity, unitAmount) => {
      expect(() => computeInvoiceTax({ supplier: karnataka, customer: inMH, lines: [{ quantity, unit_amount: unitAmount, hsn_code: '998314' }] })).toThrow(
        RangeError,
      );
    });

    it.each([
      ['quantity × unit amount beyond 2^53', [[2 ** 27, 2 ** 27]], 'lines.0.unit_amount'],
      ['a line total that overflows once tax is added', [[1, Number.MAX_SAFE_INTEGER]], 'lines.0.unit_amount'],
      [
        'lines that overflow together',
        [
          [1, 2 ** 52],
          [1, 2 ** 52],
        ],
        'lines',
      ],
    ])('refuses %s with a validation error naming the field', (_what, lines, field) => {
      const fieldOf = (i: number | null, name: string) => (i === null ? name : `lines.${i}.${name}`);
      const run = () =>
        computeInvoiceTax({
          supplier: karnataka,
          customer: inMH,
          lines: lines.map(([quantity, unit_amount]) => ({ quantity: quantity!, unit_amount: unit_amount!, hsn_code: '998314' })),
          field: fieldOf,
        });
      expect(run).toThrow(KoshError);
      try {
        run();
      } catch (error) {
        expect(error).toMatchObject({ kind: 'validation_failed', details: [{ field }] });
      }
    });

    it('zero-rates an SEZ supply in the supplier state under LUT, and charges IGST without one', () => {
      const sez = { ...inKA, gstin: gstin('29'), sez: true };
      const underLut = computeInvoiceTax({ supplier: karnataka, customer: sez, lines: [{ quantity: 1, unit_amount: 1000, hsn_code: '998314' }] });
      expect(underLut).toMatchObject({ tax_type: 'sez', place_of_supply: '29', lut: true, tax_amount: 0, lines: [{ rate_bp: 0 }] });
      const paid = computeInvoiceTax({
        supplier: { ...karnataka, lut: false },
        customer: sez,
        lines: [{ quantity: 1, unit_amount: 1000, hsn_code: '998314' }],
      });
      expect(paid).toMatchObject({ tax_type: 'sez', lut: false, igst_amount: 180, cgst_amount: 0, lines: [{ rate_bp: 1800 }] });
      const exported = computeInvoiceTax({
        supplier: { ...karnataka, lut: false },
        customer: usCustomer,
        lines: [{ quantity: 1, unit_amount: 1000, hsn_code: '998314' }],
      });
      expect(exported).toMatchObject({ tax_type: 'export', lut: false, igst_amount: 180 });
    });

    it('computes INR amounts on the converted value (rule 34), rounding each component once', () => {
      const tax = computeInvoiceTax({
        supplier: karnataka,
        customer: inKA,
        currency: 'USD',
        exchangeRate: '83.2575',
        lines: [{ quantity: 1, unit_amount: 10_000, hsn_code: '998314' }],
      });
      expect(tax.inr).toEqual({ subtotal: 832_575, cgst_amount: 74_932, sgst_amount: 74_932, igst_amount: 0, tax_amount: 149_864, total: 982_439 });
      const yen = computeInvoiceTax({
        supplier: karnataka,
        customer: inMH,
        currency: 'JPY',
        exchangeRate: '0.55',
        lines: [{ quantity: 1, unit_amount: 1001, hsn_code: '998314' }],
      });
      expect(yen.inr).toMatchObject({ subtotal: 55_055, igst_amount: 9910 }); // ¥1001 × 0.55 = ₹550.55; 18% = 99.099
    });

    it('takes an explicit rate over the code, and refuses a SAC without a single rate', () => {
      expect(
        computeInvoiceTax({ supplier: karnataka, customer: inMH, lines: [{ quantity: 1, unit_amount: 1000, hsn_code: '996311', tax_rate_bp: 500 }] })
          .igst_amount,
      ).toBe(50);
      expect(() => gstRateBasisPoints('996311')).toThrow(/tax_rate_bp/);
      expect(findGstRate('996511')).toBeUndefined();
    });

    it('accepts the largest exact safe product and refuses one past it', () => {
      expect(lineNetAmount(1, Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
      expect(lineNetAmount(3, 3_002_399_751_580_330)).toBe(9_007_199_254_740_990);
      expect(() => lineNetAmount(2, 4_503_599_627_370_496)).toThrow(RangeError); // exactly 2^53
    });

    it.each([
      ['supplier state', { country_code: 'IN', gstin: registration('29'), state_code: '00' }, inKA],
      ['customer state', karnataka, { country_code: 'IN', state_code: '42' }],
      ['customer GSTIN state', karnataka, { country_code: 'IN', gstin: gstin('98') }],
    ])('throws RangeError for an unknown %s', (_what, supplier, customer) => {
      expect(() => determineTaxRegime(supplier, customer)).toThrow(RangeError);
    });
  });

  describe('taxProviderOf', () => {
    it.each([
      ['an Indian entity with a GSTIN', karnataka, 'india_gst'],
      ['an Indian entity without a GSTIN (unregistered)', unregistered, 'none'],
      ['an Indian entity with a blank GSTIN', { ...unregistered, gstin: '  ' }, 'none'],
      ['an entity outside India', usSupplier, 'none'],
    ] as const)('%s charges %s', (_what, supplier, provider) => {
      expect(taxProviderOf(supplier)).toBe(provider);
    });
  });

  describe('rates', () => {
    it.each([
      ['998314', 1800],
      ['998311', 1800],
      ['998312', 1800],
      ['998313', 1800],
      ['998315', 1800],
      ['998316', 1800],
      ['998316', 1800], // a service code of the 9983 heading
      ['998319', 1800],
      ['9983', 1800],
      ['997331', 1800], // software licensing: 18% though heading 9973 has no single rate
      ['996812', 1800], // courier
      ['9992', 0],
      ['999293', 0],
      ['0902', 500],
      ['09021010', 500],
      ['6904', 1200],
      ['2402', 2800],
      ['7108', 300],
      ['710231', 25],
    ])('%s is %i bp', (code, rate) => {
      expect(gstRateBasisPoints(code)).toBe(rate);
      expect(findGstRate(code)).toBe(rate);
    });

    it.each(['1234', '84713010', '710239', '', '99', '9983140', '998314 ', '998317', '99831400', '995099', '9950'])('knows no rate for %j', (code) => {
      expect(findGstRate(code)).toBeUndefined();
      expect(() => gstRateBasisPoints(code)).toThrow(/hsn_code/);
    });
  });

  describe('resolveHsnCode', () => {
    it.each([
      ['the line code first', '0902', '998313', '998315', '0902'],
      ['the plan code when the line has none', null, '998313', '998315', '998313'],
      ['the plan code when the line code is empty', '', '998313', '998315', '998313'],
      ['the tenant SAC when line and plan have none', undefined, '  ', '998315', '998315'],
      ['998314 when nothing is set', null, null, null, '998314'],
      ['998314 when everything is empty', '', '', '', '998314'],
    ])('takes %s', (_what, line, plan, tenant, expected) => {
      expect(resolveHsnCode(line, plan, tenant)).toBe(expected);
    });

    it('defaults to the SaaS SAC', () => {
      expect(DEFAULT_SAC_CODE).toBe('998314');
    });
  });

  describe('splitTaxProRata', () => {
    const intra = { subtotal: 100000, cgst_amount: 9000, sgst_amount: 9000, igst_amount: 0, total: 118000 };
    const inter = { subtotal: 100000, cgst_amount: 0, sgst_amount: 0, igst_amount: 18000, total: 118000 };

    // [name, invoice, gross, subtotal, cgst, sgst, igst] worked by hand: component × gross ÷ total.
    it.each([
      ['a full intra-state credit reverses the invoice exactly', intra, 118000, 100000, 9000, 9000, 0],
      ['half an intra-state invoice', intra, 59000, 50000, 4500, 4500, 0],
      ['₹10 of an intra-state invoice: 76.27 each', intra, 1000, 848, 76, 76, 0],
      ['a full inter-state credit', inter, 118000, 100000, 0, 0, 18000],
      ['1 paisa: the tax share 0.15 rounds to 0', inter, 1, 1, 0, 0, 0],
      ['59 paise: exactly 9 of IGST', inter, 59, 50, 0, 0, 9],
      ['a share of exactly .5 rounds up', { subtotal: 25, cgst_amount: 0, sgst_amount: 0, igst_amount: 5, total: 30 }, 3, 2, 0, 0, 1],
      ['zero credit', intra, 0, 0, 0, 0, 0],
      [
        'a remainder above the invoice subtotal moves into tax with room',
        { subtotal: 0, cgst_amount: 1, sgst_amount: 1, igst_amount: 1, total: 3 },
        1,
        0,
        0,
        0,
        1,
      ],
      ['a negative remainder takes tax back', { subtotal: 0, cgst_amount: 1, sgst_amount: 1, igst_amount: 0, total: 2 }, 1, 0, 0, 1, 0],
    ])('%s', (_name, invoice, gross, subtotal, cgst, sgst, igst) => {
      expect(splitTaxProRata(invoice, gross)).toEqual({
        subtotal,
        cgst_amount: cgst,
        sgst_amount: sgst,
        igst_amount: igst,
        tax_amount: cgst + sgst + igst,
        total: gross,
      });
    });

    it.each([
      ['a credit above the invoice total', intra, 118001],
      ['a negative credit', intra, -1],
      ['a fractional credit', intra, 10.5],
      ['an invoice whose total is not its parts', { ...intra, total: 117999 }, 100],
      ['a negative component', { ...intra, cgst_amount: -9000, total: 100000 }, 100],
    ])('throws RangeError for %s', (_name, invoice, gross) => {
      expect(() => splitTaxProRata(invoice, gross)).toThrow(RangeError);
    });
  });

  describe('properties', () => {
    const knownCodes = ['998314', '998313', '9983', '997331', '9992', '0902', '6904', '2402', '7108', '710231', '998599'];
    const state = fc.constantFrom(...GST_STATE_CODES);
    const supplier = fc.oneof(
      { weight: 6, arbitrary: state.map((s): GstSupplier => ({ country_code: 'IN', gstin: registration(s), state_code: s })) },
      { weight: 1, arbitrary: fc.constant(indiaNoState) },
      { weight: 1, arbitrary: fc.constant(usSupplier) },
      { weight: 1, arbitrary: fc.constant(unregistered) },
    );
    const customer = fc.oneof(
      { weight: 4, arbitrary: state.map((s): GstCustomer => ({ country_code: 'IN', state_code: s })) },
      { weight: 2, arbitrary: state.map((s): GstCustomer => ({ country_code: 'IN', gstin: gstin(s) })) },
      { weight: 1, arbitrary: fc.constant<GstCustomer>({ country_code: 'IN' }) },
      { weight: 1, arbitrary: fc.constant(usCustomer) },
    );
    const line = fc.record({
      quantity: fc.integer({ min: 0, max: 1000 }),
      unit_amount: fc.oneof(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 1_000_000_000 })),
      hsn_code: fc.constantFrom(...knownCodes),
    });
    const invoice = fc.record({ supplier, customer, lines: fc.array(line, { maxLength: 8 }) });
    const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);

    it('CGST equals SGST on every intra-state line, and only one regime is ever charged', () => {
      fc.assert(
        fc.property(invoice, (input) => {
          const result = computeInvoiceTax(input);
          for (const l of result.lines) {
            expect(l.cgst_amount).toBe(l.sgst_amount);
            if (result.tax_type === 'intra_state') expect(l.igst_amount).toBe(0);
            else expect(l.cgst_amount + l.sgst_amount).toBe(0);
          }
        }),
      );
    });

    it('each component is within half a paisa of the exact tax (BigInt check)', () => {
      fc.assert(
        fc.property(invoice, (input) => {
          const result = computeInvoiceTax(input);
          for (const l of result.lines) {
            const exact = BigInt(l.amount) * BigInt(l.rate_bp); // tax × 10000, exactly
            const igstError = BigInt(l.igst_amount) * 10000n - exact;
            const cgstError = BigInt(l.cgst_amount) * 20000n - exact;
            if (result.tax_type === 'inter_state') expect(igstError > -5000n && igstError <= 5000n).toBe(true); // x.5 rounds up
            if (result.tax_type === 'intra_state') expect(cgstError > -10000n && cgstError <= 10000n).toBe(true);
          }
        }),
      );
    });

    it('the invoice totals are the sums of its lines, tax is never negative, total = subtotal + tax', () => {
      fc.assert(
        fc.property(invoice, (input) => {
          const result = computeInvoiceTax(input);
          expect(result.subtotal).toBe(sum(result.lines.map((l) => l.amount)));
          expect(result.cgst_amount).toBe(sum(result.lines.map((l) => l.cgst_amount)));
          expect(result.sgst_amount).toBe(sum(result.lines.map((l) => l.sgst_amount)));
          expect(result.igst_amount).toBe(sum(result.lines.map((l) => l.igst_amount)));
          expect(result.tax_amount).toBe(sum(result.lines.map((l) => l.tax_amount)));
          expect(result.tax_amount).toBe(result.cgst_amount + result.sgst_amount + result.igst_amount);
          expect(result.total).toBe(result.subtotal + result.tax_amount);
          for (const l of result.lines) {
            expect(Math.min(l.cgst_amount, l.sgst_amount, l.igst_amount)).toBeGreaterThanOrEqual(0);
            expect(l.total).toBe(l.amount + l.tax_amount);
          }
          if (result.tax_type === 'export' || result.tax_type === '') expect(result.tax_amount).toBe(0);
        }),
      );
    });

    it('the regime follows the states: intra-state exactly when both are the same known state', () => {
      fc.assert(
        fc.property(supplier, customer, (s, c) => {
          const regime = determineTaxRegime(s, c);
          const customerState = c.gstin ? c.gstin.slice(0, 2) : (c.state_code ?? s.state_code ?? null);
          if (s.country_code !== 'IN' || !s.gstin) {
            expect(regime).toEqual({ tax_type: '', place_of_supply: null, utgst: false, lut: false });
          } else if (!c.gstin && c.country_code !== 'IN') {
            expect(regime).toEqual({ tax_type: 'export', place_of_supply: null, utgst: false, lut: true });
          } else {
            expect(regime.place_of_supply).toBe(customerState);
            expect(regime.tax_type).toBe(s.state_code && customerState === s.state_code ? 'intra_state' : 'inter_state');
            expect(regime.utgst).toBe(regime.tax_type === 'intra_state' && gstState(s.state_code)!.ut);
          }
        }),
      );
    });

    it('a pro-rata credit of a computed invoice sums to the gross, stays within each component and within half a paisa of the exact share', () => {
      const withCredit = invoice.map((input) => computeInvoiceTax(input)).chain((tax) => fc.tuple(fc.constant(tax), fc.integer({ min: 0, max: tax.total })));
      fc.assert(
        fc.property(withCredit, ([tax, gross]) => {
          const credit = splitTaxProRata(tax, gross);
          expect(credit.subtotal + credit.tax_amount).toBe(gross);
          expect(credit.total).toBe(gross);
          for (const key of ['subtotal', 'cgst_amount', 'sgst_amount', 'igst_amount'] as const) {
            expect(credit[key]).toBeGreaterThanOrEqual(0);
            expect(credit[key]).toBeLessThanOrEqual(tax[key]);
          }
          for (const key of ['cgst_amount', 'sgst_amount', 'igst_amount'] as const) {
            const error = BigInt(credit[key]) * BigInt(tax.total) - BigInt(tax[key]) * BigInt(gross);
            expect(2n * (error < 0n ? -error : error) <= BigInt(tax.total)).toBe(true);
          }
          expect(credit.cgst_amount).toBe(credit.sgst_amount);
        }),
      );
    });

    it('a full credit reverses exactly the invoice amounts', () => {
      fc.assert(
        fc.property(invoice, (input) => {
          const tax = computeInvoiceTax(input);
          expect(splitTaxProRata(tax, tax.total)).toEqual({
            subtotal: tax.subtotal,
            cgst_amount: tax.cgst_amount,
            sgst_amount: tax.sgst_amount,
            igst_amount: tax.igst_amount,
            tax_amount: tax.tax_amount,
            total: tax.total,
          });
        }),
      );
    });

    it('any consistent amounts (even extreme ones) split within bounds and to the exact gross', () => {
      const amounts = fc.record({
        subtotal: fc.nat({ max: 1_000_000 }),
        cgst_amount: fc.nat({ max: 1_000_000 }),
        sgst_amount: fc.nat({ max: 1_000_000 }),
        igst_amount: fc.nat({ max: 1_000_000 }),
      });
      const withGross = amounts.chain((a) => {
        const total = a.subtotal + a.cgst_amount + a.sgst_amount + a.igst_amount;
        return fc.tuple(fc.constant({ ...a, total }), fc.integer({ min: 0, max: total }));
      });
      fc.assert(
        fc.property(withGross, ([invoiceAmounts, gross]) => {
          const credit = splitTaxProRata(invoiceAmounts, gross);
          expect(credit.subtotal + credit.cgst_amount + credit.sgst_amount + credit.igst_amount).toBe(gross);
          for (const key of ['subtotal', 'cgst_amount', 'sgst_amount', 'igst_amount'] as const) {
            expect(credit[key]).toBeGreaterThanOrEqual(0);
            expect(credit[key]).toBeLessThanOrEqual(invoiceAmounts[key]);
          }
        }),
      );
    });
  });
});
