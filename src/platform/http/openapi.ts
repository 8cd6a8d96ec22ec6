/**
 * Turns the document @fastify/swagger builds from the route schemas into one a client generator
 * can use. Everything here is derived from the route's shape, so a route added anywhere gets it
 * without doing anything:
 *   - `operationId` from method + path (`GET /v1/plans` → `listPlans`, `POST /v1/invoices/{id}/finalize`
 *     → `finalizeInvoice`), or the override in OPERATION_IDS;
 *   - the error responses (all with the `Error` schema): exactly the statuses of
 *     platform/http/route-errors.ts — the kinds the route declares (`errors: [...]` in its schema)
 *     and what the framework answers on every route of its shape — passed here as `x-kosh-errors`;
 *   - the `Idempotency-Key` header on every /v1 mutation;
 *   - a description and an example on every request body and response (the route's own example
 *     if it has one, else one generated from the schema);
 *   - `servers`, `license`, declared tags, `webhooks` (one per event type), no unused component
 *     schemas, no `additionalProperties: false` on what responses return.
 * `test/platform/openapi.test.ts` fails naming any operation that still lacks one of these.
 */

import { REQUEST_EXAMPLE_KEY } from './envelope.js';
import { orderTags } from './docs-intro.js';

type Json = Record<string, unknown>;
type Schema = Json;

const MUTATING = new Set(['post', 'put', 'patch', 'delete']);
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** Names that read better than the derived ones (and break derivation ties). Key: `METHOD /path`. */
export const OPERATION_IDS: Record<string, string> = {
  'POST /auth/register': 'registerTenant',
  'POST /v1/developer/keys': 'createApiKey',
  'GET /v1/developer/keys': 'listApiKeys',
  'DELETE /v1/developer/keys/{id}': 'revokeApiKey',
  'GET /v1/settings': 'getSettings',
  'PATCH /v1/settings': 'updateSettings',
  'PUT /v1/customers/{id}': 'putCustomer',
  'PATCH /v1/customers/{id}': 'updateCustomer',
  'POST /v1/payments/offline': 'recordOfflinePayment',
  'POST /v1/subscriptions/{id}/change-plan': 'changeSubscriptionPlan',
  'GET /v1/invoices/{id}/pdf': 'getInvoicePdf',
  'GET /v1/invoices/{id}/journal-entries': 'listInvoiceJournalEntries',
  'GET /v1/ledger/journal-entries/{id}': 'getJournalEntry',
  'POST /v1/webhooks': 'createWebhookEndpoint',
  'GET /v1/webhooks': 'listWebhookEndpoints',
  'GET /v1/webhooks/{id}': 'getWebhookEndpoint',
  'PATCH /v1/webhooks/{id}': 'updateWebhookEndpoint',
  'DELETE /v1/webhooks/{id}': 'deleteWebhookEndpoint',
  'POST /v1/webhooks/{id}/rotate-secret': 'rotateWebhookSecret',
  'GET /v1/webhooks/{id}/deliveries': 'listWebhookEndpointDeliveries',
  'GET /v1/events/{id}/deliveries': 'listEventDeliveries',
  'POST /v1/events/{id}/redeliver': 'redeliverEvent',
  'POST /v1/customers/{id}/portal-sessions': 'createPortalSession',
  'POST /v1/imports/compare': 'compareImport',
  'POST /portal/api/login': 'portalLogin',
  'POST /portal/api/logout': 'portalLogout',
  'GET /portal/api/me': 'portalGetProfile',
  'GET /portal/api/subscriptions': 'portalListSubscriptions',
  'GET /portal/api/invoices': 'portalListInvoices',
  'GET /portal/api/invoices/{id}/pdf': 'portalGetInvoicePdf',
  'POST /portal/api/redeem': 'portalRedeemGift',
};

/** Component schema of `data.object` per event prefix where it is not the prefix in PascalCase. */
export const EVENT_OBJECT_SCHEMAS: Record<string, string> = {
  entity: 'LegalEntity',
  payment: 'OfflinePayment',
  test_clock: 'TestClock',
};

const STATUS_TEXT: Record<string, string> = {
  '200': 'OK',
  '201': 'Created',
  '202': 'Accepted',
  '204': 'No content',
  '400': 'The request is invalid: a field, the query, a path id or the Idempotency-Key header',
  '401': 'No valid API key (or portal session)',
  '403': "The key's or operator's role does not allow this, or a write with the session cookie lacks its X-CSRF-Token or is cross-site",
  '404': 'No such object in this tenant',
  '409': 'The object is not in a state that allows this, a unique value is taken, or the Idempotency-Key is in use',
  '410': 'The link has expired or was already used',
  '413': 'The request body is larger than 1 MiB',
  '422': 'The request is well-formed but breaks a business rule, or the Idempotency-Key was used with another body',
  '424': 'A step this depends on failed',
  '429': 'Too many requests: slow down and retry after the Retry-After header',
  '500': 'Internal error',
  '503': 'The database is unavailable (retry after Retry-After), or the service is not configured on this deployment',
};

const ERROR_CODES: Record<string, { code: string; reason?: string; message: string }> = {
  '400': { code: 'validation_failed', message: 'validation failed: amount: must be greater than 0' },
  '401': { code: 'unauthorized', reason: 'invalid_api_key', message: 'missing or invalid API key or session' },
  '403': { code: 'unauthorized', reason: 'role_forbidden', message: 'this needs the admin role or higher; you are viewer' },
  '404': { code: 'not_found', message: 'plan not found' },
  '409': { code: 'conflict', reason: 'invalid_state', message: 'the object is not in a state that allows this' },
  '410': { code: 'not_found', reason: 'invitation_expired', message: 'this link has expired or was already used' },
  '413': { code: 'validation_failed', reason: 'payload_too_large', message: 'request body exceeds the 1 MiB limit' },
  '422': { code: 'validation_failed', message: 'the request breaks a business rule' },
  '424': { code: 'internal_error', message: 'a dependent step failed' },
  '429': { code: 'rate_limited', reason: 'rate_limited', message: 'too many requests' },
  '500': { code: 'internal_error', message: 'internal error' },
  '503': { code: 'internal_error', reason: 'database_unavailable', message: 'the database is unavailable; retry the request shortly' },
};

const RESPONSE_NAMES: Record<string, string> = {
  '400': 'BadRequest',
  '401': 'Unauthorized',
  '403': 'Forbidden',
  '404': 'NotFound',
  '409': 'Conflict',
  '410': 'Gone',
  '413': 'PayloadTooLarge',
  '422': 'UnprocessableEntity',
  '424': 'FailedDependency',
  '429': 'TooManyRequests',
  '500': 'InternalError',
  '503': 'Unavailable',
};

export type OpenApiOptions = {
  /** Base URL clients call (KOSH_PUBLIC_URL). */
  serverUrl: string;
  /** Every event type (the events catalog); each gets a `webhooks` entry. */
  eventTypes: readonly string[];
  /** Tag descriptions; a tag without one gets a generic description. */
  tagDescriptions?: Record<string, string>;
};

// ---------------------------------------------------------------------------------------------
// operationId

function camel(words: string[]): string {
  return words
    .filter(Boolean)
    .map((w, i) => (i === 0 ? w.toLowerCase() : w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()))
    .join('');
}

function wordsOf(segment: string): string[] {
  return segment.split(/[-_.]/).filter(Boolean);
}

export function singular(word: string): string {
  if (/ies$/.test(word)) return word.replace(/ies$/, 'y');
  if (/(ss|us)$/.test(word)) return word;
  if (/(sses|xes|ches|shes)$/.test(word)) return word.replace(/es$/, '');
  return word.replace(/s$/, '');
}

/** `GET /v1/plans` → listPlans, `GET /v1/plans/{id}` → getPlan, `POST /v1/invoices/{id}/void` → voidInvoice. */
export function deriveOperationId(method: string, path: string, isList: boolean): string {
  const segments = path
    .split('/')
    .filter(Boolean)
    .filter((s, i) => !(i === 0 && /^v\d+$/.test(s)));
  const m = method.toLowerCase();
  const last = segments[segments.length - 1] ?? 'root';
  const lastIsParam = last.startsWith('{');
  const nouns = segments.filter((s) => !s.startsWith('{'));
  if (nouns.length === 0) return camel([m, 'root']);
  // A trailing verb after an id: POST /x/{id}/cancel → cancelX
  const afterParam = segments.length >= 2 && segments[segments.length - 2]!.startsWith('{') && !lastIsParam;
  if (m === 'post' && afterParam) {
    const owner = nouns.slice(0, -1).map((n, i, all) => (i === all.length - 1 ? singular(n) : n));
    return camel([...wordsOf(last), ...owner.flatMap(wordsOf)]);
  }
  const resource = nouns.map((n, i) => (i === nouns.length - 1 && (lastIsParam || !isList) && m !== 'get' ? singular(n) : n));
  if (m === 'get') {
    if (isList) return camel(['list', ...nouns.flatMap(wordsOf)]);
    return camel(['get', ...nouns.map((n, i) => (i === nouns.length - 1 ? singular(n) : n)).flatMap(wordsOf)]);
  }
  const verb = { post: 'create', put: 'replace', patch: 'update', delete: 'delete' }[m] ?? m;
  return camel([verb, ...resource.map((n, i) => (i === resource.length - 1 ? singular(n) : n)).flatMap(wordsOf)]);
}

// ---------------------------------------------------------------------------------------------
// examples generated from a schema

const FIELD_EXAMPLES: Array<[RegExp, unknown]> = [
  [/^currency$/, 'INR'],
  [/email$/, 'billing@acme.example'],
  [/(^|_)url$/, 'https://acme.example/webhooks/kosh'],
  [/^(name|display_name|legal_name)$/, 'Acme Pro'],
  [/^code$/, 'acme-pro'],
  [/^gstin$/, '27AAPFU0939F1ZV'],
  [/^hsn_code$/, '998314'],
  [/^state_code$/, '27'],
  [/^phone$/, '+919800000000'],
  [/^country$/, 'IN'],
  [/^time_zone$/, 'Asia/Kolkata'],
  [/(^|_)(at|on)$/, '2026-04-01T00:00:00.000Z'],
  [/^(id|.*_id)$/, '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77'],
  [/amount|total|subtotal|balance/, 49900],
];

const FORMAT_EXAMPLES: Record<string, string> = {
  uuid: '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77',
  'date-time': '2026-04-01T00:00:00.000Z',
  date: '2026-04-01',
  email: 'billing@acme.example',
  uri: 'https://acme.example/',
  url: 'https://acme.example/',
};

const PATTERN_CANDIDATES = [
  'INR',
  '998314',
  '27AAPFU0939F1ZV',
  '27',
  'acme-pro',
  'IN',
  '2026-04-01',
  'abc',
  'a',
  '1',
  '0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77',
  '',
];

type Resolver = (ref: string) => Schema | undefined;

function typeOf(schema: Schema): string | undefined {
  const t = schema.type;
  if (Array.isArray(t)) return (t as string[]).find((x) => x !== 'null') ?? 'null';
  return t as string | undefined;
}

function stringExample(schema: Schema, field: string | undefined): string {
  const format = schema.format as string | undefined;
  const min = (schema.minLength as number | undefined) ?? 0;
  const max = (schema.maxLength as number | undefined) ?? Infinity;
  const fits = (v: string) => v.length >= min && v.length <= max && (!schema.pattern || new RegExp(schema.pattern as string, 'u').test(v));
  const candidates: string[] = [];
  if (format && FORMAT_EXAMPLES[format]) candidates.push(FORMAT_EXAMPLES[format]!);
  if (field) for (const [re, v] of FIELD_EXAMPLES) if (re.test(field) && typeof v === 'string') candidates.push(v);
  if (schema.pattern) candidates.push(...PATTERN_CANDIDATES);
  candidates.push(field ? field.replace(/_/g, ' ') : 'text', 'x'.repeat(Math.max(min, 1)));
  return candidates.find(fits) ?? 'x'.repeat(Math.max(min, 1));
}

function numberExample(schema: Schema, field: string | undefined, integer: boolean): number {
  let value = 1;
  if (field) for (const [re, v] of FIELD_EXAMPLES) if (re.test(field) && typeof v === 'number') value = v;
  const min = (schema.minimum as number | undefined) ?? (schema.exclusiveMinimum !== undefined ? Number(schema.exclusiveMinimum) + 1 : undefined);
  const max = (schema.maximum as number | undefined) ?? (schema.exclusiveMaximum !== undefined ? Number(schema.exclusiveMaximum) - 1 : undefined);
  if (min !== undefined && value < min) value = min;
  if (max !== undefined && value > max) value = max;
  return integer ? Math.round(value) : value;
}

const NO_EXAMPLE = Symbol('no example');

/** The value the schema names itself (example, examples, const, enum, default); NO_EXAMPLE when it names none. */
function statedExample(schema: Schema): unknown {
  if ('example' in schema) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length) return schema.enum.find((v) => v !== null) ?? schema.enum[0];
  if ('default' in schema && schema.default !== undefined) return schema.default;
  return NO_EXAMPLE;
}

/** A composed schema's example: its first non-null option (oneOf, anyOf), or all its parts merged (allOf); NO_EXAMPLE when not composed. */
function composedExample(schema: Schema, resolve: Resolver, field: string | undefined, depth: number): unknown {
  for (const key of ['oneOf', 'anyOf'] as const) {
    const options = schema[key] as Schema[] | undefined;
    if (options?.length) {
      const nonNull = options.find((o) => o.type !== 'null') ?? options[0];
      return exampleOf(nonNull, resolve, field, depth + 1);
    }
  }
  if (Array.isArray(schema.allOf)) {
    return Object.assign({}, ...(schema.allOf as Schema[]).map((s) => exampleOf(s, resolve, field, depth + 1)));
  }
  return NO_EXAMPLE;
}

function objectExample(schema: Schema, resolve: Resolver, depth: number): Json {
  const out: Json = {};
  const props = (schema.properties ?? {}) as Record<string, Schema>;
  // A property that accepts nothing (`z.never()`: a field refused by name) has no example.
  for (const [k, v] of Object.entries(props)) if (!('not' in v)) out[k] = exampleOf(v, resolve, k, depth + 1);
  return out;
}

function arrayExample(schema: Schema, resolve: Resolver, field: string | undefined, depth: number): unknown[] {
  const min = (schema.minItems as number | undefined) ?? 0;
  const max = (schema.maxItems as number | undefined) ?? 1;
  const count = Math.min(Math.max(min, 1), max);
  return Array.from({ length: count }, () => exampleOf(schema.items as Schema, resolve, field ? singular(field) : undefined, depth + 1));
}

/** An example built from the schema's type. */
function typedExample(schema: Schema, resolve: Resolver, field: string | undefined, depth: number): unknown {
  const type = typeOf(schema) ?? (schema.properties ? 'object' : schema.items ? 'array' : undefined);
  switch (type) {
    case 'object':
      return objectExample(schema, resolve, depth);
    case 'array':
      return arrayExample(schema, resolve, field, depth);
    case 'string':
      return stringExample(schema, field);
    case 'integer':
      return numberExample(schema, field, true);
    case 'number':
      return numberExample(schema, field, false);
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return {};
  }
}

/** A value that validates against `schema` (best effort), realistic where the field name tells. */
export function exampleOf(schema: Schema | undefined, resolve: Resolver, field?: string, depth = 0): unknown {
  if (!schema || depth > 24) return null;
  if (typeof schema.$ref === 'string') return exampleOf(resolve(schema.$ref), resolve, field, depth + 1);
  const stated = statedExample(schema);
  if (stated !== NO_EXAMPLE) return stated;
  const composed = composedExample(schema, resolve, field, depth);
  if (composed !== NO_EXAMPLE) return composed;
  return typedExample(schema, resolve, field, depth);
}

// ---------------------------------------------------------------------------------------------
// the document

function walk(node: unknown, visit: (obj: Json) => void): void {
  if (Array.isArray(node)) {
    for (const item of node) walk(item, visit);
  } else if (node && typeof node === 'object') {
    visit(node as Json);
    for (const value of Object.values(node)) walk(value, visit);
  }
}

function refsIn(node: unknown): Set<string> {
  const out = new Set<string>();
  walk(node, (obj) => {
    if (typeof obj.$ref === 'string') out.add(obj.$ref);
  });
  return out;
}

function stripClosedObjects(node: unknown): void {
  walk(node, (obj) => {
    if (obj.additionalProperties === false) delete obj.additionalProperties;
  });
}

function isListSchema(schema: Schema | undefined): boolean {
  const props = schema?.properties as Record<string, unknown> | undefined;
  return Boolean(props && 'has_more' in props && 'data' in props);
}

function errorResponse(status: string): Json {
  const sample = ERROR_CODES[status] ?? ERROR_CODES['500']!;
  return {
    description: STATUS_TEXT[status] ?? 'Error',
    content: {
      'application/json': {
        schema: { $ref: '#/components/schemas/Error' },
        example: { error: { ...sample, request_id: 'req_0196f0c2-5b1e-7c3a-9d41-3a0c8e2f1b77' } },
      },
    },
  };
}

/** What completing one operation needs to know of the whole document. */
type DocumentScope = {
  resolve: Resolver;
  /** components.responses, gaining the shared error responses operations refer to. */
  responses: Json;
  usedTags: Set<string>;
  /** operationId → the `METHOD /path` that took it. */
  seenIds: Map<string, string>;
};

/** servers (this deployment), license, and the shared Idempotency-Key parameter. */
function completeFrame(doc: Json, components: Json, options: OpenApiOptions): void {
  // The document is served by the deployment it describes: `/` is that server. A configured public
  // URL (KOSH_PUBLIC_URL) comes first; the localhost default is left out.
  const local = /^https?:\/\/(localhost|127\.0\.0\.1)(:|\/|$)/.test(options.serverUrl);
  doc.servers = [
    ...(local ? [] : [{ url: options.serverUrl.replace(/\/$/, ''), description: 'This deployment (KOSH_PUBLIC_URL)' }]),
    { url: '/', description: 'The server this document was fetched from' },
  ];
  const info = doc.info as Json;
  info.license = { name: 'Apache-2.0', url: 'https://www.apache.org/licenses/LICENSE-2.0' };

  components.parameters = {
    ...((components.parameters as Json | undefined) ?? {}),
    IdempotencyKey: {
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'Any unique value (a UUID) per intended action. A retry with the same key and body within 24 hours answers the stored response (header `Idempotent-Replayed: true`) instead of acting again; the same key with another body is a 422 (`idempotency_key_reused`); the same key while its first request is still running is a 409 (`idempotency_key_in_use`).',
      schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7e]+$' },
      example: '6f1c1e0e-3c9b-4f7e-9a3e-2d4b8f0a1c55',
    },
  };
}

/** A stable, unique operationId (a clash takes the method as a suffix). */
function assignOperationId(op: Json, method: string, path: string, isV1: boolean, scope: DocumentScope): void {
  const key = `${method.toUpperCase()} ${path}`;
  const success = Object.entries(op.responses as Record<string, Json>).find(([s]) => s.startsWith('2'));
  const successSchema = (success?.[1]?.content as Record<string, { schema?: Schema }> | undefined)?.['application/json']?.schema;
  if (!op.operationId) op.operationId = OPERATION_IDS[key] ?? deriveOperationId(method, path, isListSchema(successSchema));
  const taken = scope.seenIds.get(op.operationId as string);
  if (taken) op.operationId = `${op.operationId as string}${method.charAt(0).toUpperCase()}${method.slice(1)}`;
  scope.seenIds.set(op.operationId as string, key);
}

/** Parameters described, and the Idempotency-Key header on every mutating /v1 operation. */
function completeParameters(op: Json, method: string, isV1: boolean): void {
  const parameters = ((op.parameters as Json[] | undefined) ?? []).filter((p) => String(p.name).toLowerCase() !== 'idempotency-key');
  if (isV1 && MUTATING.has(method)) parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  for (const p of parameters)
    if (!p.$ref && !p.description)
      p.description = `The ${String(p.name)
        .replace(/[_[\]]/g, ' ')
        .trim()} (${String(p.in)}).`;
  if (parameters.length) op.parameters = parameters;
  else delete op.parameters;
}

/** Errors: what the route declares plus what the framework answers on its shape (platform/http/route-errors.ts); success responses described, with examples. */
function completeResponses(op: Json, scope: DocumentScope): void {
  const opResponses = op.responses as Record<string, Json>;
  const declared = (op['x-kosh-errors'] as Record<string, string[]> | undefined) ?? {};
  delete op['x-kosh-errors'];
  const statuses = new Set(Object.keys(declared));
  for (const status of Object.keys(opResponses)) if (/^[45]/.test(status) && !statuses.has(status)) delete opResponses[status];
  for (const status of statuses) {
    if (!opResponses[status]) opResponses[status] = { $ref: `#/components/responses/${RESPONSE_NAMES[status]}` };
  }
  for (const [status, response] of Object.entries(opResponses)) {
    if (/^[45]/.test(status)) {
      const name = RESPONSE_NAMES[status];
      if (name && !response.$ref) opResponses[status] = { $ref: `#/components/responses/${name}` };
      if (name && !scope.responses[name]) scope.responses[name] = errorResponse(status);
      continue;
    }
    if (!response.description || response.description === 'Default Response') response.description = STATUS_TEXT[status] ?? 'Success';
    addMediaExamples(response.content as Json | undefined, scope.resolve);
    stripClosedObjects(response.content);
  }
}

/** The request body described, its schema's request example moved onto the media type. */
function completeRequestBody(op: Json, resolve: Resolver): void {
  const body = op.requestBody as Json | undefined;
  if (!body) return;
  if (!body.description) body.description = `The ${String((op.summary as string | undefined) ?? 'request').replace(/^\w/, (c) => c.toLowerCase())} request.`;
  for (const media of Object.values((body.content ?? {}) as Record<string, Json>)) {
    const schema = media.schema as Schema | undefined;
    if (schema && REQUEST_EXAMPLE_KEY in schema) {
      media.example = schema[REQUEST_EXAMPLE_KEY];
      delete schema[REQUEST_EXAMPLE_KEY];
    }
  }
  addMediaExamples(body.content as Json | undefined, resolve);
}

function completeOperation(op: Json, method: (typeof METHODS)[number], path: string, scope: DocumentScope): void {
  const isV1 = path.startsWith('/v1/') || path === '/v1';
  op.responses = (op.responses as Json | undefined) ?? {};
  assignOperationId(op, method, path, isV1, scope);
  if (!op.description && op.summary) op.description = `${op.summary as string}.`;
  for (const tag of (op.tags as string[] | undefined) ?? []) scope.usedTags.add(tag);
  completeParameters(op, method, isV1);
  // security: public operations say so
  if (!isV1 && !op.security && (path.startsWith('/auth/') || path === '/portal/api/login')) op.security = [];
  if (path.startsWith('/portal/') && path !== '/portal/api/login') op.security = [{ portalSession: [] }];
  completeResponses(op, scope);
  completeRequestBody(op, scope.resolve);
}

/** links: a create operation's answer names the object the get, update and delete operations take. */
function addCreateLinks(paths: Record<string, Json>): void {
  for (const [path, item] of Object.entries(paths)) {
    const created = ((item.post as Json | undefined)?.responses as Record<string, Json> | undefined)?.['201'];
    const one = paths[`${path}/{id}`];
    if (!created || !one || created.$ref) continue;
    const links: Json = {};
    for (const method of ['get', 'patch', 'put', 'delete'] as const) {
      const target = one[method] as Json | undefined;
      if (!target?.operationId) continue;
      links[target.operationId as string] = {
        operationId: target.operationId,
        parameters: { id: '$response.body#/data/id' },
        description: `The \`id\` in the answer is the \`id\` parameter of ${method.toUpperCase()} ${path}/{id}.`,
      };
    }
    if (Object.keys(links).length) created.links = links;
  }
}

const capitalized = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** webhooks: one per event type, the payload being the Event with its object schema. */
function eventWebhooks(eventTypes: readonly string[], schemas: Record<string, Schema>, resolve: Resolver): Json {
  const webhooks: Json = {};
  for (const type of eventTypes) {
    const prefix = type.split('.')[0]!;
    const objectName = EVENT_OBJECT_SCHEMAS[prefix] ?? prefix.split('_').map(capitalized).join('');
    const objectSchema: Schema = schemas[objectName] ? { $ref: `#/components/schemas/${objectName}` } : { type: 'object', additionalProperties: {} };
    const payload: Schema = {
      type: 'object',
      description: `The \`${type}\` event as delivered (signed per Standard Webhooks: webhook-id, webhook-timestamp, webhook-signature headers).`,
      properties: {
        id: { type: 'string', format: 'uuid' },
        type: { type: 'string', const: type },
        created_at: { type: 'string', format: 'date-time' },
        tenant_id: { type: 'string', format: 'uuid' },
        data: { type: 'object', properties: { object: objectSchema }, required: ['object'] },
      },
      required: ['id', 'type', 'created_at', 'tenant_id', 'data'],
    };
    webhooks[type] = {
      post: {
        operationId: `on${type.split(/[._]/).map(capitalized).join('')}`,
        summary: `${type} event`,
        description: `Sent to every enabled webhook endpoint subscribed to \`${type}\` (see docs/events.md).`,
        tags: ['webhooks'],
        security: [],
        requestBody: {
          required: true,
          description: `The \`${type}\` event.`,
          content: { 'application/json': { schema: payload, example: exampleOf(payload, resolve) } },
        },
        responses: {
          '200': { description: 'Any 2xx acknowledges the delivery; anything else is retried with back-off.' },
          '400': { description: 'Refused: the delivery is retried with back-off.' },
        },
      },
    };
  }
  return webhooks;
}

/** Every schema `roots` reference, directly or through other schemas. */
function referencedFrom(roots: unknown[], resolve: Resolver): Set<string> {
  const seen = new Set<string>();
  const visit = (node: unknown) => {
    for (const ref of refsIn(node)) {
      if (seen.has(ref)) continue;
      seen.add(ref);
      visit(resolve(ref));
    }
  };
  for (const root of roots) visit(root);
  return seen;
}

/** Responses may gain fields: no closed objects in what they reference. */
function openResponseSchemas(paths: Record<string, Json>, webhooks: Json, responses: Json, resolve: Resolver): void {
  const roots: unknown[] = [];
  for (const item of Object.values(paths)) for (const method of METHODS) roots.push(((item[method] as Json | undefined)?.responses as Json | undefined) ?? {});
  roots.push(webhooks, responses);
  for (const ref of referencedFrom(roots, resolve)) stripClosedObjects(resolve(ref));
}

export function completeDocument(doc: Json, options: OpenApiOptions): Json {
  const components = ((doc.components as Json | undefined) ?? {}) as Json;
  doc.components = components;
  const schemas = ((components.schemas as Json | undefined) ?? {}) as Record<string, Schema>;
  components.schemas = schemas;
  const resolve: Resolver = (ref) => (ref.startsWith('#/components/schemas/') ? schemas[ref.slice('#/components/schemas/'.length)] : undefined);
  const paths = (doc.paths ?? {}) as Record<string, Json>;

  completeFrame(doc, components, options);
  const responses = ((components.responses as Json | undefined) ?? {}) as Json;
  components.responses = responses;

  const scope: DocumentScope = { resolve, responses, usedTags: new Set<string>(), seenIds: new Map<string, string>() };
  for (const [path, item] of Object.entries(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (op) completeOperation(op, method, path, scope);
    }
  }
  addCreateLinks(paths);

  const webhooks = eventWebhooks(options.eventTypes, schemas, resolve);
  if (options.eventTypes.length) {
    doc.webhooks = webhooks;
    scope.usedTags.add('webhooks');
  }
  openResponseSchemas(paths, webhooks, responses, resolve);

  // No unused component schemas.
  const reachable = referencedFrom([paths, webhooks, responses], resolve);
  for (const name of Object.keys(schemas)) if (!reachable.has(`#/components/schemas/${name}`)) delete schemas[name];

  if (!(components.securitySchemes as Json | undefined)?.portalSession) {
    components.securitySchemes = {
      ...((components.securitySchemes as Json | undefined) ?? {}),
      portalSession: { type: 'apiKey', in: 'cookie', name: 'portal_session', description: 'The customer portal session cookie set by POST /portal/api/login.' },
    };
  }

  const descriptions = options.tagDescriptions ?? {};
  doc.tags = orderTags(scope.usedTags).map((name) => ({ name, description: descriptions[name] ?? `Operations on ${name.replace(/[-_]/g, ' ')}.` }));
  return doc;
}

function addMediaExamples(content: Json | undefined, resolve: Resolver): void {
  if (!content) return;
  for (const media of Object.values(content) as Json[]) {
    if (media.example !== undefined || media.examples !== undefined) continue;
    const schema = media.schema as Schema | undefined;
    if (schema) media.example = exampleOf(schema, resolve);
  }
}
