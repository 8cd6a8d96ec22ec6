import { describe, expect, it } from 'vitest';
import { monthlyRecurringRevenue } from './mrr.js';

describe('monthlyRecurringRevenue', () => {
  it.each([
    { case: 'monthly', amount: 49900, quantity: 1, unit: 'month', count: 1, status: 'active', mrr: 49900 },
    { case: 'quarterly (3 months)', amount: 300000, quantity: 1, unit: 'month', count: 3, status: 'active', mrr: 100000 },
    { case: 'yearly ÷ 12', amount: 1200000, quantity: 1, unit: 'year', count: 1, status: 'active', mrr: 100000 },
    { case: 'yearly ÷ 12, half-up', amount: 100006, quantity: 1, unit: 'year', count: 1, status: 'active', mrr: 8334 },
    { case: 'two-yearly', amount: 2400000, quantity: 1, unit: 'year', count: 2, status: 'active', mrr: 100000 },
    { case: 'weekly × 52 ÷ 12', amount: 30000, quantity: 1, unit: 'week', count: 1, status: 'active', mrr: 130000 },
    { case: 'daily × 365 ÷ 12', amount: 1200, quantity: 1, unit: 'day', count: 1, status: 'active', mrr: 36500 },
    { case: 'seats multiply', amount: 100000, quantity: 3, unit: 'month', count: 1, status: 'active', mrr: 300000 },
    { case: 'past_due still counts', amount: 100000, quantity: 1, unit: 'month', count: 1, status: 'past_due', mrr: 100000 },
    { case: 'trialing is excluded', amount: 100000, quantity: 1, unit: 'month', count: 1, status: 'trialing', mrr: 0 },
    { case: 'paused is excluded', amount: 100000, quantity: 1, unit: 'month', count: 1, status: 'paused', mrr: 0 },
    { case: 'unpaid is excluded', amount: 100000, quantity: 1, unit: 'month', count: 1, status: 'unpaid', mrr: 0 },
    { case: 'canceled is excluded', amount: 100000, quantity: 1, unit: 'month', count: 1, status: 'canceled', mrr: 0 },
  ] as const)('$case', ({ amount, quantity, unit, count, status, mrr }) => {
    expect(monthlyRecurringRevenue({ amount, quantity, intervalUnit: unit, intervalCount: count, status })).toBe(mrr);
  });
});
