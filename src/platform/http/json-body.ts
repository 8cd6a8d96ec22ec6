import type { FastifyInstance } from 'fastify';

/**
 * `Content-Type: application/json` with an empty body is no body: many HTTP clients send the
 * header on every request, a `DELETE` or a body-less `POST` included. A route that needs a body
 * then refuses it as missing (its schema says so); one that takes none runs. Anything else goes
 * to Fastify's own JSON parser (prototype-poisoning checks included).
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
    parse(request, text, done);
  });
}
