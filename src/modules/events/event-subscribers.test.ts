import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestKosh, type TestKosh } from '../../../test/support/harness.js';
import { eventSubscriptions } from '../../platform/events/events.js';
import { EVENT_TYPES } from './events.catalog.js';
import { EVENT_SUBSCRIBERS, SUBSCRIBERS, typesOf } from './event-subscribers.js';

const src = fileURLToPath(new URL('../../', import.meta.url));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

/** The event types named where events are emitted: `emitEvent(ctx, '<type>', …)`, and each `type: '<type>'` of a file that calls emitEvents. */
function emittedTypes(): Set<string> {
  const types = new Set<string>();
  for (const file of sourceFiles(src)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/\bemitEvent\s*\(\s*[^,]+,\s*(['"`])([a-z_]+\.[a-z_]+)\1/g)) types.add(m[2]!);
    if (/\bemitEvents\s*\(/.test(text)) for (const m of text.matchAll(/\btype:\s*(['"`])([a-z_]+\.[a-z_]+)\1/g)) types.add(m[2]!);
  }
  return types;
}

let t: TestKosh | undefined;
afterAll(async () => {
  await t?.close();
});

describe('the event → subscribers table', () => {
  it('has a row for every event type of the catalog, and for nothing else', () => {
    expect(Object.keys(EVENT_SUBSCRIBERS).sort()).toEqual([...EVENT_TYPES].sort());
  });

  it('has a row for every type emitted in src/', () => {
    const emitted = [...emittedTypes()];
    expect(emitted.length).toBeGreaterThan(40);
    expect(emitted.filter((type) => !(type in EVENT_SUBSCRIBERS))).toEqual([]);
  });

  it('sends every event to the webhooks, and gives every other subscriber at least one type', () => {
    for (const subscribers of Object.values(EVENT_SUBSCRIBERS)) expect(subscribers).toContain('webhooks');
    for (const subscriber of SUBSCRIBERS) expect(typesOf(subscriber).length, subscriber).toBeGreaterThan(0);
  });

  it('is what the app registers: each subscriber once, called for exactly the types of its column', async () => {
    t = await startTestKosh();
    const registered = eventSubscriptions();
    expect(registered.map((r) => r.subscriber).sort()).toEqual([...SUBSCRIBERS].sort());
    for (const { subscriber, types } of registered) expect(types.sort(), subscriber).toEqual(typesOf(subscriber as (typeof SUBSCRIBERS)[number]).sort());
  });
});
