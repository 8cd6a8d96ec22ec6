import { describe, expect, it } from 'vitest';
import { errors } from '../../../platform/errors.js';
import { gatewayUnavailable, isGatewayOrNetworkError } from './gateway-http.js';

const withCode = (message: string, code: string) => Object.assign(new Error(message), { code });

describe('isGatewayOrNetworkError', () => {
  it.each([
    ['a connection reset', withCode('read ECONNRESET', 'ECONNRESET')],
    ['a refused connection', withCode('connect ECONNREFUSED 127.0.0.1:9', 'ECONNREFUSED')],
    ["fetch's failure caused by a reset", new TypeError('fetch failed', { cause: withCode('other side closed', 'UND_ERR_SOCKET') })],
    ['a timeout (AbortSignal.timeout)', new DOMException('The operation was aborted due to timeout', 'TimeoutError')],
    ['an aborted call', new DOMException('This operation was aborted', 'AbortError')],
    ['a 5xx carried by an SDK error', Object.assign(new Error('Internal Server Error'), { statusCode: 502 })],
    ['a 429', Object.assign(new Error('Too Many Requests'), { statusCode: 429 })],
    ['an adapter that gave up', gatewayUnavailable('provider answered 503')],
  ])('counts %s as the gateway not answering', (_, error) => {
    expect(isGatewayOrNetworkError(error)).toBe(true);
  });

  it.each([
    ['a TypeError of our own', new TypeError("Cannot read properties of null (reading 'receipt')")],
    ["fetch's failure with no network cause", new TypeError('fetch failed')],
    ['a database constraint violation', withCode('duplicate key value violates unique constraint "payment_attempts_pending"', '23505')],
    ['a refusal of our own rules', errors.conflict('a payment attempt on this invoice is already in progress', 'payment_in_progress')],
    ['a 4xx carried by an SDK error', Object.assign(new Error('Bad Request'), { statusCode: 400 })],
    ['something thrown that is no error', 'boom'],
  ])('counts %s as a defect or a refusal, never an unknown outcome', (_, error) => {
    expect(isGatewayOrNetworkError(error)).toBe(false);
  });
});
