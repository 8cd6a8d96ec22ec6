import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * No module-level mutable state (CONTRIBUTING "No module-level state", decision 0590): what an
 * app's requests and jobs share lives on its `AppScope` (`scopeKey`, `deps.scope`, `env.scope`),
 * so two apps in one process — the tests start several — never see each other's. This reads every
 * source file in src/ and finds, at module level, a `let`/`var`, an empty `Map`/`Set`/`WeakMap`/
 * `WeakSet` (a cache or registry to be filled) and an empty array or object. A Map or Set built
 * from its entries at load is a lookup table and is not flagged.
 *
 * The allow-list below is the state that stays per process on purpose: each entry is a memo of a
 * pure function or of constant data, state attached to an object one app, transaction or request
 * owns (a WeakMap keyed by it), or state of the process itself — and says which.
 */
const ALLOWED: Record<string, string> = {
  // Memos of pure functions or constant data: the same for every app by construction.
  'src/modules/tax/gst-periods.ts formatters': 'Intl.DateTimeFormat per time zone',
  'src/modules/dunning/retry.ts formatters': 'Intl.DateTimeFormat per time zone',
  'src/modules/ledger/secondary-ledger.ts tenantPrefixes': 'SHA-256 of the tenant id (bounded)',
  'src/modules/collections/gateways/stripe.ts clients': 'the Stripe SDK client is a function of (base URL, timeout, secret key) alone',
  'src/platform/templates/sandbox.ts compiled': 'Handlebars source → compiled template (bounded)',
  'src/modules/documents/unicode-text.ts faces': 'the PDF fonts: constant files parsed once, on the first PDF (fontkit is heavy to load at start)',
  'src/modules/documents/unicode-text.ts openFont': 'fontkit, imported on the first PDF',
  'src/modules/operators/operators.service.ts decoy': 'a hash of a random password nobody knows; any value serves every app',
  'src/modules/einvoicing/irp-sandbox.ts processKey': "the built-in IRP's signing key where no data directory keeps one (decision 0590)",
  'src/platform/events/events.ts listeners': 'event listeners: constant functions registered at import or init, the EVENT_SUBSCRIBERS table',
  // State of one render, one message or the process itself.
  'src/platform/templates/sandbox.ts budget': 'the render in progress, set and cleared inside one synchronous render',
  'src/platform/mail/mime.ts boundaries': 'a counter that only makes each MIME boundary unique',
  'src/platform/db/datadir-lock.ts heldHere': "the data directories this process (its pid) holds: the lock file's owner is the process",
  // Weak maps keyed by what one app, transaction, request or value owns: they die with it, and nothing else reaches them.
  'src/platform/db/paginate.ts listCounts': 'list counts per database handle',
  'src/platform/db/read-together.ts pools': 'the pool behind a database handle',
  'src/modules/webhooks/webhooks.delivery.ts batchers': 'delivery batchers per database handle',
  'src/platform/db/speculation.ts speculative': 'the app of a speculating transaction',
  'src/modules/webhooks/webhooks.repository.ts enabledEndpoints': "a transaction's tenant endpoints",
  'src/platform/idempotency/idempotency.ts claimErrors': 'errors raised by an idempotency claim',
  'src/platform/http/malformed-target.ts refusals': "a request's refusal",
  'src/modules/dunning/retry.ts localHistories': "a retry history's samples on a zone's wall clock",
};

const root = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

const MUTABLE: RegExp[] = [
  /^(?:export )?(?:let|var) (\w+)/,
  /^(?:export )?const (\w+)(?::[^=]+)? = new (?:Map|Set|WeakMap|WeakSet)\b.*\(\);?$/,
  /^(?:export )?const (\w+)(?::[^=]+)? = (?:\[\]|\{\});?$/,
];

/** `file name` of every module-level mutable declaration in the source. */
export function moduleStateIn(files: { path: string; text: string }[]): string[] {
  const found: string[] = [];
  for (const { path, text } of files) {
    for (const line of text.split('\n')) {
      for (const pattern of MUTABLE) {
        const name = pattern.exec(line)?.[1];
        if (name) found.push(`${path} ${name}`);
      }
    }
  }
  return found;
}

describe('module-level state', () => {
  const files = sourceFiles(join(root, 'src')).map((path) => ({ path: relative(root, path).split('\\').join('/'), text: readFileSync(path, 'utf8') }));
  const found = moduleStateIn(files);

  it('finds the kinds of declaration it looks for', () => {
    const sample = [
      'let counter = 0;',
      'export let current: string | undefined;',
      'const cache = new Map<string, number>();',
      'const seen: Set<string> = new Set();',
      'const inFlight = new WeakMap<object, { n: number; rows: Promise<string[]> }>();',
      'const registry: Handler[] = [];',
      'const BY_CODE = new Map(CODES.map((c) => [c.code, c]));', // a lookup table built from its entries
      '  let local = 1;', // not at module level
      "const key = scopeKey('x.y', () => new Map<string, number>());", // a key: the state is the app's
    ].join('\n');
    expect(moduleStateIn([{ path: 'x.ts', text: sample }])).toEqual([
      'x.ts counter',
      'x.ts current',
      'x.ts cache',
      'x.ts seen',
      'x.ts inFlight',
      'x.ts registry',
    ]);
  });

  it('has none in src/ beyond the allowed list: per-app state goes on AppScope (scopeKey)', () => {
    const unexpected = found.filter((entry) => !(entry in ALLOWED));
    expect(unexpected, 'declare it with scopeKey and reach it through deps.scope / env.scope (or, for a constant, freeze it)').toEqual([]);
  });

  it('lists nothing that is gone (the allowed list stays exact)', () => {
    expect(Object.keys(ALLOWED).filter((entry) => !found.includes(entry))).toEqual([]);
  });
});
