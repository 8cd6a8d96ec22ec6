/**
 * The GST engine: splits invoice lines into CGST/SGST or IGST (DESIGN §6). Pure: no database.
 *
 * Decisions (each one a place where a wrong guess mis-taxes an invoice):
 * - No GST unless the supplying legal entity is registered for GST in India (a GSTIN): tax_type ''
 *   and every tax 0. An entity without a GSTIN is not registered, so it may not charge GST (CGST
 *   Act 2017 s.32(1): a person who is not registered shall not collect tax; s.31: a tax invoice
 *   is a registered person's document); an entity outside India
 *   charges no GST. Which tax a supplier charges is its tax provider (`taxProviderOf`): `india_gst`
 *   or `none` today (DESIGN §20).
 * - Place of supply (IGST Act s.12(2), services): the state in the customer's GSTIN (a registered
 *   recipient), else the billing-address state (an address on record), else — s.12(2)(b)(ii) — the
 *   supplier's own state, so an Indian customer with no known state is taxed intra-state. A GSTIN
 *   proves an Indian registration, so it wins over a foreign billing country.
 * - A customer outside India is an export: zero-rated, tax_type 'export', place_of_supply null
 *   (e-invoices print state code 96 for it). Billing country absent means IN, as the customer
 *   billing address defaults to IN (DESIGN §10).
 * - A customer that is an SEZ unit or developer (`sez`) receives a zero-rated inter-state supply
 *   even inside the supplier's state (IGST Act s.7(5)(b), s.16): tax_type 'sez', place of supply
 *   its state. Exports and SEZ supplies go under the entity's Letter of Undertaking without tax
 *   (`lut: true`, the default); an entity without one (`lut: false`) charges IGST at the line's
 *   rate (and claims the refund). The regime's `lut` is true only for a zero-rated supply made
 *   under LUT.
 * - A supplier in India with no state recorded cannot match any state, so its supplies are
 *   inter-state IGST. The total tax is the same as CGST+SGST up to a paisa of rounding.
 * - UTGST: when the supplier's state is a union territory without a legislature (`ut: true` in
 *   states.ts) and the supply is intra-state, UTGST replaces SGST. The amount stays in
 *   `sgst_amount` (SPEC's field set, ledger account and API unchanged) and the result carries
 *   `utgst: true`; documents print the label "UTGST" from that flag.
 * - Rounding: every component of every line is rounded half-up on its own (`mulDivRoundHalfUp`);
 *   CGST and SGST are each round(net × rate_bp / 20000), so they are equal even for an odd rate
 *   such as 25 bp. Invoice totals are sums of the rounded lines, never a re-rounded total.
 * - Lines are non-negative: discounts belong in the unit amount or in a credit note.
 */
import { errors } from '../../platform/errors.js';
import { assertMinorUnits, convertMinorUnits, MAX_MINOR_UNITS, mulDivRoundHalfUp, sumMinorUnits } from '../../platform/money.js';
import { gstinStateCode } from './gstin.js';
import { timeOfSupplyForRate } from './rate-changes.js';
import { gstRateBasisPoints } from './rates.js';
import { gstState } from './states.js';

export type TaxType = 'intra_state' | 'inter_state' | 'export' | 'sez' | '';

/** `lut`: the entity has a Letter of Undertaking (default true). `gstin`: its registration, null when unregistered. */
export type GstSupplier = { country_code: string; gstin: string | null; state_code?: string | null; lut?: boolean };

/**
 * The tax regime a supplier charges under: India's GST for an entity registered in India (it has a
 * GSTIN), else none. Other regimes (VAT, sales tax) would be further providers; none exists today.
 */
export type TaxProvider = 'india_gst' | 'none';

export function taxProviderOf(supplier: Pick<GstSupplier, 'country_code' | 'gstin'>): TaxProvider {
  return isIndia(supplier.country_code) && supplier.gstin?.trim() ? 'india_gst' : 'none';
}
export type GstCustomer = { country_code?: string | null; state_code?: string | null; gstin?: string | null; sez?: boolean };
/** `hsn_code` is already resolved (see `resolveHsnCode`); `tax_rate_bp` overrides the code's rate. */
/** `discount_amount` (a discount shown on the invoice) lowers the line's taxable value: amount = quantity × unit_amount − discount. */
export type GstLineInput = {
  quantity: number;
  unit_amount: number;
  hsn_code: string;
  tax_rate_bp?: number | null;
  discount_amount?: number;
  /** When the line's goods or services are supplied (a service period's end); the invoice date when not given. */
  supply_date?: Date | null;
};

/** The INR amounts of a line (CGST Rules, rule 34): value converted, tax computed on it. */
export type InrLine = { amount: number; cgst_amount: number; sgst_amount: number; igst_amount: number; tax_amount: number; total: number };

export type TaxComponents = {
  subtotal: number;
  cgst_amount: number;
  sgst_amount: number;
  igst_amount: number;
  tax_amount: number;
  total: number;
};

export type GstLine = Omit<TaxComponents, 'subtotal'> & { amount: number; hsn_code: string; rate_bp: number; inr: InrLine | null };

export type InvoiceTax = TaxComponents & {
  tax_type: TaxType;
  /** Two-digit GST state code of the place of supply; null when no GST or for exports. */
  place_of_supply: string | null;
  /** SGST amounts are UTGST (supplier in a union territory without a legislature, intra-state). */
  utgst: boolean;
  /** A zero-rated supply (export or SEZ) made under LUT without payment of IGST. */
  lut: boolean;
  /** The exchange rate used for the INR amounts (INR per unit of the currency); null when none. */
  exchange_rate: string | null;
  /** The invoice's amounts in INR as GST determines them; null when not determined. */
  inr: TaxComponents | null;
  lines: GstLine[];
};

export type TaxRegime = { tax_type: TaxType; place_of_supply: string | null; utgst: boolean; lut: boolean };

function isIndia(countryCode: string | null | undefined): boolean {
  return countryCode?.trim().toUpperCase() === 'IN';
}

/** A state code that must be a GST state; a stored record with a bad one is a bug, not input. */
function knownState(code: string, what: string): string {
  if (!gstState(code)) throw new RangeError(`${what} "${code}" is not a GST state code`);
  return code;
}

/** Which GST applies between these parties and where the supply takes place (decisions at the top). */
export function determineTaxRegime(supplier: GstSupplier, customer: GstCustomer): TaxRegime {
  if (taxProviderOf(supplier) === 'none') return { tax_type: '', place_of_supply: null, utgst: false, lut: false };

  const lut = supplier.lut ?? true;
  const supplierState = supplier.state_code ? knownState(supplier.state_code, 'supplier state_code') : null;
  const gstin = customer.gstin?.trim();
  const customerCountry = customer.country_code?.trim() ? customer.country_code : 'IN';
  if (!gstin && !isIndia(customerCountry)) return { tax_type: 'export', place_of_supply: null, utgst: false, lut };

  const placeOfSupply = gstin
    ? knownState(gstinStateCode(gstin.toUpperCase()), 'customer GSTIN state')
    : customer.state_code
      ? knownState(customer.state_code, 'customer state_code')
      : supplierState;

  if (customer.sez) return { tax_type: 'sez', place_of_supply: placeOfSupply, utgst: false, lut };
  if (supplierState !== null && placeOfSupply === supplierState) {
    return { tax_type: 'intra_state', place_of_supply: placeOfSupply, utgst: gstState(supplierState)!.ut, lut: false };
  }
  return { tax_type: 'inter_state', place_of_supply: placeOfSupply, utgst: false, lut: false };
}

/** Exports and SEZ supplies: zero-rated. */
export function isZeroRated(taxType: string): boolean {
  return taxType === 'export' || taxType === 'sez';
}

/** quantity × unit_amount, refusing anything that would not be an exact safe integer. */
export function lineNetAmount(quantity: number, unitAmount: number): number {
  if (!Number.isSafeInteger(quantity) || quantity < 0) throw new RangeError(`quantity must be a non-negative integer, got ${quantity}`);
  if (!Number.isSafeInteger(unitAmount) || unitAmount < 0) {
    throw new RangeError(`unit_amount must be a non-negative integer of minor units, got ${unitAmount}`);
  }
  // A true product above 2^53 - 1 cannot come out of floating point as a safe integer, so this
  // check is exact.
  return assertMinorUnits(quantity * unitAmount, 'line amount (quantity × unit_amount)');
}

/** The tax components of a net amount under a regime: CGST+SGST, IGST, or none. */
function taxOf(amount: number, rate: number, regime: TaxRegime): Omit<InrLine, 'amount' | 'total'> {
  let cgst = 0;
  let sgst = 0;
  let igst = 0;
  if (regime.tax_type === 'intra_state') {
    cgst = mulDivRoundHalfUp(amount, rate, 20_000);
    sgst = cgst; // the same formula on the same inputs: SGST/UTGST equals CGST by construction
  } else if (regime.tax_type === 'inter_state' || (isZeroRated(regime.tax_type) && !regime.lut)) {
    igst = mulDivRoundHalfUp(amount, rate, 10_000);
  }
  return { cgst_amount: cgst, sgst_amount: sgst, igst_amount: igst, tax_amount: cgst + sgst + igst };
}

const TOO_LARGE = `exceeds the largest amount Kosh holds (${MAX_MINOR_UNITS} minor units)`;

/** a + b, or a 400 naming `field` when the sum is beyond 2^53 − 1. */
function checkedSum(values: readonly number[], field: string, what: string): number {
  let total = 0;
  for (const v of values) {
    total += v;
    if (!Number.isSafeInteger(total)) throw errors.invalidField(field, `${what} ${TOO_LARGE}`);
  }
  return total;
}

export type ComputeInvoiceTaxInput = {
  supplier: GstSupplier;
  customer: GstCustomer;
  lines: readonly GstLineInput[];
  /** The invoice currency and the INR rate for it; without them no INR amounts are computed. */
  currency?: string;
  exchangeRate?: string | null;
  /**
   * The invoice's date: a line takes the rate in force at its time of supply (CGST s.14 across a
   * rate change, timeOfSupplyForRate). Without it, today's tables apply.
   */
  invoiceDate?: Date;
  /** The date a payment was received before the invoice (an advance), if any. */
  paymentDate?: Date;
  /**
   * Names a request field in validation errors: `field(i, 'unit_amount')` for line i, and
   * `field(null, 'lines')` for the whole invoice. Defaults to the bare name.
   */
  field?: (index: number | null, name: string) => string;
};

/**
 * Tax for a whole invoice. `rate_bp` is the rate applied: 0 for supplies under LUT and for
 * suppliers outside India. An Indian supplier's line codes are validated even on an export (the
 * code is printed on the export invoice too), so an unknown goods HSN fails the same way everywhere.
 * Amounts beyond 2^53 − 1 (a line, its tax, the invoice total, or their INR values) are a 400
 * naming the field, never an overflow.
 */
export function computeInvoiceTax(input: ComputeInvoiceTaxInput): InvoiceTax {
  const field = input.field ?? ((_i: number | null, name: string) => name);
  const regime = determineTaxRegime(input.supplier, input.customer);
  const zeroRated = isZeroRated(regime.tax_type) && regime.lut;
  const rate = input.exchangeRate ?? null;
  const withInr = regime.tax_type !== '' && rate !== null && input.currency !== undefined;
  const toInr = (amount: number, i: number) => {
    try {
      return convertMinorUnits(amount, input.currency!, 'INR', rate!);
    } catch (error) {
      if (error instanceof RangeError) throw errors.invalidField('exchange_rate', `line ${i + 1} in INR ${TOO_LARGE}`);
      throw error;
    }
  };
  const lines = input.lines.map((line, i): GstLine => {
    if (!Number.isSafeInteger(line.quantity) || line.quantity < 0) throw new RangeError(`quantity must be a non-negative integer, got ${line.quantity}`);
    if (!Number.isSafeInteger(line.unit_amount) || line.unit_amount < 0) {
      throw new RangeError(`unit_amount must be a non-negative integer of minor units, got ${line.unit_amount}`);
    }
    const gross = line.quantity * line.unit_amount;
    if (!Number.isSafeInteger(gross)) throw errors.invalidField(field(i, 'unit_amount'), `quantity × unit_amount ${TOO_LARGE}`);
    const discount = line.discount_amount ?? 0;
    if (!Number.isSafeInteger(discount) || discount < 0 || discount > gross) {
      throw new RangeError(`discount_amount must be an integer between 0 and the line amount ${gross}, got ${discount}`);
    }
    const amount = gross - discount;
    const rateDate = input.invoiceDate
      ? timeOfSupplyForRate(line.hsn_code, { supply: line.supply_date ?? null, invoice: input.invoiceDate, payment: input.paymentDate })
      : undefined;
    const codeRate = regime.tax_type === '' ? 0 : gstRateBasisPoints(line.hsn_code, line.tax_rate_bp, (name) => field(i, name), rateDate);
    const appliedRate = zeroRated ? 0 : codeRate;
    const tax = taxOf(amount, appliedRate, regime);
    const total = checkedSum([amount, tax.tax_amount], field(i, 'unit_amount'), 'the line total with tax');
    let inr: InrLine | null = null;
    if (withInr) {
      const inrAmount = toInr(amount, i);
      const inrTax = taxOf(inrAmount, appliedRate, regime);
      inr = { amount: inrAmount, ...inrTax, total: checkedSum([inrAmount, inrTax.tax_amount], 'exchange_rate', 'the line total in INR') };
    }
    return { amount, hsn_code: line.hsn_code, rate_bp: appliedRate, ...tax, total, inr };
  });
  const whole = field(null, 'lines');
  const sum = (pick: (l: GstLine) => number, what: string) => checkedSum(lines.map(pick), whole, what);
  const subtotal = sum((l) => l.amount, 'the invoice subtotal');
  const taxAmount = sum((l) => l.tax_amount, 'the invoice tax');
  const inrSum = (pick: (l: InrLine) => number) =>
    checkedSum(
      lines.map((l) => pick(l.inr!)),
      'exchange_rate',
      'the invoice in INR',
    );
  const inr: TaxComponents | null = withInr
    ? {
        subtotal: inrSum((l) => l.amount),
        cgst_amount: inrSum((l) => l.cgst_amount),
        sgst_amount: inrSum((l) => l.sgst_amount),
        igst_amount: inrSum((l) => l.igst_amount),
        tax_amount: inrSum((l) => l.tax_amount),
        total: inrSum((l) => l.total),
      }
    : null;
  return {
    ...regime,
    lines,
    subtotal,
    cgst_amount: sum((l) => l.cgst_amount, 'the invoice CGST'),
    sgst_amount: sum((l) => l.sgst_amount, 'the invoice SGST'),
    igst_amount: sum((l) => l.igst_amount, 'the invoice IGST'),
    tax_amount: taxAmount,
    total: checkedSum([subtotal, taxAmount], whole, 'the invoice total'),
    exchange_rate: withInr ? rate : null,
    inr,
  };
}

export type TaxedAmounts = { subtotal: number; cgst_amount: number; sgst_amount: number; igst_amount: number; total: number };

/**
 * Splits a gross credit against an invoice into taxable value and tax, reversing each tax
 * component pro rata: component × gross ÷ invoice total, rounded half-up; the taxable value is
 * the remainder, so subtotal + tax === gross exactly. A full credit therefore returns the
 * invoice's own amounts, and no part exceeds the invoice's. When the remainder would fall
 * outside [0, invoice subtotal] (only with extreme tax-to-value ratios) the difference is moved,
 * a paisa at a time, between the tax components that still have room: IGST, then CGST, then SGST.
 */
export function splitTaxProRata(original: TaxedAmounts, creditGross: number): TaxComponents {
  const parts = [original.subtotal, original.cgst_amount, original.sgst_amount, original.igst_amount];
  for (const part of parts) {
    if (!Number.isSafeInteger(part) || part < 0) throw new RangeError('invoice amounts must be non-negative integers');
  }
  const total = assertMinorUnits(original.total, 'invoice total');
  if (sumMinorUnits(parts) !== total) throw new RangeError('invoice total must equal subtotal + CGST + SGST + IGST');
  if (!Number.isSafeInteger(creditGross) || creditGross < 0 || creditGross > total) {
    throw new RangeError(`credit amount must be an integer between 0 and the invoice total ${total}, got ${creditGross}`);
  }
  if (creditGross === 0) return { subtotal: 0, cgst_amount: 0, sgst_amount: 0, igst_amount: 0, tax_amount: 0, total: 0 };

  const share = (amount: number) => mulDivRoundHalfUp(amount, creditGross, total);
  // Order of adjustment when the remainder is out of range: IGST, CGST, SGST.
  const tax = { igst_amount: share(original.igst_amount), cgst_amount: share(original.cgst_amount), sgst_amount: share(original.sgst_amount) };
  const keys = ['igst_amount', 'cgst_amount', 'sgst_amount'] as const;
  let subtotal = creditGross - (tax.igst_amount + tax.cgst_amount + tax.sgst_amount);
  for (const key of keys) {
    if (subtotal > original.subtotal) {
      const moved = Math.min(subtotal - original.subtotal, original[key] - tax[key]);
      tax[key] += moved;
      subtotal -= moved;
    } else if (subtotal < 0) {
      const moved = Math.min(-subtotal, tax[key]);
      tax[key] -= moved;
      subtotal += moved;
    }
  }
  const taxAmount = tax.cgst_amount + tax.sgst_amount + tax.igst_amount;
  return { subtotal, ...tax, tax_amount: taxAmount, total: subtotal + taxAmount };
}
