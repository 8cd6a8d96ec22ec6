import { describe, expect, it } from 'vitest';
import { currencyExponent, formatAmount, formatDate, formatMoney, formatRate, indianNumberInWords, rupeesInWords } from './format.js';
import { invoiceFileName, invoiceHeading } from './invoice-pdf.js';

describe('documents', () => {
  describe('formatAmount', () => {
    it.each([
      [0, 'INR', '0.00'],
      [5, 'INR', '0.05'],
      [99, 'INR', '0.99'],
      [100, 'INR', '1.00'],
      [99_999, 'INR', '999.99'],
      [1_000_00, 'INR', '1,000.00'],
      [12_345_678, 'INR', '1,23,456.78'],
      [1_00_00_000_00, 'INR', '1,00,00,000.00'],
      [12_34_56_78_901_23, 'INR', '12,34,56,78,901.23'],
      [-1_50, 'INR', '-1.50'],
      [-12_345_678, 'INR', '-1,23,456.78'],
      [123_456_789, 'USD', '1,234,567.89'],
      [100_000, 'EUR', '1,000.00'],
      [1_234, 'JPY', '1,234'],
      [1_234, 'KWD', '1.234'],
      [Number.MAX_SAFE_INTEGER, 'INR', '9,00,71,99,25,47,409.91'],
    ])('%d %s → %s', (minor, currency, expected) => {
      expect(formatAmount(minor, currency)).toBe(expected);
    });

    it('refuses a fractional or unsafe amount rather than print it', () => {
      expect(() => formatAmount(1.5, 'INR')).toThrow(RangeError);
      expect(() => formatAmount(2 ** 60, 'INR')).toThrow(RangeError);
    });

    it('prefixes the currency code', () => {
      expect(formatMoney(1_19_179_99, 'INR')).toBe('INR 1,19,179.99');
      expect(formatMoney(50_00, 'USD')).toBe('USD 50.00');
    });

    it.each([
      ['INR', 2],
      ['USD', 2],
      ['JPY', 0],
      ['BHD', 3],
      ['KWD', 3],
      ['IQD', 3],
    ])('knows %s has %d decimals', (currency, digits) => {
      expect(currencyExponent(currency)).toBe(digits);
    });

    it('refuses a code outside ISO 4217 instead of guessing two decimals', () => {
      expect(() => currencyExponent('XYZ')).toThrow(RangeError);
    });
  });

  describe('formatRate', () => {
    it.each([
      [1800, '18%'],
      [900, '9%'],
      [250, '2.5%'],
      [125, '1.25%'],
      [12.5, '0.125%'],
      [0, '0%'],
    ])('%d bp → %s', (bp, expected) => {
      expect(formatRate(bp)).toBe(expected);
    });
  });

  describe('formatDate', () => {
    it.each([
      ['2026-04-01T00:00:00Z', 'Asia/Kolkata', '01 Apr 2026'],
      // 20:00 UTC on 31 March is 01:30 on 1 April in India: the next financial year.
      ['2026-03-31T20:00:00Z', 'Asia/Kolkata', '01 Apr 2026'],
      ['2026-03-31T20:00:00Z', 'UTC', '31 Mar 2026'],
      ['2026-09-15T12:00:00Z', 'UTC', '15 Sep 2026'],
      ['2025-12-31T18:29:59Z', 'Asia/Kolkata', '31 Dec 2025'],
      ['2025-12-31T18:30:00Z', 'Asia/Kolkata', '01 Jan 2026'],
      [null, 'UTC', '—'],
    ])('%s in %s → %s', (iso, zone, expected) => {
      expect(formatDate(iso, zone)).toBe(expected);
    });
  });

  describe('amounts in words', () => {
    it.each([
      [0, 'Zero'],
      [7, 'Seven'],
      [19, 'Nineteen'],
      [20, 'Twenty'],
      [21, 'Twenty-One'],
      [100, 'One Hundred'],
      [101, 'One Hundred One'],
      [999, 'Nine Hundred Ninety-Nine'],
      [1_000, 'One Thousand'],
      [10_001, 'Ten Thousand One'],
      [1_00_000, 'One Lakh'],
      [1_19_179, 'One Lakh Nineteen Thousand One Hundred Seventy-Nine'],
      [1_00_00_000, 'One Crore'],
      [12_34_56_789, 'Twelve Crore Thirty-Four Lakh Fifty-Six Thousand Seven Hundred Eighty-Nine'],
      [1_00_00_00_00_000, 'Ten Thousand Crore'],
      [1_00_000_00_00_000, 'One Lakh Crore'],
    ])('%d → %s', (n, expected) => {
      expect(indianNumberInWords(n)).toBe(expected);
    });

    it('writes INR totals with paise, and nothing for other currencies', () => {
      expect(rupeesInWords(1_19_179_99, 'INR')).toBe('Indian Rupees One Lakh Nineteen Thousand One Hundred Seventy-Nine and Ninety-Nine Paise Only');
      expect(rupeesInWords(500_00, 'INR')).toBe('Indian Rupees Five Hundred Only');
      expect(rupeesInWords(5, 'INR')).toBe('Indian Rupees Zero and Five Paise Only');
      expect(rupeesInWords(500_00, 'USD')).toBeUndefined();
    });
  });

  describe('invoiceHeading', () => {
    it.each([
      ['intra_state', false, 'Tax Invoice', undefined],
      ['inter_state', false, 'Tax Invoice', undefined],
      ['export', true, 'Export Invoice', 'Supply meant for export under Letter of Undertaking without payment of integrated tax (IGST)'],
      ['export', false, 'Export Invoice', 'Supply meant for export on payment of integrated tax (IGST)'],
      [
        'sez',
        true,
        'Tax Invoice',
        'Supply meant for SEZ unit or SEZ developer for authorised operations under Letter of Undertaking without payment of integrated tax (IGST)',
      ],
      ['sez', false, 'Tax Invoice', 'Supply meant for SEZ unit or SEZ developer for authorised operations on payment of integrated tax (IGST)'],
      ['', false, 'Invoice', undefined],
    ])('%j (lut %j) → %s', (taxType, lut, title, endorsement) => {
      const heading = invoiceHeading({ tax_type: taxType, lut });
      expect(heading.title).toBe(title);
      expect(heading.endorsement).toBe(endorsement);
    });
  });

  describe('invoiceFileName', () => {
    it.each([
      [{ number: 'INV-000003', id: 'x' }, 'INV-000003.pdf'],
      [{ number: 'KA/26-27/0001', id: 'x' }, 'KA-26-27-0001.pdf'],
      [{ number: null, id: '0190' }, 'draft-0190.pdf'],
    ])('%j → %s', (invoice, expected) => {
      expect(invoiceFileName(invoice)).toBe(expected);
    });
  });
});
