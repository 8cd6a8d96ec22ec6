import type { AccountingProvider } from '../accounting.tables.js';
import type { AccountingAdapter } from './provider.js';
import { quickbooks } from './quickbooks.js';
import { xero } from './xero.js';
import { zohoBooks } from './zoho-books.js';

export const adapters: Record<AccountingProvider, AccountingAdapter> = { quickbooks, xero, zoho_books: zohoBooks };
