import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { KoshError } from '../errors.js';

/**
 * Targets the router refuses before any hook runs: bad percent-encoding (`/v1/customers/%zz`) and
 * path parameters over the router's 100-character limit. Fastify answers those itself, outside the
 * envelope, without request id, security headers, log line or authentication. Here the request is
 * routed again to a path no route matches (under `/v1` when the target was), so it meets every
 * hook like any other request; the not-found handler then answers the 400 recorded here
 * (decision 0232).
 */
const refusals = new WeakMap<IncomingMessage, KoshError>();

export const MALFORMED_TARGET_PATH = '/__malformed_target';

function refusalOf(error: FastifyError): KoshError {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    return new KoshError('validation_failed', 'a path parameter is longer than 100 characters', { reason: 'path_parameter_too_long' });
  }
  return new KoshError('validation_failed', 'the request target is not a valid URL (malformed percent-encoding)', { reason: 'malformed_url' });
}

/** Fastify's `frameworkErrors`: remembers the refusal and routes the request again. */
export function rerouteFrameworkError(app: () => FastifyInstance, isV1Target: (target: string) => boolean) {
  return (error: FastifyError, request: FastifyRequest, _reply: FastifyReply): void => {
    const raw = request.raw;
    refusals.set(raw, refusalOf(error));
    raw.url = `${isV1Target(raw.url ?? '') ? '/v1' : ''}${MALFORMED_TARGET_PATH}`;
    app().routing(raw, _reply.raw);
  };
}

/** The refusal recorded for this request by `rerouteFrameworkError`, if any. */
export function malformedTargetRefusal(request: FastifyRequest): KoshError | undefined {
  return refusals.get(request.raw);
}
