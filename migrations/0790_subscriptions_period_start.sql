-- Decision 0790: usage ingestion's late-event check first asks whether any subscription of the tenant
-- started its current period after the batch's oldest event (a range read of this index, usually
-- empty); only then does it look up each (customer, metric) pair of the batch.
CREATE INDEX subscriptions_period_start ON subscriptions (tenant_id, current_period_start);
