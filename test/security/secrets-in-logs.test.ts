import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKosh, type Kosh } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { redactUrl } from '../../src/platform/http/request-log.js';
import { openTestDatabase } from '../support/database.js';

/**
 * Request logs never carry the one-time tokens some routes take in their query string: portal
 * magic links, checkout links, OAuth callbacks (DESIGN §21, issue #29 item 9).
 */
describe('request logs', () => {
  const lines: string[] = [];
  let kosh: Kosh;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await openTestDatabase();
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    kosh = await createKosh({
      config: loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'info', KOSH_SECRET_KEY: randomBytes(32).toString('base64') }),
      clock: new ManualClock('2026-04-01T00:00:00Z'),
      database,
      logger: pino({ level: 'info' }, sink),
    });
    close = async () => {
      await kosh.app.close();
      await database.close();
    };
  });
  afterAll(() => close());

  const tenantId = '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77';
  const sessionId = '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b78';
  it.each([
    ['a portal magic link', '/portal/login?token=magic-link-secret-1'],
    ['a checkout link', `/checkout/${tenantId}/${sessionId}?token=checkout-secret-2`],
    ['an OAuth callback', '/v1/accounting/callback/quickbooks?code=oauth-code-secret-3&state=oauth-state-secret-4&realmId=123'],
  ])('keeps the token of %s out of the request line', async (_label, url) => {
    lines.length = 0;
    await kosh.app.inject({ method: 'GET', url });
    const logged = lines.join('');
    expect(logged).toContain('incoming request');
    expect(logged).toContain(url.split('?')[0]!);
    expect(logged).not.toMatch(/secret-\d/);
    expect(logged).toContain('=[redacted]');
  });

  it('redacts credential-like parameters only', () => {
    expect(redactUrl('/v1/invoices?limit=10&status=open')).toBe('/v1/invoices?limit=10&status=open');
    expect(redactUrl('/x?token=a&limit=1&code=b&state=c&api%5Fkey=d')).toBe(
      '/x?token=[redacted]&limit=1&code=[redacted]&state=[redacted]&api%5Fkey=[redacted]',
    );
  });
});
