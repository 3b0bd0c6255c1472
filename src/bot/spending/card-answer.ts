/**
 * The check of a card purchase's answer against the order it answers. A sale that breaks its order
 * (another card, a price above max_price, a total that is not price + fee) is still booked as
 * charged, since money moved, but its card is held for review: the executor asks this before it
 * books the answer and hands the verdict to the ledger (`Ledger.confirmIntent`).
 */
import type { CardPurchaseResponse } from '../../api/schemas.js';
import { toCents } from '../../core/money.js';

/** What is wrong with a card purchase's answer to its request, or null. */
export function cardAnswerAnomaly(body: Record<string, unknown>, r: CardPurchaseResponse): string | null {
  if (body.card_id !== undefined && r.card_id !== body.card_id)
    return `the service sold card ${r.card_id}, not the ${String(body.card_id)} ordered`;
  const max = typeof body.max_price === 'number' ? toCents(body.max_price) : null;
  if (max !== null && toCents(r.price) > max)
    return `charged ${r.price.toFixed(2)} USD, above the order's max_price ${(max / 100).toFixed(2)}`;
  if (toCents(r.total_charged) !== toCents(r.price) + toCents(r.fee))
    return `total_charged ${r.total_charged} is not price ${r.price} + fee ${r.fee}`;
  return null;
}
