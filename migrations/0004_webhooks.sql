-- Webhook endpoints and their deliveries (DESIGN §7, §10; SPEC §2 "Webhook delivery", §4.15).
-- The events outbox itself is in 0001. docs/events.md describes the behaviour.

CREATE TABLE webhook_endpoints (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  url text NOT NULL,
  description text,
  -- Event types this endpoint receives: a JSON array of type strings, or ["*"] for all.
  events jsonb NOT NULL DEFAULT '["*"]',
  enabled boolean NOT NULL DEFAULT true,
  -- Signing secrets ("whsec_<base64>"). Kept readable because every delivery is signed with them.
  -- After a rotation the previous secret keeps signing, alongside the new one, until it expires.
  secret text NOT NULL,
  previous_secret text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Deleted endpoints are kept (soft delete) so their delivery log stays whole.
  deleted_at timestamptz,
  PRIMARY KEY (tenant_id, id),
  CHECK (jsonb_typeof(events) = 'array'),
  CHECK ((previous_secret IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_tenant_created ON webhook_endpoints (tenant_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;

-- One delivery = one event sent to one endpoint, retried on a schedule. Its status (pending,
-- succeeded, failed) is derived, never stored: succeeded when delivered_at is set; failed when
-- 5 attempts were made without success; pending otherwise.
CREATE TABLE webhook_deliveries (
  tenant_id uuid NOT NULL REFERENCES tenants (id),
  id uuid NOT NULL,
  event_id uuid NOT NULL,
  webhook_endpoint_id uuid NOT NULL,
  -- The URL the last attempt went to (the endpoint's URL when the delivery was created, before).
  endpoint_url text NOT NULL,
  -- The event's subject, copied from the event: deliveries of one object to one endpoint are
  -- made in order (docs/events.md, "Ordering").
  object_id uuid,
  attempts integer NOT NULL DEFAULT 0 CHECK (attempts BETWEEN 0 AND 5),
  last_status_code integer,
  last_error text,
  -- When the next attempt is due. NULL once the delivery is finished, and while it waits behind
  -- an earlier unfinished delivery of the same object to the same endpoint.
  next_retry_at timestamptz,
  delivered_at timestamptz,
  -- Set on an unfinished delivery when a later delivery of the same object waits behind it, so
  -- finishing this one knows (from its own row) that it must release the next.
  successor_waiting boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, event_id) REFERENCES events (tenant_id, id),
  FOREIGN KEY (tenant_id, webhook_endpoint_id) REFERENCES webhook_endpoints (tenant_id, id)
);
CREATE INDEX webhook_deliveries_endpoint_created ON webhook_deliveries (tenant_id, webhook_endpoint_id, created_at DESC, id DESC);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (tenant_id, event_id, created_at DESC, id DESC);
-- Unfinished deliveries per endpoint and object: the ordering rule looks here.
CREATE INDEX webhook_deliveries_open_by_object ON webhook_deliveries (tenant_id, webhook_endpoint_id, object_id, created_at, id)
  WHERE delivered_at IS NULL AND attempts < 5 AND object_id IS NOT NULL;
