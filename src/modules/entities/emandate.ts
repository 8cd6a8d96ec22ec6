import type { EmandateCategory } from './entities.tables.js';

/**
 * How much one mandate debit may take without the customer's additional factor of authentication
 * (AFA), per RBI's e-mandate framework (docs/decisions/0520: the June 2022 circular's ₹15 000, the
 * December 2023 circular's ₹1 lakh for the listed categories; both kept by the "Digital Payments –
 * E-mandate Framework, 2026").
 */

/** ₹15 000 in paise: any recurring debit. */
export const AFA_FREE_LIMIT_STANDARD = 15_000_00;
/** ₹1 lakh in paise: subscriptions to mutual funds, insurance premiums, credit card bill payments. */
export const AFA_FREE_LIMIT_LISTED = 1_00_000_00;

/** The entity's limit: its explicit `afa_limit`, else its category's. */
export function afaFreeLimit(entity: { emandate_category: EmandateCategory; emandate_afa_limit: number | null }): number {
  if (entity.emandate_afa_limit !== null) return entity.emandate_afa_limit;
  return entity.emandate_category === 'standard' ? AFA_FREE_LIMIT_STANDARD : AFA_FREE_LIMIT_LISTED;
}
