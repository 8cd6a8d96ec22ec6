import { describe, expect, it } from 'vitest';
import { classifyZeroRatedSupply, gstnOfflineDates, localDay } from './gst-periods.js';

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

describe('localDay', () => {
  it.each([
    { at: '2026-03-31T18:29:59Z', zone: 'Asia/Kolkata', day: '2026-03-31' }, // 23:59:59 IST
    { at: '2026-03-31T18:30:00Z', zone: 'Asia/Kolkata', day: '2026-04-01' }, // 00:00 IST: the next financial year
    { at: '2026-03-31T20:00:00Z', zone: 'UTC', day: '2026-03-31' },
    { at: '2026-01-01T04:59:59Z', zone: 'America/New_York', day: '2025-12-31' },
    { at: '2026-03-08T07:00:00Z', zone: 'America/New_York', day: '2026-03-08' }, // the DST shift's day
    { at: '0999-06-05T00:00:00Z', zone: 'UTC', day: '0999-06-05' }, // four-digit years, zero-padded
  ])('$at in $zone is $day', ({ at, zone, day }) => {
    expect(localDay(new Date(at), zone)).toBe(day);
  });
});

describe('gstnOfflineDates', () => {
  it("formats dd-mm-yyyy in the zone, the memo being the formatter's own", () => {
    const kolkata = gstnOfflineDates('Asia/Kolkata');
    const utc = gstnOfflineDates('UTC');
    const at = new Date('2026-03-31T20:00:00Z');
    expect([kolkata(at), kolkata(at), utc(at)]).toEqual(['01-04-2026', '01-04-2026', '31-03-2026']);
  });
});
