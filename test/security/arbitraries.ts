import fc from 'fast-check';
import type { JsonSchema, OpenApiDocument } from '../support/security.js';

/**
 * fast-check arbitraries for the fuzz test: hostile values of every JSON type, and bodies shaped by
 * a route's own request schema (read from the OpenAPI document), so the fuzzer gets past
 * validation into services and SQL, where the interesting failures live.
 */

/** Text that is valid JSON but hard on a database: NUL, lone surrogates, direction marks, quotes. */
export const hostileText = fc.constantFrom(
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfff',
  '😀',
  '\u202eevil',
  "'; DROP TABLE plans; --",
  '"',
  '\\',
  '%_',
  '\n\r\t',
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '__proto__',
  'constructor',
  'null',
  'NaN',
  ' ',
  '',
);

const edgeNumbers = fc.constantFrom(
  0,
  -0,
  -1,
  1.5,
  -1.5,
  1e-320,
  2 ** 31,
  2 ** 53,
  2 ** 53 + 2,
  -(2 ** 53) - 2,
  2 ** 63,
  2 ** 64,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER,
  Number.MIN_SAFE_INTEGER,
);

const longString = fc.oneof(
  fc.integer({ min: 256, max: 70_000 }).map((n) => 'A'.repeat(n)),
  fc.integer({ min: 50, max: 5_000 }).map((n) => '😀'.repeat(n)),
  fc.integer({ min: 10, max: 2_000 }).map((n) => 'ab\u0000'.repeat(n)),
);

/** Any single JSON value of any type, biased to the ones validators and databases get wrong. */
export const nastyScalar: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double(),
  edgeNumbers,
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.string({ unit: 'binary' }),
  hostileText,
  longString,
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-z]{4}-[0-9a-f]{4}-[0-9a-f]{10,14}$/),
  fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
);

/** Arrays nested `depth` deep: `[[[…]]]`. */
export function nested(depth: number, leaf: unknown = 1): unknown {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: nastyScalar },
  { weight: 1, arbitrary: fc.array(nastyScalar, { maxLength: 5 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.string({ maxLength: 10 }), nastyScalar, { maxKeys: 4 }) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 3_000 }).map((d) => nested(d)) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

function deref(doc: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; s.$ref && i < 10; i++) {
    s = doc.components?.schemas?.[s.$ref.replace('#/components/schemas/', '')] ?? {};
  }
  return s;
}

/**
 * Where the fuzzer finds real ids: given a body field's name (`customer_id`), ids of the caller's
 * own records that such a field may hold, so requests get past "no such customer" into the action.
 */
export type IdSource = (fieldName: string | undefined) => fc.Arbitrary<string>;

type Context = { ids?: IdSource; field?: string };

function stringFor(s: JsonSchema, context: Context): fc.Arbitrary<string> {
  const max = typeof s.maxLength === 'number' ? s.maxLength : 60;
  const min = typeof s.minLength === 'number' ? s.minLength : 0;
  // Mostly values the schema admits (so requests reach the service), sometimes hostile content,
  // and exactly at the length limit and one past it.
  const variants: fc.WeightedArbitrary<string>[] = [];
  if (s.format === 'uuid') variants.push({ weight: 8, arbitrary: context.ids ? context.ids(context.field) : fc.uuid() });
  else if (typeof s.pattern === 'string')
    variants.push({ weight: 6, arbitrary: fc.stringMatching(new RegExp(s.pattern)).filter((v) => v.length <= max && v.length >= min) });
  if (s.format === 'email') variants.push({ weight: 6, arbitrary: fc.emailAddress() });
  if (s.format === 'date-time') variants.push({ weight: 6, arbitrary: fc.date({ noInvalidDate: true }).map((d) => d.toISOString()) });
  variants.push({ weight: 3, arbitrary: fc.string({ minLength: min, maxLength: Math.min(max, 60) }) });
  variants.push({ weight: 1, arbitrary: hostileText.map((h) => (min > h.length ? h + 'x'.repeat(min - h.length) : h)) });
  variants.push({ weight: 1, arbitrary: fc.constantFrom('x'.repeat(Math.min(max, 100_000)), 'x'.repeat(Math.min(max + 1, 100_001))) });
  return fc.oneof(...variants);
}

function integerFor(s: JsonSchema): fc.Arbitrary<number> {
  const lo = typeof s.minimum === 'number' ? Math.max(s.minimum, Number.MIN_SAFE_INTEGER) : Number.MIN_SAFE_INTEGER;
  const hi = typeof s.maximum === 'number' ? Math.min(s.maximum, Number.MAX_SAFE_INTEGER) : Number.MAX_SAFE_INTEGER;
  return fc.oneof(fc.integer({ min: Math.max(lo, -1000), max: Math.min(hi, 1000) }), fc.constantFrom(lo, hi), fc.integer({ min: lo, max: hi }));
}

/**
 * Values that (mostly) satisfy `schema` as the OpenAPI document states it — types, enums, bounds
 * and patterns — so requests reach the service layer. Cross-field rules the document cannot state
 * (say, "amount needs currency") are met by chance often enough.
 */
export function fromSchema(doc: OpenApiDocument, schema: JsonSchema | undefined, depth = 0, context: Context = {}): fc.Arbitrary<unknown> {
  if (!schema || depth > 6) return nastyValue;
  const s = deref(doc, schema);
  const alternatives = s.anyOf ?? s.oneOf;
  if (alternatives?.length) return fc.oneof(...alternatives.map((a) => fromSchema(doc, a, depth + 1, context)));
  if (s.allOf?.length) return fromSchema(doc, s.allOf[0], depth + 1, context);
  if (Array.isArray(s.enum) && s.enum.length) return fc.constantFrom(...s.enum);
  if ('const' in s) return fc.constant(s.const);
  const types = Array.isArray(s.type) ? s.type : s.type ? [s.type] : [];
  if (types.length > 1) return fc.oneof(...types.map((type) => fromSchema(doc, { ...s, type }, depth, context)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return integerFor(s);
    case 'number':
      return fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), edgeNumbers);
    case 'string':
      return stringFor(s, context);
    case 'array': {
      const maxItems = typeof s.maxItems === 'number' ? Math.min(s.maxItems, 4) : 4;
      return fc.array(fromSchema(doc, s.items, depth + 1, context), { maxLength: maxItems });
    }
    case 'object': {
      const props = s.properties ?? {};
      const record = fc.record(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, fromSchema(doc, v, depth + 1, { ...context, field: k })])), {
        requiredKeys: (s.required ?? []).filter((k) => k in props),
      });
      const extra = s.additionalProperties;
      if (extra && typeof extra === 'object') {
        const names = fc.oneof(fc.string({ maxLength: 40 }), hostileText);
        return fc
          .tuple(record, fc.dictionary(names, fromSchema(doc, extra as JsonSchema, depth + 1, context), { maxKeys: 5 }))
          .map(([r, d]) => ({ ...d, ...r }));
      }
      return record;
    }
    default:
      return nastyValue;
  }
}

/** The schema's own property names with wrong-typed values: gets past "unknown field" to type checks. */
export function wronglyTyped(doc: OpenApiDocument, schema: JsonSchema | undefined): fc.Arbitrary<unknown> {
  const props = Object.keys(deref(doc, schema ?? {}).properties ?? {});
  if (props.length === 0) return fc.dictionary(fc.string({ maxLength: 20 }), nastyValue, { maxKeys: 5 });
  return fc.record(Object.fromEntries(props.map((k) => [k, nastyValue])), { requiredKeys: [] });
}

/** A body that passes the schema except in one field, which gets a hostile value. */
export function oneFieldWrong(doc: OpenApiDocument, schema: JsonSchema | undefined, ids?: IdSource): fc.Arbitrary<unknown> {
  const props = Object.keys(deref(doc, schema ?? {}).properties ?? {});
  if (props.length === 0) return nastyValue;
  return fc
    .tuple(fromSchema(doc, schema, 0, { ids }), fc.constantFrom(...props), nastyValue)
    .map(([body, key, value]) => (body && typeof body === 'object' && !Array.isArray(body) ? { ...body, [key]: value } : body));
}
