import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { appendFileSync, closeSync, existsSync, fstatSync, mkdirSync, openSync, readSync } from 'node:fs';
import { dirname } from 'node:path';
import { scopeKey, type AppScope } from '../../../platform/app-scope.js';
import {
  GatewayTokenNotFoundError,
  GatewayWebhookSignatureError,
  type ChargeOutcome,
  type GatewayAdapter,
  type GatewayCallContext,
  type GatewayWebhookEvent,
  type RefundOutcome,
  type SavedPaymentMethod,
} from './gateway.js';

/**
 * The built-in `test` gateway (DESIGN §11): no account, deterministic outcomes by token, so every
 * demo and test works offline. It behaves like a provider in the ways that matter to Kosh:
 *
 * - charges and refunds are idempotent by key (the same key answers the same outcome, and the
 *   money moves once) and are kept in a journal; `lookupCharge` reads it;
 * - the journal is in memory, or an append-only JSON-lines file when its base URL is
 *   `file:<path>` (KOSH_TEST_GATEWAY_JOURNAL), so another process (a worker restarted after a
 *   crash, a test) sees what was charged;
 * - inbound webhooks carry `Kosh-Test-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">`
 *   under the connection's `webhook_secret` (5-minute tolerance), like Stripe's scheme.
 *
 * Tokens: the five of DESIGN §11, plus a few that make the hard cases reachable:
 * `tok_pending` (the charge is accepted but not final: a webhook settles it), `tok_unknown` (money
 * moves but the answer is lost, as on a timeout), `tok_timeoutAfterCharge` (money moves, then the
 * call hangs until the timeout: the crash test kills the worker there) and `tok_refundFail` (a card
 * whose refunds fail).
 */

type TokenSpec = {
  type: SavedPaymentMethod['type'];
  brand: string | null;
  last4: string | null;
  charge: 'succeed' | 'decline' | 'insufficient' | 'pending' | 'unknown' | 'hang';
  refund: 'succeed' | 'fail';
  /** A card saved as an e-mandate (standing instruction): debits announced 24 hours ahead (RBI). */
  mandate?: true;
};

export const TEST_TOKENS: Record<string, TokenSpec> = {
  tok_visa: { type: 'card', brand: 'visa', last4: '4242', charge: 'succeed', refund: 'succeed' },
  tok_mastercard: { type: 'card', brand: 'mastercard', last4: '4444', charge: 'succeed', refund: 'succeed' },
  tok_chargeDeclined: { type: 'card', brand: 'visa', last4: '0002', charge: 'decline', refund: 'succeed' },
  tok_chargeDeclinedInsufficientFunds: { type: 'card', brand: 'visa', last4: '9995', charge: 'insufficient', refund: 'succeed' },
  tok_upi_autopay: { type: 'upi_mandate', brand: 'upi', last4: null, charge: 'succeed', refund: 'succeed' },
  tok_upi_autopay_insufficient: { type: 'upi_mandate', brand: 'upi', last4: null, charge: 'insufficient', refund: 'succeed' },
  tok_card_mandate: { type: 'card', brand: 'visa', last4: '1111', charge: 'succeed', refund: 'succeed', mandate: true },
  tok_pending: { type: 'card', brand: 'visa', last4: '3220', charge: 'pending', refund: 'succeed' },
  tok_unknown: { type: 'card', brand: 'visa', last4: '0119', charge: 'unknown', refund: 'succeed' },
  tok_timeoutAfterCharge: { type: 'card', brand: 'visa', last4: '0259', charge: 'hang', refund: 'succeed' },
  tok_refundFail: { type: 'card', brand: 'visa', last4: '5126', charge: 'succeed', refund: 'fail' },
};

/** The spec of a test token; undefined for anything else (an own-property lookup: `__proto__` is no token). */
function tokenSpec(token: string): TokenSpec | undefined {
  return Object.hasOwn(TEST_TOKENS, token) ? TEST_TOKENS[token] : undefined;
}

/** The hosted checkout page's test cards (DESIGN §11). */
const TEST_CARDS: Record<string, string> = {
  '4242424242424242': 'tok_visa',
  '5555555555554444': 'tok_mastercard',
  '4000000000000002': 'tok_chargeDeclined',
  '4000000000009995': 'tok_chargeDeclinedInsufficientFunds',
};

/** The token a card number typed on the hosted page stands for; null for an unknown number. */
export function testCardToken(cardNumber: string): string | null {
  return TEST_CARDS[cardNumber.replace(/[\s-]/g, '')] ?? null;
}

export type JournalEntry =
  | { kind: 'charge'; key: string; token: string; amount: number; currency: string; outcome: ChargeOutcome; at: string }
  | { kind: 'refund'; key: string; payment_id: string; amount: number; outcome: RefundOutcome; at: string };

/** The test gateway's record of what it was asked to do (what a provider's dashboard would show). */
export class TestGatewayJournal {
  private readonly charges = new Map<string, Extract<JournalEntry, { kind: 'charge' }>>();
  private readonly refunds = new Map<string, Extract<JournalEntry, { kind: 'refund' }>>();
  private loadedBytes = 0;

  constructor(private readonly file: string | null) {
    if (file) mkdirSync(dirname(file), { recursive: true });
    this.reload();
  }

  /** Reads the entries another process appended since the last look (only those bytes, not the whole file). */
  reload(): void {
    if (!this.file || !existsSync(this.file)) return;
    const fd = openSync(this.file, 'r');
    let buf: Buffer;
    try {
      const size = fstatSync(fd).size;
      if (size <= this.loadedBytes) return;
      buf = Buffer.alloc(size - this.loadedBytes);
      readSync(fd, buf, 0, buf.length, this.loadedBytes);
    } finally {
      closeSync(fd);
    }
    const text = buf.toString('utf8');
    const complete = text.lastIndexOf('\n');
    if (complete === -1) return;
    for (const line of text.slice(0, complete).split('\n')) if (line) this.remember(JSON.parse(line) as JournalEntry);
    this.loadedBytes += Buffer.byteLength(text.slice(0, complete + 1));
  }

  private remember(entry: JournalEntry): void {
    if (entry.kind === 'charge') this.charges.set(entry.key, entry);
    else this.refunds.set(entry.key, entry);
  }

  record(entry: JournalEntry): void {
    this.remember(entry);
    if (this.file) {
      const line = `${JSON.stringify(entry)}\n`;
      appendFileSync(this.file, line);
      this.loadedBytes += Buffer.byteLength(line);
    }
  }

  charge(key: string) {
    return this.charges.get(key);
  }
  refund(key: string) {
    return this.refunds.get(key);
  }
  chargeByPaymentId(paymentId: string) {
    for (const c of this.charges.values())
      if (c.outcome.status !== 'unknown' && 'gatewayPaymentId' in c.outcome && c.outcome.gatewayPaymentId === paymentId) return c;
    return undefined;
  }
  /** Charges where money moved (what a second charge for the same invoice would show as a duplicate). */
  capturedCharges() {
    return [...this.charges.values()].filter((c) => ['succeed', 'unknown', 'hang'].includes(tokenSpec(c.token)?.charge ?? ''));
  }
  allCharges() {
    return [...this.charges.values()];
  }
}

/** An app's test-gateway journals, by file (or `memory`): two apps in one process never see each other's charges. */
const journals = scopeKey('collections.test_gateway_journals', () => new Map<string, TestGatewayJournal>());

/** The app's journal behind a base URL: `file:<path>` (shared between processes through the file) or anything else (the app's memory). */
export function testGatewayJournal(scope: AppScope, baseUrl: string): TestGatewayJournal {
  const file = baseUrl.startsWith('file:') ? baseUrl.slice('file:'.length) : null;
  const key = file ?? 'memory';
  const byKey = scope.get(journals);
  let journal = byKey.get(key);
  if (!journal) {
    journal = new TestGatewayJournal(file);
    byKey.set(key, journal);
  }
  return journal;
}

function journalOf(ctx: GatewayCallContext): TestGatewayJournal {
  if (!ctx.scope) throw new Error('the test gateway is called with the app scope that keeps its journal');
  const journal = testGatewayJournal(ctx.scope, ctx.baseUrl);
  journal.reload();
  return journal;
}

const idFrom = (prefix: string, key: string) => `${prefix}_${createHash('sha256').update(key).digest('hex').slice(0, 24)}`;

function chargeOutcome(spec: TokenSpec, key: string): ChargeOutcome {
  const id = idFrom('tpay', key);
  const paymentType = spec.type === 'upi_mandate' ? 'upi' : 'card';
  switch (spec.charge) {
    case 'decline':
      return { status: 'failed', gatewayPaymentId: id, failureCode: 'card_declined', failureMessage: 'Your card was declined.' };
    case 'insufficient':
      return { status: 'failed', gatewayPaymentId: id, failureCode: 'insufficient_funds', failureMessage: 'Your card has insufficient funds.' };
    case 'pending':
      return { status: 'pending', gatewayPaymentId: id };
    default:
      return { status: 'succeeded', gatewayPaymentId: id, paymentType };
  }
}

export const TEST_SIGNATURE_HEADER = 'kosh-test-signature';
const TOLERANCE_S = 300;

/** Signs a test-gateway webhook body (tests, and the demo's "send webhook" helpers). */
export function signTestWebhook(rawBody: string | Buffer, secret: string, at: Date): string {
  const t = Math.floor(at.getTime() / 1000);
  const v1 = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest('hex');
  return `t=${t},v1=${v1}`;
}

/** The body of a test-gateway webhook: `{ id, type, data: {...} }`. */
export type TestWebhookBody = {
  id: string;
  type: GatewayWebhookEvent['type'];
  data: {
    payment_id?: string | null;
    refund_id?: string | null;
    amount?: number | null;
    currency?: string | null;
    failure_code?: string | null;
    failure_message?: string | null;
    metadata?: Record<string, string>;
    payment_method?: string | null;
  };
};

export const testGateway: GatewayAdapter = {
  provider: 'test',

  async attachPaymentMethod(_ctx, input) {
    const spec = tokenSpec(input.token);
    if (!spec) throw new GatewayTokenNotFoundError(`no such token: ${input.token}`);
    return {
      type: spec.type,
      brand: spec.brand,
      last4: spec.last4,
      reference: input.token,
      gatewayCustomerId: null,
      requiresPreDebitNotice: spec.type === 'upi_mandate' || spec.mandate === true,
    };
  },

  async charge(ctx, input) {
    const journal = journalOf(ctx);
    const seen = journal.charge(input.idempotencyKey);
    const spec = tokenSpec(input.paymentMethod.reference);
    if (seen) return seen.outcome.status === 'unknown' ? chargeOutcome(spec!, input.idempotencyKey) : seen.outcome;
    if (!spec) return { status: 'failed', gatewayPaymentId: null, failureCode: 'invalid_payment_method', failureMessage: 'No such payment method.' };
    const outcome = chargeOutcome(spec, input.idempotencyKey);
    journal.record({
      kind: 'charge',
      key: input.idempotencyKey,
      token: input.paymentMethod.reference,
      amount: input.amount,
      currency: input.currency,
      outcome,
      at: ctx.now.toISOString(),
    });
    if (spec.charge === 'unknown') return { status: 'unknown', reason: 'the test gateway dropped the answer (tok_unknown)' };
    if (spec.charge === 'hang') {
      await new Promise((resolve) => setTimeout(resolve, ctx.timeoutMs));
      return { status: 'unknown', reason: `no answer within ${ctx.timeoutMs} ms` };
    }
    return outcome;
  },

  async lookupCharge(ctx, input) {
    const journal = journalOf(ctx);
    const seen = journal.charge(input.idempotencyKey);
    return seen ? seen.outcome : { status: 'not_found' };
  },

  async refund(ctx, input) {
    const journal = journalOf(ctx);
    const seen = journal.refund(input.idempotencyKey);
    if (seen) return seen.outcome;
    const charge = journal.chargeByPaymentId(input.gatewayPaymentId);
    const spec = charge ? tokenSpec(charge.token) : undefined;
    const id = idFrom('tref', input.idempotencyKey);
    const outcome: RefundOutcome = !spec
      ? { status: 'failed', gatewayRefundId: null, failureCode: 'charge_not_found', failureMessage: 'No such charge.' }
      : spec.refund === 'fail'
        ? { status: 'failed', gatewayRefundId: id, failureCode: 'refund_failed', failureMessage: 'The refund could not be processed.' }
        : spec.charge === 'pending'
          ? { status: 'pending', gatewayRefundId: id }
          : { status: 'succeeded', gatewayRefundId: id };
    journal.record({ kind: 'refund', key: input.idempotencyKey, payment_id: input.gatewayPaymentId, amount: input.amount, outcome, at: ctx.now.toISOString() });
    return outcome;
  },

  async createCheckout() {
    return { kind: 'kosh' };
  },

  verifyWebhook(input) {
    const header = input.headers[TEST_SIGNATURE_HEADER];
    const value = Array.isArray(header) ? header[0] : header;
    if (!value || !input.webhookSecret) throw new GatewayWebhookSignatureError('missing signature');
    const parts = Object.fromEntries(value.split(',').map((p) => p.split('=', 2) as [string, string]));
    const t = Number(parts.t);
    if (!Number.isInteger(t) || !parts.v1) throw new GatewayWebhookSignatureError('malformed signature');
    if (Math.abs(input.now.getTime() / 1000 - t) > TOLERANCE_S) throw new GatewayWebhookSignatureError('timestamp outside the tolerance');
    const expected = Buffer.from(createHmac('sha256', input.webhookSecret).update(`${t}.`).update(input.rawBody).digest('hex'));
    const given = Buffer.from(parts.v1);
    if (expected.length !== given.length || !timingSafeEqual(expected, given)) throw new GatewayWebhookSignatureError('signature mismatch');
    let body: TestWebhookBody;
    try {
      body = JSON.parse(input.rawBody.toString('utf8')) as TestWebhookBody;
    } catch {
      throw new GatewayWebhookSignatureError('body is not JSON');
    }
    const d = body.data ?? {};
    return {
      eventId: String(body.id),
      type: body.type,
      gatewayPaymentId: d.payment_id ?? null,
      gatewayRefundId: d.refund_id ?? null,
      amount: d.amount ?? null,
      currency: d.currency ?? null,
      failureCode: d.failure_code ?? null,
      failureMessage: d.failure_message ?? null,
      metadata: d.metadata ?? {},
      paymentMethodReference: d.payment_method ?? null,
    };
  },
};
