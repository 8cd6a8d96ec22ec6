import { createSerializerCompiler } from 'fastify-type-provider-zod';
import type { FastifySchema } from 'fastify';

type Compiler = (route: { schema: FastifySchema; method: string; url: string; httpStatus?: string }) => (data: unknown) => string;

/** Keys present in `sent` that the schema's output dropped: fields a response would leak. */
export function unlistedFields(sent: unknown, kept: unknown, path = ''): string[] {
  if (Array.isArray(sent) && Array.isArray(kept)) return sent.flatMap((item, i) => unlistedFields(item, kept[i], `${path}[${i}]`));
  if (!sent || typeof sent !== 'object' || !kept || typeof kept !== 'object' || Array.isArray(kept)) return [];
  const out: string[] = [];
  for (const [key, value] of Object.entries(sent)) {
    if (value === undefined) continue;
    const here = path ? `${path}.${key}` : key;
    if (!(key in kept)) out.push(here);
    else out.push(...unlistedFields(value, (kept as Record<string, unknown>)[key], here));
  }
  return out;
}

/**
 * Response serialization. The route schemas are the contract, and the test suite holds every
 * handler to it (`validate` on: each response is parsed by its zod schema, and a field the schema
 * does not list is an error — nothing leaks by being silently stripped). In production the
 * handlers' output is trusted and written with JSON.stringify: re-validating every row of every
 * list costs more than the rest of the request.
 */
export function responseSerializerCompiler(validate: boolean): Compiler {
  const strict = createSerializerCompiler({});
  if (!validate) return () => (data) => JSON.stringify(data);
  return (route) => {
    const encode = strict(route as Parameters<typeof strict>[0]);
    return (data) => {
      const text = encode(data);
      const extra = unlistedFields(data, JSON.parse(text));
      if (extra.length) {
        const error = new Error(`${route.method} ${route.url} answered fields its response schema does not list: ${extra.slice(0, 5).join(', ')}`);
        throw Object.assign(error, { code: 'FST_ERR_RESPONSE_SERIALIZATION' });
      }
      return text;
    };
  };
}
