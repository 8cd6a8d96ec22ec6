import { assertTemplateCompiles, renderTemplateSource } from '../../platform/templates/sandbox.js';

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

/** A step's own subject and body are templates: refused with 400 at save time when they do not compile. */
export function assertStepTemplates(step: { subject?: string; body?: string }): void {
  if (step.subject) assertTemplateCompiles('subject', step.subject);
  if (step.body) assertTemplateCompiles('body', step.body);
}

export type RenderedMail = { subject: string; text: string; html: string };

export function renderDunningMail(step: { template_name: string; subject: string; body: string }, vars: TemplateVariables): RenderedMail {
  const base = DUNNING_TEMPLATES[step.template_name] ?? DUNNING_TEMPLATES.dunning_reminder!;
  const subjectSource = step.subject || base.subject;
  const bodySource = step.body || base.text;
  const subject = renderTemplateSource(subjectSource, vars, { escape: false })
    .replace(/[\r\n]+/g, ' ')
    .trim();
  const text = renderTemplateSource(bodySource, vars, { escape: false });
  // The HTML part is the same body, escaped by the engine, paragraphs from blank lines.
  const escaped = renderTemplateSource(bodySource, vars, { escape: true });
  const html = `<!doctype html><html><body style="font-family:sans-serif;line-height:1.5">${escaped
    .split(/\n{2,}/)
    .map((p) => `<p>${p.replace(/\n/g, '<br>')}</p>`)
    .join('')}</body></html>`;
  return { subject: subject || 'Payment reminder', text, html };
}
