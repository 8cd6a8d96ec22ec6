import Handlebars from 'handlebars';

/**
 * Dunning e-mails are Handlebars templates: `{{…}}` is HTML-escaped in the HTML part, the text part
 * is rendered without escaping. A step's own subject/body replace the named template's.
 * Variables: customer.name, customer.email, invoice.number, invoice.amount_due (formatted),
 * invoice.due_date, tenant.name, pay_url.
 */
export const DUNNING_TEMPLATES: Record<string, { subject: string; text: string }> = {
  dunning_reminder: {
    subject: 'Payment due: invoice {{invoice.number}} from {{tenant.name}}',
    text: [
      'Hello {{customer.name}},',
      '',
      'Invoice {{invoice.number}} for {{invoice.amount_due}} is unpaid{{#if invoice.due_date}} (due {{invoice.due_date}}){{/if}}.',
      '{{#if pay_url}}Pay it here: {{pay_url}}{{else}}Please pay it at your earliest convenience.{{/if}}',
      '',
      '{{tenant.name}}',
    ].join('\n'),
  },
  dunning_final_notice: {
    subject: 'Final notice: invoice {{invoice.number}} from {{tenant.name}}',
    text: [
      'Hello {{customer.name}},',
      '',
      'Invoice {{invoice.number}} for {{invoice.amount_due}} is still unpaid, and access to your account is now paused until it is paid.',
      '{{#if pay_url}}Pay it here: {{pay_url}}{{/if}}',
      '',
      '{{tenant.name}}',
    ].join('\n'),
  },
};

export type TemplateVariables = {
  customer: { name: string; email: string };
  invoice: { number: string; amount_due: string; due_date: string | null };
  tenant: { name: string };
  pay_url: string | null;
};

const engine = Handlebars.create();

/** Compiled templates by source and mode: compiling costs far more than rendering. */
const compiled = new Map<string, Handlebars.TemplateDelegate>();
const MAX_COMPILED = 500;

function compile(source: string, escape: boolean): Handlebars.TemplateDelegate {
  const key = `${escape ? 'h' : 't'}:${source}`;
  let template = compiled.get(key);
  if (!template) {
    template = engine.compile(source, { noEscape: !escape, strict: false });
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, template);
  }
  return template;
}

export type RenderedMail = { subject: string; text: string; html: string };

export function renderDunningMail(step: { template_name: string; subject: string; body: string }, vars: TemplateVariables): RenderedMail {
  const base = DUNNING_TEMPLATES[step.template_name] ?? DUNNING_TEMPLATES.dunning_reminder!;
  const subjectSource = step.subject || base.subject;
  const bodySource = step.body || base.text;
  const subject = compile(
    subjectSource,
    false,
  )(vars)
    .replace(/[\r\n]+/g, ' ')
    .trim();
  const text = compile(bodySource, false)(vars);
  // The HTML part is the same body, escaped by the engine, paragraphs from blank lines.
  const escaped = compile(bodySource, true)(vars);
  const html = `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${escaped
    .split(/\n{2,}/)
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('')}</body></html>`;
  return { subject: subject || 'Payment reminder', text, html };
}
