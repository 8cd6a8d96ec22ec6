/** The public face of quotes: what the accept flow uses. */
export { invoiceLinesOfQuote, lockQuoteForAcceptance, markQuoteAccepted, toQuote } from './quotes.service.js';
export type { QuoteRow } from './quotes.repository.js';
export { quoteSchema, type Quote } from './quotes.schemas.js';
