import type { Ctx } from '../../platform/context.js';
import { errors } from '../../platform/errors.js';
import { createCreditNote, type CreditNoteRow } from '../../modules/credit-notes/index.js';
import { markGiftCanceled, type GiftRow } from '../../modules/gifts/index.js';
import { getInvoiceRow } from '../../modules/invoices/index.js';
import { voidInvoiceWithCreditNotes } from '../invoices/void-invoice.js';

export type CanceledGift = { gift: GiftRow; creditNote: CreditNoteRow | null; invoiceVoided: boolean };

/**
 * SPEC 4.1. The guarded flip (purchased → canceled) runs first, so of any number of concurrent
 * cancels exactly one proceeds; the others wait on the row lock and then get 409. The settlement
 * follows in the same transaction, by the state of the purchase invoice:
 *   paid                → an adjustment credit note for the purchase amount (the invoice total)
 *                         to the buyer, through createCreditNote (approval governance, ledger);
 *   open/uncollectible  → the invoice is voided (its ledger entry reversed) with its unspent
 *                         credit notes (voidInvoiceWithCreditNotes);
 *   void                → nothing;
 *   no invoice          → nothing but the status.
 * If any step fails the whole transaction rolls back and the gift is still `purchased` — so
 * Kosh never answers SPEC's 424 "canceled but the credit failed; credit manually".
 */
export async function cancelGift(ctx: Ctx, id: string): Promise<CanceledGift> {
  const gift = await markGiftCanceled(ctx, id);
  if (!gift.invoice_id) return { gift, creditNote: null, invoiceVoided: false };
  // Locked so a payment racing the cancel either lands before (→ credit) or after (→ refused).
  const invoice = await getInvoiceRow(ctx, gift.invoice_id, true);
  switch (invoice.status) {
    case 'paid': {
      const creditNote = await createCreditNote(ctx, {
        customer_id: gift.buyer_customer_id,
        invoice_id: invoice.id,
        amount: invoice.total,
        reason: `Gift ${gift.code} canceled`,
        reference: gift.code,
      });
      return { gift, creditNote, invoiceVoided: false };
    }
    case 'open':
    case 'uncollectible':
    case 'draft': {
      if (invoice.amount_paid > 0 || invoice.amount_credited > 0) {
        // Voiding would orphan the money received; crediting only part of an unpaid invoice would
        // leave the buyer owing for a canceled gift. Neither is a safe automatic answer.
        throw errors.conflict(
          'the purchase invoice is partly paid: settle it in full (the cancel then credits the buyer) before canceling the gift',
          'gift_invoice_partly_paid',
        );
      }
      await voidInvoiceWithCreditNotes(ctx, invoice.id);
      return { gift, creditNote: null, invoiceVoided: true };
    }
    case 'void':
      return { gift, creditNote: null, invoiceVoided: false };
  }
}
