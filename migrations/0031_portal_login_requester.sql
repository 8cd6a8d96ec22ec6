-- The portal's e-mailed sign-in links are capped per customer *and requester* (decision 0031): a
-- stranger who asks for links to a customer's address spends only their own allowance, so the
-- customer can still ask for one. `requester` is a SHA-256 of the client address, never the address.
ALTER TABLE portal_login_tokens ADD COLUMN requester text;
