/** The public face of quotes: what the accept flow uses. */
export { invoiceLinesOfQuote, lockQuoteForAcceptance, markQuoteAccepted, toQuote } from './quotes.service.js';
export type { QuoteRow } from './quotes.repository.js';
export { quoteSchema, type Quote } from './quotes.schemas.js';
export { createQuoteBody, listQuotesQuery } from './quotes.schemas.js';
export { createQuote, declineQuote, getQuote, listQuotes } from './quotes.service.js';
