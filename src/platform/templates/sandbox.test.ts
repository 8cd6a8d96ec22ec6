import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { KoshError } from '../errors.js';
import { assertTemplateCompiles, renderTemplateSource, TEMPLATE_LIMITS } from './sandbox.js';

/** What a template could write to the process's output (the shared log) while it is rendered. */
let written: string[];
beforeEach(() => {
  written = [];
  const keep = (...args: unknown[]) => void written.push(args.map(String).join(' '));
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) vi.spyOn(console, method).mockImplementation(keep);
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
});
afterEach(() => vi.restoreAllMocks());

const FORGED = '{{log "ok\\n{\\"level\\":60,\\"msg\\":\\"forged\\"}" level="error"}}';

function refusal(run: () => unknown): KoshError {
  try {
    run();
  } catch (error) {
    if (error instanceof KoshError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('the template sandbox', () => {
  describe('save-time check', () => {
    it.each([
      ['the log helper', FORGED],
      ['the log helper as a block', '{{#log "x"}}{{/log}}'],
      ['the lookup helper', '{{lookup this "constructor"}}'],
      ['an unknown helper', '{{shout customer.name}}'],
      ['a partial', '{{> header}}'],
      ['a partial block', '{{#> layout}}x{{/layout}}'],
      ['an inline partial (a decorator)', '{{#*inline "x"}}y{{/inline}}'],
      ['a block that is not closed', 'Hi\n{{#if customer.name}}\nopen'],
    ])('refuses %s with 400 template_invalid', (_what, source) => {
      const error = refusal(() => assertTemplateCompiles('body', source));
      expect(error.status).toBe(400);
      expect(error.reason).toBe('template_invalid');
      expect(error.details?.[0]?.field).toBe('body');
    });

    it('gives the line of a syntax error', () => {
      expect(refusal(() => assertTemplateCompiles('html', '<p>\n{{#if a}}\n<b>')).message).toMatch(/line \d+/);
    });

    it('accepts the built-in helpers a template needs', () => {
      expect(() =>
        assertTemplateCompiles('text', '{{#if a}}{{a}}{{else}}none{{/if}} {{#unless b}}-{{/unless}} {{#with c}}{{d}}{{/with}} {{#each e}}{{@index}}{{/each}}'),
      ).not.toThrow();
    });
  });

  describe('rendering', () => {
    it('renders a template that calls log as a refusal, writing nothing to the log', () => {
      expect(refusal(() => renderTemplateSource(FORGED, {}, { escape: false })).reason).toBe('template_invalid');
      expect(written).toEqual([]);
    });

    it('renders prototype properties empty, writing nothing to the log', () => {
      const out = renderTemplateSource(
        '[{{constructor}}][{{customer.constructor}}][{{__proto__}}][{{customer.hasOwnProperty}}]',
        { customer: { name: 'A' } },
        { escape: false },
      );
      expect(out).toBe('[][][][]');
      expect(written).toEqual([]);
    });

    it('escapes in HTML mode and not in text mode', () => {
      expect(renderTemplateSource('{{name}}', { name: 'Chai & <Co>' }, { escape: true })).toBe('Chai &amp; &lt;Co&gt;');
      expect(renderTemplateSource('{{name}}', { name: 'Chai & <Co>' }, { escape: false })).toBe('Chai & <Co>');
    });

    it('iterates arrays and objects with @index, @key, @first, @last and else', () => {
      const source =
        '{{#each items}}{{#if @first}}<{{/if}}{{@index}}={{this}}{{#if @last}}>{{/if}}{{/each}}|{{#each map}}{{@key}}:{{this}};{{/each}}|{{#each none}}x{{else}}empty{{/each}}';
      expect(renderTemplateSource(source, { items: ['a', 'b'], map: { k: 1, l: 2 }, none: [] }, { escape: false })).toBe('<0=a1=b>|k:1;l:2;|empty');
    });

    it('stops a template whose repetition explodes (nested each over the same data) quickly, with 400 template_over_limit', () => {
      const levels = 40;
      const source = `${'{{#each @root.items}}'.repeat(levels)}x${'{{/each}}'.repeat(levels)}`;
      const started = Date.now();
      const error = refusal(() => renderTemplateSource(source, { items: [1, 2, 3] }, { escape: false }));
      expect(error.reason).toBe('template_over_limit');
      expect(Date.now() - started).toBeLessThan(10 * TEMPLATE_LIMITS.millis);
    });

    it('stops output over the size limit', () => {
      const big = 'y'.repeat(100_000);
      const source = '{{#each items}}{{../big}}{{/each}}';
      const error = refusal(() => renderTemplateSource(source, { big, items: Array.from({ length: 20 }, (_v, i) => i) }, { escape: false }));
      expect(error.reason).toBe('template_over_limit');
    });
  });
});
