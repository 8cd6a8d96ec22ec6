-- An exporter that pays IGST on its exports (no LUT: EXPWP) may claim the IGST back (IGST Act
-- s.16(3)(b)); the e-invoice says whether it does (ExpDtls.RefClm). The entity's choice, default
-- false ("N", what every e-invoice said before): docs/decisions/0243.
ALTER TABLE legal_entities ADD COLUMN export_refund_claim boolean NOT NULL DEFAULT false;
