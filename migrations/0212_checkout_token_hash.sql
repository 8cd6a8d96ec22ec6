-- Checkout links' tokens are kept as their SHA-256 only (issue #29 item 9, decision 0212): a new
-- session stores token_hash and no token. Sessions made before keep their token until they expire
-- (24 h); both are accepted when a link is opened.
ALTER TABLE checkout_sessions ADD COLUMN token_hash text;
ALTER TABLE checkout_sessions ALTER COLUMN token DROP NOT NULL;
