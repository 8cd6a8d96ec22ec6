import { escapeHtml } from '../../platform/html.js';
import { displayMoney } from '../../platform/money.js';
import type { Invoice } from '../invoices/index.js';

/**
 * The hosted checkout page (DESIGN §11): the invoice with its GST breakdown and a card form (the
 * test gateway), as plain HTML that POSTs and redirects — no JavaScript. Every value goes through
 * `escapeHtml`.
 */

const STYLE = `
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d2330; background: #f6f7f9; }
  main { max-width: 720px; margin: 0 auto; padding: 28px 20px 48px; }
  section { background: #fff; border: 1px solid #e3e6eb; border-radius: 10px; padding: 18px 20px; margin-bottom: 20px; }
  h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 0 0 12px; }
  .muted { color: #5d6675; font-size: 14px; }
  table { width: 100%; border-collapse: collapse; font-size: 14px; }
  th, td { text-align: left; padding: 7px 6px; border-bottom: 1px solid #e3e6eb; }
  td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
  tr.total td { font-weight: 650; border-bottom: 0; }
  label { display: block; font-weight: 600; margin: 10px 0 6px; }
  input { width: 100%; max-width: 320px; padding: 9px 10px; border: 1px solid #c8ced8; border-radius: 6px; font: inherit; }
  .row { display: flex; gap: 12px; } .row input { max-width: 150px; }
  a.button { display: inline-block; padding: 10px 18px; border-radius: 6px; background: #2f5bd3; color: #fff; text-decoration: none; }
  button { margin-top: 16px; padding: 10px 18px; border: 0; border-radius: 6px; background: #2f5bd3; color: #fff; font: inherit; cursor: pointer; }
  .paid { background: #e5f4ec; color: #1f7a4d; border: 1px solid #b9e0c9; padding: 12px 14px; border-radius: 8px; }
  .error { background: #fdecea; color: #b42318; border: 1px solid #f5c2bd; padding: 10px 14px; border-radius: 8px; margin-bottom: 12px; }
`;

function layout(title: string, body: string, refreshSeconds?: number): string {
  const refresh = refreshSeconds ? `<meta http-equiv="refresh" content="${refreshSeconds}">` : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="referrer" content="no-referrer">${refresh}
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>
`;
}

const money = (minor: number, currency: string) => escapeHtml(displayMoney(minor, currency));

function breakdown(invoice: Invoice): string {
  const c = invoice.currency;
  const lines = invoice.lines
    .map(
      (l) =>
        `<tr><td>${escapeHtml(l.description)}</td><td>${escapeHtml(l.hsn_code)}</td><td class="num">${l.quantity}</td><td class="num">${money(l.amount, c)}</td></tr>`,
    )
    .join('');
  const tax = [
    ['CGST', invoice.cgst_amount],
    [invoice.utgst ? 'UTGST' : 'SGST', invoice.sgst_amount],
    ['IGST', invoice.igst_amount],
  ]
    .filter(([, amount]) => (amount as number) > 0)
    .map(
      ([name, amount]) =>
        `<tr class="tax"><td colspan="3">${escapeHtml(name)}</td><td class="num" data-tax="${escapeHtml(String(name).toLowerCase())}">${money(amount as number, c)}</td></tr>`,
    )
    .join('');
  return `<table>
<thead><tr><th>Description</th><th>HSN/SAC</th><th class="num">Qty</th><th class="num">Amount</th></tr></thead>
<tbody>${lines}
<tr><td colspan="3">Taxable value</td><td class="num">${money(invoice.subtotal, c)}</td></tr>
${tax}
<tr class="total"><td colspan="3">Total</td><td class="num" data-total>${money(invoice.total, c)}</td></tr>
${invoice.amount_paid + invoice.amount_credited > 0 ? `<tr><td colspan="3">Paid and credited</td><td class="num">${money(invoice.amount_paid + invoice.amount_credited, c)}</td></tr>` : ''}
<tr class="total"><td colspan="3">Amount due</td><td class="num" data-amount-due>${money(invoice.amount_due, c)}</td></tr>
</tbody></table>`;
}

/** A session handed over to the provider's hosted checkout: the customer pays there, not on this page. */
export type CheckoutHandover = { provider: string; url: string; cancelled: boolean };

export type CheckoutView = { invoice: Invoice; sellerName: string; action: string; error?: string; notice?: string; handover?: CheckoutHandover };

const providerNames: Record<string, string> = { stripe: 'Stripe', razorpay: 'Razorpay' };

/** A gateway as customers know it (Stripe, Razorpay); the provider's code otherwise. */
export function gatewayName(provider: string): string {
  return providerNames[provider] ?? provider;
}

/** Back from the provider: paid shows the receipt; cancelled offers the provider's page again; otherwise it waits for the webhook. */
function handoverSection(invoice: Invoice, handover: CheckoutHandover): string {
  const name = escapeHtml(gatewayName(handover.provider));
  const again = `<p><a class="button" id="pay" href="${escapeHtml(handover.url)}">Pay ${money(invoice.amount_due, invoice.currency)} with ${name}</a></p>`;
  return handover.cancelled
    ? `<section><h2>Payment</h2><div class="muted" role="status" data-cancelled>The payment was cancelled; nothing was charged.</div>${again}</section>`
    : `<section><h2>Payment</h2><div class="muted" role="status" data-waiting>Waiting for ${name} to confirm the payment. This page refreshes by itself.</div>${again}</section>`;
}

export function checkoutPage(view: CheckoutView): string {
  const { invoice } = view;
  const paid = invoice.status === 'paid';
  const header = `<section><h1>Invoice ${escapeHtml(invoice.number ?? '')}</h1><div class="muted">${escapeHtml(view.sellerName)} · ${escapeHtml(invoice.tax_type.replace(/_/g, ' '))}${invoice.place_of_supply ? ` · place of supply ${escapeHtml(invoice.place_of_supply)}` : ''}</div></section>`;
  const summary = `<section><h2>Summary</h2>${breakdown(invoice)}</section>`;
  const pay = paid
    ? `<section><div class="paid" role="status" data-paid>Paid — thank you. ${money(invoice.amount_paid, invoice.currency)} received.</div></section>`
    : invoice.status !== 'open' && invoice.status !== 'uncollectible'
      ? `<section><div class="error" role="alert">This invoice is ${escapeHtml(invoice.status)} and cannot be paid.</div></section>`
      : view.handover
        ? handoverSection(invoice, view.handover)
        : `<section><h2>Pay by card</h2>
${view.error ? `<div class="error" role="alert">${escapeHtml(view.error)}</div>` : ''}${view.notice ? `<div class="muted" role="status">${escapeHtml(view.notice)}</div>` : ''}
<form method="post" action="${escapeHtml(view.action)}">
<label for="card_number">Card number</label><input id="card_number" name="card_number" inputmode="numeric" autocomplete="cc-number" placeholder="4242 4242 4242 4242" required maxlength="23">
<div class="row"><div><label for="exp">Expiry</label><input id="exp" name="exp" placeholder="MM / YY" maxlength="7"></div><div><label for="cvc">CVC</label><input id="cvc" name="cvc" placeholder="123" maxlength="4"></div></div>
<button type="submit" id="pay">Pay ${money(invoice.amount_due, invoice.currency)}</button>
<p class="muted">Test mode: 4242 4242 4242 4242 succeeds, 4000 0000 0000 0002 is declined.</p>
</form></section>`;
  const waiting = !paid && view.handover && !view.handover.cancelled && (invoice.status === 'open' || invoice.status === 'uncollectible');
  return layout(`Invoice ${invoice.number ?? ''}`, header + summary + pay, waiting ? 3 : undefined);
}

export function checkoutGonePage(message: string): string {
  return layout('Checkout', `<section><div class="error" role="alert">${escapeHtml(message)}</div></section>`);
}

/** The pre-debit notice's "skip this debit" page (docs/decisions/0520): what will be skipped, and a form that POSTs the skip. */
export function mandateSkipPage(view: {
  merchant: string;
  invoiceNumber: string;
  amount: number;
  currency: string;
  notBefore: string;
  state: 'ready' | 'skipped' | 'closed';
  action: string;
}): string {
  const what = `the mandate debit of <strong>${money(view.amount, view.currency)}</strong> by ${escapeHtml(view.merchant)} for invoice <strong>${escapeHtml(view.invoiceNumber)}</strong>, due on or after ${escapeHtml(view.notBefore)}`;
  const body =
    view.state === 'ready'
      ? `<p>Skip ${what}?</p><p class="muted">Only this debit is skipped: the mandate stays in place, and the invoice stays open for you to pay yourself.</p>
<form method="post" action="${escapeHtml(view.action)}"><button type="submit">Skip this debit</button></form>`
      : view.state === 'skipped'
        ? `<div class="paid" role="status">Skipped: ${what} will not be made. The invoice stays open for you to pay yourself.</div>`
        : `<div class="error" role="alert">This debit can no longer be skipped: it has already been made, skipped or canceled.</div>`;
  return layout('Skip a mandate debit', `<section><h1>${escapeHtml(view.merchant)}</h1>${body}</section>`);
}
