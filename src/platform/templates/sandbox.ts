import Handlebars from 'handlebars';
import { KoshError } from '../errors.js';

/**
 * The one Handlebars of Kosh (DESIGN §21): e-mail and SMS templates and dunning bodies, which
 * tenants write, compile and render here and nowhere else (decision 0230).
 *
 * - Helpers: `if`, `unless`, `with` and a bounded `each`. `log` (it wrote the template's text
 *   into the shared log) and `lookup` are gone, at compile time and at run time; partials and
 *   decorators are refused; `helperMissing`/`blockHelperMissing` stay (they only render values).
 * - No prototype properties or methods (`{{constructor}}` renders empty), and the engine's own
 *   logger is silenced: a denied access must not write a line either.
 * - A template is checked when it is saved: it must compile under these rules (400 otherwise).
 * - Rendering is synchronous and cannot be interrupted, so it is bounded instead: only `each`
 *   repeats anything, and it counts iterations, watches the clock and the output size.
 */
const engine = Handlebars.create();
engine.unregisterHelper('log');
engine.unregisterHelper('lookup');
engine.log = () => undefined;
// The engine's logger is Handlebars' module-wide object; a level above `error` silences it (the
// proto-access warnings name template text). Kosh has no other Handlebars.
(engine.logger as { level: number | string }).level = 4;

export const TEMPLATE_LIMITS = {
  /** `each` iterations in one render, all nesting levels together. */
  iterations: 10_000,
  /** Characters of output, checked as `each` builds it and at the end. */
  outputChars: 1_000_000,
  /** Wall-clock time of one render, checked at every `each` iteration. */
  millis: 250,
};

const COMPILE_OPTIONS = { strict: false, knownHelpersOnly: true, knownHelpers: { log: false, lookup: false } } as const;
const RUNTIME_OPTIONS = { allowProtoPropertiesByDefault: false, allowProtoMethodsByDefault: false, allowCallsToHelperMissing: false } as const;

function overLimit(what: string): KoshError {
  return new KoshError('validation_failed', `the template ${what}; simplify it`, { reason: 'template_over_limit' });
}

/** The budget of the render in progress (rendering is synchronous: one at a time). */
let budget: { iterations: number; deadline: number } | undefined;

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** `each` over arrays and plain objects (own keys only), within the render's budget. */
function boundedEach(this: unknown, context: unknown, options: Handlebars.HelperOptions): string {
  const entries: [string | number, unknown][] = Array.isArray(context)
    ? context.map((value, index): [number, unknown] => [index, value])
    : isPlainObject(context)
      ? Object.entries(context)
      : [];
  if (entries.length === 0) return options.inverse(this);
  let out = '';
  entries.forEach(([key, value], index) => {
    if (budget) {
      budget.iterations -= 1;
      if (budget.iterations < 0) throw overLimit(`repeats more than ${TEMPLATE_LIMITS.iterations} times`);
      if (Date.now() > budget.deadline) throw overLimit(`takes longer than ${TEMPLATE_LIMITS.millis} ms to render`);
    }
    const data = options.data ? Handlebars.createFrame(options.data) : undefined;
    if (data) Object.assign(data, { key, index, first: index === 0, last: index === entries.length - 1 });
    out += options.fn(value, { data, blockParams: [value, key] });
    if (out.length > TEMPLATE_LIMITS.outputChars) throw overLimit(`renders more than ${TEMPLATE_LIMITS.outputChars} characters`);
  });
  return out;
}
engine.registerHelper('each', boundedEach);

type AstNode = { type: string; [key: string]: unknown };
const REFUSED_NODES: Record<string, string> = {
  PartialStatement: 'partials are not supported',
  PartialBlockStatement: 'partials are not supported',
  DecoratorBlock: 'decorators are not supported',
  Decorator: 'decorators are not supported',
};

/** The first partial or decorator anywhere in the tree, if any. */
function refusedNode(node: unknown): string | undefined {
  if (Array.isArray(node)) {
    for (const child of node) {
      const found = refusedNode(child);
      if (found) return found;
    }
    return undefined;
  }
  if (node === null || typeof node !== 'object') return undefined;
  const n = node as AstNode;
  if (typeof n.type === 'string' && REFUSED_NODES[n.type]) return REFUSED_NODES[n.type];
  for (const key of ['body', 'program', 'inverse'] as const) {
    const found = refusedNode(n[key]);
    if (found) return found;
  }
  return undefined;
}

/** The parsed template (for tools that read which variables it uses). */
export function parseTemplate(source: string): hbs.AST.Program {
  return engine.parse(source);
}

/**
 * Refuses a template that does not compile under the sandbox's rules, with the line of the error
 * (400 `field: does not compile (line N): …`). Called where a template is saved or previewed.
 */
export function assertTemplateCompiles(field: string, source: string): void {
  try {
    const ast = engine.parse(source);
    const refused = refusedNode(ast);
    if (refused) throw new Error(refused);
    // Compile too: unknown (and removed) helpers are only refused at compile time.
    engine.precompile(ast, COMPILE_OPTIONS);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const line = /line (\d+)/i.exec(message)?.[1];
    const first = message.split('\n')[0]!.trim();
    const text = line ? `does not compile (line ${line}): ${first}` : `does not compile: ${first}`;
    throw new KoshError('validation_failed', `${field}: ${text}`, { details: [{ field, message: text }], reason: 'template_invalid' });
  }
}

/** Compiled templates by source and mode: compiling costs far more than rendering. */
const compiled = new Map<string, Handlebars.TemplateDelegate>();
const MAX_COMPILED = 500;

function compile(source: string, escape: boolean): Handlebars.TemplateDelegate {
  const key = `${escape ? 'h' : 't'}:${source}`;
  let template = compiled.get(key);
  if (!template) {
    // A template saved before these rules may break them: it fails here, at send time, as a 400.
    assertTemplateCompiles('template', source);
    template = engine.compile(source, { ...COMPILE_OPTIONS, noEscape: !escape });
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, template);
  }
  return template;
}

/**
 * Renders a template with `data`. `escape`: `{{…}}` is HTML-escaped (HTML parts); otherwise text.
 * Over a limit of TEMPLATE_LIMITS: a 400 `template_over_limit`.
 */
export function renderTemplateSource(source: string, data: unknown, options: { escape: boolean }): string {
  const template = compile(source, options.escape);
  budget = { iterations: TEMPLATE_LIMITS.iterations, deadline: Date.now() + TEMPLATE_LIMITS.millis };
  try {
    const out = template(data, RUNTIME_OPTIONS);
    if (out.length > TEMPLATE_LIMITS.outputChars) throw overLimit(`renders more than ${TEMPLATE_LIMITS.outputChars} characters`);
    return out;
  } finally {
    budget = undefined;
  }
}
