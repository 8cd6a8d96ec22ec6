import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertTemplateCompiles, parseTemplate, renderTemplateSource } from '../../platform/templates/sandbox.js';

/**
 * E-mail templates: Handlebars files shipped in templates/email/<name>/ (subject.hbs, html.hbs,
 * text.hbs), which a tenant may override (email_templates). `{{…}}` is HTML-escaped in the HTML
 * part and the subject is one line; the text part is rendered without escaping. A variable the data
 * lacks renders empty (never an error at send time) and the preview lists it.
 */
export const TEMPLATES_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../../templates/email');

export const TEMPLATE_NAMES = [
  'invoice_finalized',
  'payment_receipt',
  'payment_failed',
  'trial_ending',
  'credit_note_issued',
  'dunning_reminder',
  'dunning_final_notice',
  'mandate_pre_debit',
  'mandate_debit_canceled',
  'mandate_post_debit',
  'mandate_pay_link',
] as const;
export type TemplateName = (typeof TEMPLATE_NAMES)[number];

export function isTemplateName(name: string): name is TemplateName {
  return (TEMPLATE_NAMES as readonly string[]).includes(name);
}

export type TemplateSource = { subject: string; html: string; text: string | null };
export type RenderedEmail = { subject: string; html: string; text: string };

function readShipped(name: TemplateName): TemplateSource {
  const read = (file: string) => readFileSync(join(TEMPLATES_DIR, name, file), 'utf8');
  return Object.freeze({ subject: read('subject.hbs').trim(), html: read('html.hbs'), text: read('text.hbs') });
}

/** The shipped templates, read once when the module loads (a few small files) and frozen: a constant, not a cache. */
const DEFAULTS: Readonly<Record<TemplateName, TemplateSource>> = Object.freeze(
  Object.fromEntries(TEMPLATE_NAMES.map((name) => [name, readShipped(name)])) as Record<TemplateName, TemplateSource>,
);

/** The shipped version of a template. */
export function defaultTemplate(name: TemplateName): TemplateSource {
  return DEFAULTS[name];
}

/** Variables of each template, with the sample values a preview uses. */
const common = {
  tenant: { name: 'Acme Software Pvt Ltd' },
  customer: { name: 'Priya Sharma', email: 'priya@example.in' },
};
export const SAMPLE_DATA: Record<TemplateName, Record<string, unknown>> = {
  invoice_finalized: {
    ...common,
    invoice: { number: 'INV-000042', total: '₹11,800.00', amount_due: '₹11,800.00', issued_on: '2026-04-01', due_date: '2026-04-15', is_paid: false },
  },
  payment_receipt: {
    ...common,
    payment: { id: '0195f1a2-0000-7000-8000-000000000001', amount: '₹11,800.00', paid_on: '2026-04-03', method: 'card' },
    invoice: { number: 'INV-000042' },
  },
  payment_failed: {
    ...common,
    invoice: { number: 'INV-000042', amount_due: '₹11,800.00', due_date: '2026-04-15' },
    failure: { code: 'card_declined', message: 'Your card was declined.' },
    pay_url: 'https://billing.example.in/checkout/sample',
  },
  trial_ending: {
    ...common,
    subscription: { plan_name: 'Pro', trial_ends_on: '2026-04-04' },
  },
  credit_note_issued: {
    ...common,
    credit_note: { number: 'CN-000007', total: '₹1,180.00', reason: 'Service credit' },
    invoice: { number: 'INV-000042' },
  },
  dunning_reminder: {
    ...common,
    invoice: { number: 'INV-000042', amount_due: '₹11,800.00', due_date: '2026-04-15' },
    pay_url: 'https://billing.example.in/checkout/sample',
  },
  dunning_final_notice: {
    ...common,
    invoice: { number: 'INV-000042', amount_due: '₹11,800.00', due_date: '2026-04-15' },
    pay_url: 'https://billing.example.in/checkout/sample',
  },
  mandate_pre_debit: {
    ...common,
    invoice: { number: 'INV-000042' },
    debit: {
      amount: '₹11,800.00',
      date: '2026-04-16',
      not_before: '2026-04-16 14:30 (Asia/Kolkata)',
      merchant: 'Acme Software Private Limited',
      mandate_reference: 'token_4lsdksD31GaZ09',
    },
    skip_url: 'https://billing.example.in/mandate-debits/sample/skip?token=sample',
  },
  mandate_debit_canceled: {
    ...common,
    invoice: { number: 'INV-000042' },
    debit: { amount: '₹11,800.00', reason: 'the invoice was paid on the Razorpay checkout page' },
  },
  mandate_post_debit: {
    ...common,
    invoice: { number: 'INV-000042' },
    debit: { amount: '₹11,800.00', date: '2026-04-16', merchant: 'Acme Software Private Limited', mandate_reference: 'token_4lsdksD31GaZ09' },
    grievance_contact: 'grievances@acme.example.in, +91 80 4000 0000',
  },
  mandate_pay_link: {
    ...common,
    invoice: { number: 'INV-000042' },
    debit: {
      amount: '₹18,000.00',
      merchant: 'Acme Software Private Limited',
      reason: "₹18,000.00 is above ₹15,000.00, the most a mandate debit may take without the customer's additional authentication (RBI e-mandate framework)",
    },
    pay_url: 'https://billing.example.in/checkout/sample',
  },
};

/** Save-time check of a template: the sandbox's (platform/templates), 400 with the line. */
export { assertTemplateCompiles };

type AstNode = { type: string; [key: string]: unknown };

/** The data paths a template reads at its top level (`invoice.number`), block bodies of each/with excluded. */
function pathsOf(source: string): string[] {
  const found = new Set<string>();
  const visitExpr = (expr: unknown) => {
    const e = expr as AstNode | undefined;
    if (!e) return;
    if (e.type === 'PathExpression' && !(e.data as boolean) && Number(e.depth ?? 0) === 0 && !(e.this as boolean)) {
      const original = String(e.original);
      if (original && original !== 'this' && !original.startsWith('this.')) found.add(original);
    }
    if (e.type === 'SubExpression') for (const p of (e.params as unknown[]) ?? []) visitExpr(p);
  };
  const visit = (node: unknown, scoped: boolean) => {
    const n = node as AstNode | undefined;
    if (!n) return;
    switch (n.type) {
      case 'Program':
        for (const s of n.body as unknown[]) visit(s, scoped);
        return;
      case 'MustacheStatement':
        if (!scoped) {
          const params = (n.params as unknown[]) ?? [];
          if (params.length === 0) visitExpr(n.path);
          for (const p of params) visitExpr(p);
        }
        return;
      case 'BlockStatement': {
        const helper = String((n.path as AstNode).original);
        if (!scoped) for (const p of (n.params as unknown[]) ?? []) visitExpr(p);
        const inner = scoped || helper === 'each' || helper === 'with';
        visit(n.program, inner);
        visit(n.inverse, scoped);
        return;
      }
    }
  };
  visit(parseTemplate(source), false);
  return [...found];
}

function lookup(data: unknown, path: string): unknown {
  let value: unknown = data;
  for (const part of path.split(/[./]/)) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** Variables the templates read that the data does not have (they render empty). */
export function missingVariables(source: TemplateSource, data: Record<string, unknown>): string[] {
  const paths = new Set([...pathsOf(source.subject), ...pathsOf(source.html), ...(source.text === null ? [] : pathsOf(source.text))]);
  return [...paths].filter((p) => lookup(data, p) === undefined).sort();
}

const ENTITIES: Record<string, string> = {
  '&amp;': '&',
  '&lt;': '<',
  '&gt;': '>',
  '&quot;': '"',
  '&#x27;': "'",
  '&#39;': "'",
  '&#x60;': '`',
  '&#x3D;': '=',
  '&nbsp;': ' ',
};

/** A readable text part from HTML, for a tenant template that gives none. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(head|style|script|title)[^>]*>[\s\S]*?<\/\1>/gi, '')
    .replace(/<a [^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/gi, '$2 ($1)')
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|tr|li|table)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&[#a-z0-9]+;/gi, (e) => ENTITIES[e] ?? e)
    .split('\n')
    .map((line) => line.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function renderTemplate(source: TemplateSource, data: Record<string, unknown>): RenderedEmail {
  const subject = renderTemplateSource(source.subject, data, { escape: false }).replace(/\s+/g, ' ').trim();
  const html = renderTemplateSource(source.html, data, { escape: true });
  const text = source.text === null ? htmlToText(html) : renderTemplateSource(source.text, data, { escape: false });
  return { subject, html, text };
}
