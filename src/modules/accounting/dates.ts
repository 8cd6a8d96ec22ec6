/**
 * Book dates. Kosh's documents are dated in India time when the supplier is in India (the GST
 * invoice PDF does the same): an invoice finalized at 20:00 UTC on 31 March is a 1 April invoice,
 * in the next financial year. Elsewhere, UTC.
 */
export const INDIA_TIME = 'Asia/Kolkata';

export function zoneOf(supplier: { country_code?: string | null } | null | undefined): string {
  return !supplier || !supplier.country_code || supplier.country_code === 'IN' ? INDIA_TIME : 'UTC';
}
