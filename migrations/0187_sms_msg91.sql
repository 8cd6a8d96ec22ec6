-- MSG91 beside Twilio as a tenant's SMS provider (docs/decisions/0187).
ALTER TABLE sms_connections DROP CONSTRAINT sms_connections_provider_check;
ALTER TABLE sms_connections ADD CONSTRAINT sms_connections_provider_check CHECK (provider IN ('twilio', 'msg91'));
