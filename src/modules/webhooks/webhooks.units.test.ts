import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { newSigningSecret, sign, signatureHeader } from './webhooks.signing.js';
import { deliveryStatus, recordAttempt, retryGapMs } from './webhooks.states.js';
import { isForbiddenAddress, publicOnlyLookup } from '../../platform/http/outbound-guard.js';
import { postJson } from './webhooks.http.js';

const T = new Date('2026-04-01T00:00:00Z');
const plus = (ms: number) => new Date(T.getTime() + ms);

describe('webhook delivery states', () => {
  it.each([
    [{ delivered_at: null, attempts: 0 }, 'pending'],
    [{ delivered_at: null, attempts: 4 }, 'pending'],
    [{ delivered_at: null, attempts: 5 }, 'failed'],
    [{ delivered_at: T, attempts: 1 }, 'succeeded'],
    [{ delivered_at: T, attempts: 5 }, 'succeeded'],
  ] as const)('%o is %s', (delivery, status) => {
    expect(deliveryStatus(delivery)).toBe(status);
  });

  it.each([
    [1, 5_000],
    [2, 295_000],
    [3, 1_500_000],
    [4, 5_400_000],
    [5, null],
    [0, null],
  ])('waits %i → %s ms before the next attempt', (made, gap) => {
    expect(retryGapMs(made)).toBe(gap);
  });

  it('lands on 0 s, 5 s, 5 min, 30 min, 2 h after creation when each attempt is on time', () => {
    let at = T;
    const times = [0];
    for (let before = 0; before < 4; before++) {
      const next = recordAttempt(before, { ok: false, statusCode: 500, error: 'HTTP 500' }, at).next_retry_at!;
      times.push(next.getTime() - T.getTime());
      at = next;
    }
    expect(times).toEqual([0, 5_000, 300_000, 1_800_000, 7_200_000]);
  });

  it.each([
    ['success', 0, { ok: true, statusCode: 204 } as const, { attempts: 1, delivered_at: T, next_retry_at: null, last_error: null, last_status_code: 204 }],
    ['first failure', 0, { ok: false, statusCode: 500, error: 'x' } as const, { attempts: 1, delivered_at: null, next_retry_at: plus(5_000), last_error: 'x' }],
    [
      'fifth failure',
      4,
      { ok: false, statusCode: null, error: 'y' } as const,
      { attempts: 5, delivered_at: null, next_retry_at: null, last_status_code: null },
    ],
    ['success on the fifth', 4, { ok: true, statusCode: 200 } as const, { attempts: 5, delivered_at: T, next_retry_at: null }],
  ])('records %s', (_label, before, outcome, expected) => {
    expect(recordAttempt(before, outcome, T)).toMatchObject(expected);
  });
});

describe('webhook signing', () => {
  it('produces what the standardwebhooks library produces and verifies', () => {
    const secret = newSigningSecret();
    const body = JSON.stringify({ id: 'evt', type: 'plan.created', data: { object: { name: 'Prö' } } });
    const now = Math.floor(Date.now() / 1000);
    expect(sign(secret, 'msg_1', now, body)).toBe(new Webhook(secret).sign('msg_1', new Date(now * 1000), body));
    const headers = {
      'webhook-id': 'msg_1',
      'webhook-timestamp': String(now),
      'webhook-signature': signatureHeader([newSigningSecret(), secret], 'msg_1', now, body),
    };
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
    expect(() => new Webhook(newSigningSecret()).verify(body, headers)).toThrow();
  });

  it('makes a fresh 32-byte secret each time', () => {
    const a = newSigningSecret();
    expect(Buffer.from(a.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(newSigningSecret()).not.toBe(a);
  });
});

describe('live-mode address check', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.0.0.5',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.0.1',
    '100.64.0.1',
    '100.127.255.255',
    '169.254.169.254',
    '169.254.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '198.18.0.1',
    '192.0.2.1',
    '::',
    '::1',
    '[::1]',
    '::ffff:127.0.0.1',
    '::ffff:a00:5',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'fe80::1%eth0',
    'ff02::1',
    '64:ff9b::10.0.0.5',
    '64:ff9b::a9fe:a9fe',
    '2002:c0a8:0101::1',
    '2001:db8::1',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '172.32.0.1',
    '100.128.0.1',
    '169.253.1.1',
    '2606:4700::1111',
    '::ffff:8.8.8.8',
    '64:ff9b::808:808',
    '2002:0808:0808::1',
  ])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('the live-mode socket lookup (DNS rebinding)', () => {
  it('refuses to connect where a name resolves to a private address, and the receiver hears nothing', async () => {
    let heard = 0;
    const server = createServer((_req, res) => {
      heard += 1;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const url = new URL(`http://localhost:${port}/hooks`); // localhost: answered by the hosts file
    const options = { timeoutMs: 5_000, maxAnswerBytes: 1_000 };
    try {
      await expect(postJson(url, {}, '{}', { ...options, lookup: publicOnlyLookup })).rejects.toMatchObject({ code: 'EADDRFORBIDDEN' });
      expect(heard).toBe(0);
      // The same request with the ordinary lookup (test mode) goes through.
      expect((await postJson(url, {}, '{}', options)).status).toBe(200);
      expect(heard).toBe(1);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
