import type { Generated } from 'kysely';
import type { NullableJson, Timestamp, TableAccess } from '../../platform/db/schema.js';

export type PostalAddress = {
  line1?: string;
  line2?: string;
  city?: string;
  state_code?: string;
  postal_code?: string;
  country?: string;
};

export type AatoBand = 'up_to_5_crore' | 'above_5_crore' | '10_crore_or_more';

/** RBI e-mandate framework: `standard` (₹15 000 without AFA) or a listed category (₹1 lakh). */
export type EmandateCategory = 'standard' | 'mutual_fund_subscription' | 'insurance_premium' | 'credit_card_bill';

export type EinvoicingProvider = 'sandbox' | 'nic' | 'gsp';

export interface LegalEntitiesTable {
  tenant_id: string;
  id: string;
  name: string;
  legal_name: string;
  is_primary: boolean;
  tb_ledger_id: number;
  invoice_prefix: string;
  credit_note_prefix: Generated<string>;
  quote_prefix: Generated<string>;
  country_code: string;
  state_code: string | null;
  gstin: string | null;
  address: NullableJson<PostalAddress>;
  /** Has a Letter of Undertaking: exports and SEZ supplies go without payment of IGST. */
  lut: Generated<boolean>;
  /** Exports with payment of IGST (no LUT): the refund of that IGST is claimed (e-invoice RefClm "Y"). */
  export_refund_claim: Generated<boolean>;
  /** An export dated in a financial year with no LUT recorded (entity_luts): charge IGST, or refuse the invoice. */
  lut_missing: Generated<'charge_igst' | 'refuse'>;
  einvoicing_enabled: Generated<boolean>;
  einvoicing_provider: EinvoicingProvider | null;
  /** Sealed with platform/secrets under `tenant:<id>:einvoicing:<entity id>`; never answered. */
  einvoicing_credentials: string | null;
  /** IANA zone in which the entity's documents are dated (GST periods, financial years). */
  time_zone: Generated<string>;
  /** The currency its books are kept in (DESIGN §19): INR for an Indian entity. */
  functional_currency: string;
  /** Aggregate annual turnover band (decisions 0361, 0363): 6-digit HSN above ₹5 crore, the IRP's 30-day limit from ₹10 crore. */
  aato_band: Generated<AatoBand>;
  /** E-mandates (docs/decisions/0520): the category setting the AFA-free debit limit, an explicit limit (paise), the grievance contact. */
  emandate_category: Generated<EmandateCategory>;
  emandate_afa_limit: number | null;
  grievance_contact: string | null;
  /** Whether the document series restart every financial year (decision 0364). */
  number_series_reset: Generated<'never' | 'financial_year'>;
  /** Month ends at which open foreign receivables are revalued (decision 0650). */
  fx_revaluation: Generated<'monthly' | 'year_end' | 'off'>;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** INR per one unit of `currency` (a decimal string), from `effective_from` on. */
export interface EntityExchangeRatesTable {
  tenant_id: string;
  id: string;
  entity_id: string;
  currency: string;
  rate: string;
  effective_from: Timestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One financial year's Letter of Undertaking (FORM GST RFD-11) and its ARN (migrations/0282). */
export interface EntityLutsTable {
  tenant_id: string;
  entity_id: string;
  financial_year: string;
  arn: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

declare module '../../platform/db/schema.js' {
  interface Tables {
    entity_luts: EntityLutsTable;
    legal_entities: LegalEntitiesTable;
    entity_exchange_rates: EntityExchangeRatesTable;
  }
}

/** Direct use of these tables by other modules (see TableAccess); everything else goes through this module's operations. */
export const entitiesTableAccess: TableAccess = {
  legal_entities: { read: ['dunning', 'einvoicing', 'periods'] },
};
