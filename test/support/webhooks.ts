import { newId } from '../../src/platform/ids.js';

/**
 * A webhook endpoint row as the API stores it, for tests that must put one in place directly
 * (an address the API would refuse today, or a write inside a test's own transaction).
 */
export function endpointRow(tenantId: string, now: Date, fields: { url?: string; events?: string[] } = {}) {
  return {
    tenant_id: tenantId,
    id: newId(),
    url: fields.url ?? 'https://hooks.example.test/kosh',
    description: null,
    events: JSON.stringify(fields.events ?? ['*']),
    enabled: true,
    secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`,
    previous_secret: null,
    previous_secret_expires_at: null,
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
}
