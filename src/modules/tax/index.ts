export { gstinProblem, isValidGstin, gstinStateCode, gstinCheckCharacter, describeGstinProblem } from './gstin.js';
export { gstState, isGstStateCode, GST_STATE_CODES, type GstState } from './states.js';
export { gstinField, stateCodeField, sacCodeField } from './tax.schemas.js';
export {
  computeInvoiceTax,
  determineTaxRegime,
  lineNetAmount,
  splitTaxProRata,
  taxProviderOf,
  type GstCustomer,
  type GstLine,
  type GstLineInput,
  type GstSupplier,
  type InvoiceTax,
  type TaxComponents,
  type TaxedAmounts,
  type TaxProvider,
  type TaxRegime,
  type TaxType,
} from './gst.js';
export { DEFAULT_SAC_CODE, GST_RATES, STANDARD_SERVICES_RATE_BP, findGstRate, gstRateBasisPoints, resolveHsnCode, type GstRateEntry } from './rates.js';
export {
  classifyZeroRatedSupply,
  financialYear,
  gstDate,
  gstnOfflineDates,
  localDate,
  localDay,
  returnPeriodBounds,
  startOfLocalDay,
  type LocalDate,
  type ZeroRatedSupply,
} from './gst-periods.js';
export { RATE_CHANGES, SEPT_2025_CHANGE, rateDate, rateInForce, timeOfSupplyForRate, type RateChange } from './rate-changes.js';
