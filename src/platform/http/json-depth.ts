import { KoshError } from '../errors.js';

/**
 * How deep a request body may nest. Kosh's own shapes need a handful of levels; the limit is far
 * above them and far below what recursive code (idempotency's canonical JSON, schema validation)
 * survives: a body of 5 000 nested arrays is valid JSON and used to overflow the stack (a 500).
 */
export const MAX_JSON_DEPTH = 64;

function isContainer(value: unknown): value is object {
  if (value === null || typeof value !== 'object') return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** Whether a parsed body nests deeper than `max`, measured without recursion. */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (!isContainer(current)) continue;
    if (depth > max) return true;
    for (const child of Object.values(current)) if (isContainer(child)) stack.push([child, depth + 1]);
  }
  return false;
}

/** The preValidation check: a body nested too deep is a 400 before anything walks it. */
export function assertBodyDepth(body: unknown): void {
  if (body !== undefined && nestsDeeperThan(body, MAX_JSON_DEPTH)) {
    throw new KoshError('validation_failed', `request body is nested deeper than ${MAX_JSON_DEPTH} levels`, { reason: 'json_too_deep' });
  }
}
