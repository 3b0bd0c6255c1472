/**
 * What the seller of a listing is paid when it sells: the price, less the seller fee (a separate
 * ledger entry). When the money arrives is not in the spec: at the sale, or
 * `rules.listing_proceeds_delay_seconds` later, while the card leaves the seller's vault at the
 * sale either way. Pending proceeds are part of the state (saved and restored with it) and are
 * paid by the background dynamics in time order with every other event.
 */
import { applyRate, type Cents } from '../core/money.js';
import { type MarketState, type PendingProceeds, record } from './state.js';

/** A listing of account `seller` sold at `priceCents` at `at`: its proceeds paid now, or queued. */
export function listingSold(
  s: MarketState,
  seller: string,
  listingId: string,
  priceCents: Cents,
  at: number,
): void {
  const delayMs = s.world.rules.listing_proceeds_delay_seconds * 1000;
  const p = { at: at + delayMs, accountId: seller, listingId, priceCents };
  // Sales come in time order and the delay is one number: the queue stays sorted by `at`.
  if (delayMs > 0) s.pendingProceeds.push(p);
  else pay(s, p);
}

/** When the next queued proceeds are due, if any are. */
export function nextProceedsAt(s: MarketState): number | undefined {
  return s.pendingProceeds[0]?.at;
}

/** Pays every queued proceeds due at or before `upTo`, at its own time. */
export function payDueProceeds(s: MarketState, upTo: number): void {
  let n = 0;
  while (n < s.pendingProceeds.length && s.pendingProceeds[n]!.at <= upTo) pay(s, s.pendingProceeds[n++]!);
  if (n > 0) s.pendingProceeds.splice(0, n);
}

function pay(s: MarketState, p: PendingProceeds): void {
  record(s, p.accountId, p.at, 'listing_sale', p.priceCents, p.listingId);
  const fee = applyRate(p.priceCents, s.world.rules.seller_fee_rate);
  if (fee > 0) record(s, p.accountId, p.at, 'seller_fee', -fee, p.listingId);
}
