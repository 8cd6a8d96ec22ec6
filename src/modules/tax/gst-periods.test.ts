import { describe, expect, it } from 'vitest';
import { classifyZeroRatedSupply } from './gst-periods.js';

describe('classifyZeroRatedSupply', () => {
  it.each([
    { tax_type: 'export', igst_amount: 0, expected: { kind: 'export', withPayment: false } }, // WOPAY (LUT)
    { tax_type: 'export', igst_amount: 1800, expected: { kind: 'export', withPayment: true } }, // WPAY
    { tax_type: 'sez', igst_amount: 0, expected: { kind: 'sez', withPayment: false } }, // SEWOP
    { tax_type: 'sez', igst_amount: 1800, expected: { kind: 'sez', withPayment: true } }, // SEWP
    { tax_type: 'inter_state', igst_amount: 1800, expected: null },
    { tax_type: 'intra_state', igst_amount: 0, expected: null },
  ])('$tax_type with IGST $igst_amount is $expected', ({ tax_type, igst_amount, expected }) => {
    expect(classifyZeroRatedSupply({ tax_type, igst_amount })).toEqual(expected);
  });
});
