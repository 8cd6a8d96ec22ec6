import type { FastifyInstance } from 'fastify';
import { KoshError } from '../errors.js';

/**
 * The one `application/json` parser:
 * - an empty body is no body: many HTTP clients send the header on every request, a `DELETE` or a
 *   body-less `POST` included. A route that needs a body then refuses it as missing (its schema
 *   says so); one that takes none runs;
 * - anything else goes to Fastify's own JSON parser (secure-json-parse), which refuses
 *   `__proto__` and `constructor.prototype` keys as "not valid JSON": a body that is valid JSON
 *   refused for such a key is told so.
 */
export function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    parse(request, text, (error, value) => {
      if (error && (error as { code?: string }).code === 'FST_ERR_CTP_INVALID_JSON_BODY' && isPlainJson(text)) {
        done(prototypeKeyRefusal(), undefined);
        return;
      }
      done(error, value);
    });
  });
}

function isPlainJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function prototypeKeyRefusal(): KoshError {
  return new KoshError(
    'validation_failed',
    'request body contains a "__proto__" or "constructor.prototype" key, which is refused (it could alter JavaScript objects); rename or remove it',
    { reason: 'prototype_key' },
  );
}
