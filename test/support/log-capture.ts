import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createKosh, type Kosh } from '../../src/app.js';
import { ManualClock } from '../../src/platform/clock.js';
import { loadConfig } from '../../src/platform/config.js';
import { openTestDatabase } from './database.js';
import { toResponse, type ApiResponse } from './harness.js';

/** Every line a Kosh wrote to its log, parsed. */
export type LogLines = Record<string, unknown>[];

/**
 * A Kosh whose log is kept (the harness's is silent): for tests about what reaches the shared
 * log — a refusal logged, a start-up warning, a template that must not write lines of its own.
 */
export async function startLoggedKosh(env: Record<string, string> = {}) {
  const lines: LogLines = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const database = await openTestDatabase();
  const config = loadConfig({ KOSH_MODE: 'test', LOG_LEVEL: 'info', KOSH_SECRET_KEY: randomBytes(32).toString('base64'), ...env });
  const kosh: Kosh = await createKosh({ config, database, clock: new ManualClock('2026-04-01T00:00:00Z'), logger: pino({ level: 'info' }, sink) });
  const api = async (
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    url: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<ApiResponse> =>
    toResponse(
      await kosh.app.inject({
        method,
        url,
        headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers },
        ...(body !== undefined ? { payload: JSON.stringify(body) } : {}),
      }),
    );
  return {
    kosh,
    lines,
    api,
    close: async () => {
      await kosh.close();
      await database.close();
    },
  };
}
