import { z } from 'zod';

/** SPEC 4.8 answers `{ message }` itself, without the `data` envelope. */
export const sendInvoiceResponse = z
  .object({ message: z.string().describe('e.g. "invoice INV-000003 queued for delivery to a@b.c"') })
  .meta({ id: 'SendInvoiceResponse' });

export const invoicePdfResponse = z.string().meta({ format: 'binary', description: 'A PDF document' });
