-- The last TOTP time step an operator signed in with: a code is accepted once (RFC 6238 §5.2).
ALTER TABLE users ADD COLUMN totp_last_step bigint;
