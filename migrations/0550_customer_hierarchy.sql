-- Customer hierarchy and consolidated invoices (DESIGN §24, docs/decisions/0550): a customer may
-- name a parent in the same tenant, and bill its subscriptions to it (bill_to = 'parent'). The
-- renewals of such children go on the parent's consolidated invoice, one line per child charge,
-- and each line says whose subscription it bills. Additive: nullable columns, a defaulted column,
-- foreign keys that include tenant_id (Citus rules), an index for the children of a parent.
ALTER TABLE customers ADD COLUMN parent_customer_id uuid;
ALTER TABLE customers ADD COLUMN bill_to text NOT NULL DEFAULT 'self' CHECK (bill_to IN ('self', 'parent'));
ALTER TABLE customers
  ADD CONSTRAINT customers_parent_fk FOREIGN KEY (tenant_id, parent_customer_id) REFERENCES customers (tenant_id, id);
ALTER TABLE customers
  ADD CONSTRAINT customers_bill_to_parent CHECK (bill_to = 'self' OR parent_customer_id IS NOT NULL);
CREATE INDEX customers_children ON customers (tenant_id, parent_customer_id, id) WHERE parent_customer_id IS NOT NULL;

-- On a consolidated invoice: the child customer and the subscription a line bills (null elsewhere).
ALTER TABLE invoice_lines ADD COLUMN subscription_id uuid;
ALTER TABLE invoice_lines ADD COLUMN customer_id uuid;
ALTER TABLE invoice_lines
  ADD CONSTRAINT invoice_lines_subscription_fk FOREIGN KEY (tenant_id, subscription_id) REFERENCES subscriptions (tenant_id, id);
ALTER TABLE invoice_lines
  ADD CONSTRAINT invoice_lines_customer_fk FOREIGN KEY (tenant_id, customer_id) REFERENCES customers (tenant_id, id);
