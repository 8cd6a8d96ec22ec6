export { gstinProblem, isValidGstin, gstinStateCode, gstinCheckCharacter, describeGstinProblem } from './gstin.js';
export { gstState, isGstStateCode, GST_STATE_CODES, type GstState } from './states.js';
export { gstinField, stateCodeField, sacCodeField } from './tax.schemas.js';
