-- Dunning weights (SPEC 4.16, docs/decisions/0310): what each tenant's retries learned. One row
-- per tenant × context (failure code | amount band | payment method type) × arm (the retry slot),
-- counting the retries that were followed by the invoice being paid (successes) or by another
-- failed charge (failures).
CREATE TABLE dunning_retry_arms (
  tenant_id uuid NOT NULL,
  context text NOT NULL,
  arm text NOT NULL,
  successes integer NOT NULL DEFAULT 0 CHECK (successes >= 0),
  failures integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, context, arm)
);

-- The arm and context chosen for an execution's next retry, and on the action that ran it; the
-- action's outcome is learned once (retry_learned).
ALTER TABLE dunning_executions ADD COLUMN next_retry_arm text;
ALTER TABLE dunning_executions ADD COLUMN next_retry_context text;
ALTER TABLE dunning_actions ADD COLUMN retry_arm text;
ALTER TABLE dunning_actions ADD COLUMN retry_context text;
ALTER TABLE dunning_actions ADD COLUMN retry_learned boolean NOT NULL DEFAULT false;
CREATE INDEX dunning_actions_unlearned_retry ON dunning_actions (tenant_id, execution_id) WHERE retry_arm IS NOT NULL AND NOT retry_learned;
