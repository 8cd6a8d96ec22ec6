-- The accounting OAuth state is bound to the browser that started the flow (docs/decisions/0231):
-- the SHA-256 of a random value set as an HttpOnly cookie by POST /v1/accounting/connect. A state
-- without one (started before this migration) is refused at the callback; it expires in 10 minutes.
ALTER TABLE accounting_oauth_states ADD COLUMN binding_hash text;
