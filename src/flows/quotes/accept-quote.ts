import type { Ctx } from '../../platform/context.js';
import { getCustomer } from '../../modules/customers/index.js';
import type { InvoiceRow } from '../../modules/invoices/index.js';
import { invoiceLinesOfQuote, lockQuoteForAcceptance, markQuoteAccepted, type QuoteRow } from '../../modules/quotes/index.js';
import { issueInvoiceWithCredit } from '../invoices/finalize-invoice.js';

/**
 * Accepting a quote: the invoice (the quote's lines, its discount spread over them, GST computed
 * as for any invoice, from the quote's entity) is created and finalized — the customer's credit
 * applied as everywhere — and the quote becomes `accepted` with `invoice_id`, in one transaction.
 * The quote row is locked first, so accepting twice (even concurrently) makes one invoice.
 */
export async function acceptQuote(ctx: Ctx, id: string): Promise<{ quote: QuoteRow; invoice: InvoiceRow }> {
  const quote = await lockQuoteForAcceptance(ctx, id);
  const customer = await getCustomer(ctx, quote.customer_id);
  const invoice = await issueInvoiceWithCredit(ctx, {
    customer,
    entityId: quote.entity_id,
    currency: quote.currency,
    lines: invoiceLinesOfQuote(quote),
    billingReason: 'quote',
    memo: `Quote ${quote.quote_number}`,
    metadata: { quote_id: quote.id, quote_number: quote.quote_number },
  });
  return { quote: await markQuoteAccepted(ctx, quote.id, invoice.id), invoice };
}
