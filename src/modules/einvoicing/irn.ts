import { createHash } from 'node:crypto';

/**
 * The IRN (DESIGN §15): SHA-256, hex, of supplier GSTIN + financial year (`2026-27`) + document
 * type (INV|CRN|DBN) + document number, concatenated as they are.
 */
export function computeIrn(gstin: string, financialYear: string, type: 'INV' | 'CRN' | 'DBN', number: string): string {
  // The IRP upper-cases document numbers before hashing (GSTN advisory, from 1 June 2025).
  return createHash('sha256').update(`${gstin}${financialYear}${type}${number.toUpperCase()}`, 'utf8').digest('hex');
}
