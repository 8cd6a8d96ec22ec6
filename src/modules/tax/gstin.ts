import { isGstStateCode } from './states.js';

/**
 * GSTIN: 2-digit state code, 10-character PAN, entity number, 'Z' (by default), check character.
 * The check character is the GSTN mod-36 Luhn variant over the first 14 characters.
 */
const GSTIN_PATTERN = /^[0-9]{2}[A-Z]{5}[0-9]{4}[A-Z][1-9A-Z][A-Z0-9][0-9A-Z]$/;
const CHARSET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function gstinCheckCharacter(first14: string): string {
  let sum = 0;
  for (let i = 0; i < 14; i++) {
    const value = CHARSET.indexOf(first14[i]!);
    const product = value * (i % 2 === 0 ? 1 : 2);
    sum += Math.floor(product / 36) + (product % 36);
  }
  return CHARSET[(36 - (sum % 36)) % 36]!;
}

export type GstinProblem = 'format' | 'state_code' | 'check_digit';

export function gstinProblem(gstin: string): GstinProblem | undefined {
  if (!GSTIN_PATTERN.test(gstin)) return 'format';
  if (!isGstStateCode(gstin.slice(0, 2))) return 'state_code';
  if (gstinCheckCharacter(gstin.slice(0, 14)) !== gstin[14]) return 'check_digit';
  return undefined;
}

export function isValidGstin(gstin: string): boolean {
  return gstinProblem(gstin) === undefined;
}

export function gstinStateCode(gstin: string): string {
  return gstin.slice(0, 2);
}

const PROBLEM_TEXT: Record<GstinProblem, string> = {
  format: 'is not a GSTIN (15 characters: state code, PAN, entity number, Z, check character)',
  state_code: 'does not start with a valid GST state code',
  check_digit: 'has a wrong check character',
};

export function describeGstinProblem(problem: GstinProblem): string {
  return PROBLEM_TEXT[problem];
}
