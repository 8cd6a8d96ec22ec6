import { describe, expect, it } from 'vitest';
import { describeGstinProblem, gstinCheckCharacter, gstinField, gstinProblem, gstinStateCode, isValidGstin } from './index.js';

const CHARSET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A GSTIN built from its 14 leading characters plus the computed check character. */
const complete = (first14: string) => first14 + gstinCheckCharacter(first14);

describe('GSTIN', () => {
  describe('check character', () => {
    /*
     * Real-world-format GSTINs seen in published examples; their check characters were recomputed (a
     * separate script, not this module) before being written here.
     *
     * Worked by hand for 27AAPFU0939F1ZV, a GSTIN widely published as an example:
     * values 2,7,10,10,25,15,30,0,9,3,9,15,1,35; factors alternate 1,2 from the left;
     * products 2,14,10,20,25,30,30,0,9,6,9,30,1,70; each product folded as ⌊p/36⌋ + p mod 36
     * (only 70 → 1 + 34 = 35 changes); sum 221; 221 mod 36 = 5; (36 − 5) mod 36 = 31 → 'V'.
     */
    it.each([
      ['27AAPFU0939F1ZV', 'Maharashtra, a firm'],
      ['33GSPTN0231G1ZM', 'Tamil Nadu'],
      ['27AAACR5055K1Z7', 'Maharashtra, a company'],
      ['29AAGCB7383J1Z4', 'Karnataka, a company'],
    ])('accepts the published GSTIN %s (%s)', (gstin) => {
      expect(gstinCheckCharacter(gstin.slice(0, 14))).toBe(gstin[14]);
      expect(gstinProblem(gstin)).toBeUndefined();
      expect(isValidGstin(gstin)).toBe(true);
    });

    it('is a single character of the GSTIN charset for every state and entity number', () => {
      for (const state of ['01', '07', '29', '33', '37', '38', '97', '99']) {
        for (const entity of ['1', '9', 'A', 'Z']) {
          const gstin = complete(`${state}ABCDE1234F${entity}Z`);
          expect(gstin).toHaveLength(15);
          expect(CHARSET).toContain(gstin[14]);
          expect(gstinProblem(gstin), gstin).toBeUndefined();
          expect(gstinStateCode(gstin)).toBe(state);
        }
      }
    });

    it('accepts a last-but-one character other than Z (the format allows any letter or digit there)', () => {
      expect(gstinProblem(complete('29ABCDE1234F1A'))).toBeUndefined();
      expect(gstinProblem(complete('29ABCDE1234F10'))).toBeUndefined();
    });

    it('refuses every wrong check character', () => {
      const valid = '27AAPFU0939F1ZV';
      for (const wrong of CHARSET.replace('V', '')) {
        expect(gstinProblem(valid.slice(0, 14) + wrong), wrong).toBe('check_digit');
      }
    });

    it('detects any single mistyped character in the body (same character class, so the format still holds)', () => {
      const valid = complete('29AAGCB7383J1Z');
      // Positions 2–6 and 11 are PAN letters, 7–10 PAN digits; 12 and 13 take letters or digits.
      const classOf = (i: number) => (i >= 7 && i <= 10 ? DIGITS : i === 12 ? CHARSET.slice(1) : i === 13 ? CHARSET : LETTERS);
      for (let i = 2; i < 14; i++) {
        for (const c of classOf(i)) {
          if (c === valid[i]) continue;
          const typo = valid.slice(0, i) + c + valid.slice(i + 1);
          expect(gstinProblem(typo), typo).toBe('check_digit');
        }
      }
    });
  });

  describe('state code', () => {
    it.each(['00', '39', '40', '96', '98'])('refuses state %s even with a correct check character', (state) => {
      expect(gstinProblem(complete(`${state}ABCDE1234F1Z`))).toBe('state_code');
    });
  });

  describe('format', () => {
    it.each([
      ['empty', ''],
      ['14 characters', '27AAPFU0939F1Z'],
      ['16 characters', '27AAPFU0939F1ZVX'],
      ['lower case', '27aapfu0939f1zv'],
      ['a digit in the PAN letters', '27AAPF10939F1ZV'],
      ['a letter in the PAN digits', '27AAPFU09X9F1ZV'],
      ['entity number 0', '27AAPFU0939F0ZV'],
      ['a space inside', '27AAPFU 939F1ZV'],
      ['a letter in the state code', 'K7AAPFU0939F1ZV'],
      ['a symbol', '27AAPFU0939F1Z-'],
    ])('refuses %s', (_label, value) => {
      expect(gstinProblem(value)).toBe('format');
      expect(isValidGstin(value)).toBe(false);
    });
  });

  describe('gstinField', () => {
    it('trims and upper-cases before checking', () => {
      expect(gstinField().parse('  27aapfu0939f1zv ')).toBe('27AAPFU0939F1ZV');
    });

    it.each([
      ['27AAPFU0939F1ZA', 'check_digit'],
      [complete('00ABCDE1234F1Z'), 'state_code'],
      ['27AAPFU0939F1Z', 'format'],
    ] as const)('refuses %s with the message for %s', (value, problem) => {
      const result = gstinField().safeParse(value);
      expect(result.success).toBe(false);
      expect(result.error?.issues[0]?.message).toBe(`GSTIN ${describeGstinProblem(problem)}`);
    });
  });
});
