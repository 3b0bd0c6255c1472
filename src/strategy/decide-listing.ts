/**
 * What to do with a card already listed: keep it, reprice it, or delist it and sell it back.
 * The timing is lock-aware: while the sell-back offer is based on the value locked at acquisition
 * (`locked_value_until`), a market below that basis makes the lock worth using before it ends,
 * and a market above it makes the end of the lock worth waiting for.
 */

import { DAY_MS, HOUR_MS, MINUTE_MS } from '../core/clock.js';
import type { Cents } from '../core/money.js';
import { fixed } from './cents.js';
import { listingPriceCents } from './listing-model.js';
import type { Strategy } from './strategy-schema.js';

export interface ListingView {
  priceCents: Cents;
  /** When the card was listed (ms). */
  listedAt: number;
  /** The card's current market value. */
  marketValueCents: Cents;
  /** The value the sell-back offer is locked to (value at acquisition). */
  basisValueCents: Cents;
  /** End of the value lock (ms), null when there is none. */
  lockedValueUntil: number | null;
}

export type ListingDecision =
  | { action: 'keep'; until: number; reason: string }
  | { action: 'reprice'; priceCents: Cents; reason: string }
  | { action: 'delist_and_sell_back'; reason: string };

/** When the listing should give up and sell back, given the value lock. */
export function sellBackDeadline(listing: ListingView, strategy: Strategy, now: number): number {
  const maxEnd = listing.listedAt + strategy.sell.list.max_days * DAY_MS;
  const lockEnd = listing.lockedValueUntil;
  if (lockEnd === null || now >= lockEnd) return maxEnd;
  if (listing.marketValueCents < listing.basisValueCents)
    return Math.min(maxEnd, lockEnd - strategy.sell.list.lock_margin_minutes * MINUTE_MS);
  if (listing.marketValueCents > listing.basisValueCents) return Math.max(maxEnd, lockEnd);
  return maxEnd;
}

export function decideListing(listing: ListingView, strategy: Strategy, now: number): ListingDecision {
  const list = strategy.sell.list;
  const deadline = sellBackDeadline(listing, strategy, now);
  if (now >= deadline) {
    const locked = listing.lockedValueUntil !== null && now < listing.lockedValueUntil;
    const why =
      locked && listing.marketValueCents < listing.basisValueCents
        ? 'market fell below the locked basis; selling back before the lock ends'
        : `listed ${list.max_days} days without selling`;
    return { action: 'delist_and_sell_back', reason: why };
  }

  // The markup steps down every reprice_every_hours since listing, never below min_markup.
  const period = list.reprice_every_hours * HOUR_MS;
  const steps = Math.max(0, Math.floor((now - listing.listedAt) / period));
  const markup = Math.max(Math.min(list.min_markup, list.markup), list.markup - steps * list.markup_step);
  const target = listingPriceCents(listing.marketValueCents, markup, strategy);
  if (target === null)
    return { action: 'delist_and_sell_back', reason: 'market value too low to stay listed' };
  const cap = 2 * listing.marketValueCents;
  if (listing.priceCents > cap)
    return { action: 'reprice', priceCents: target, reason: 'price above 2 x the current market value' };
  // Ignore moves under 1% so that market noise does not churn the listing.
  if (Math.abs(target - listing.priceCents) >= Math.max(1, listing.priceCents * 0.01))
    return {
      action: 'reprice',
      priceCents: target,
      reason: `markup ${fixed(markup, 2)} after ${steps} step(s)`,
    };
  const nextStep = listing.listedAt + (steps + 1) * period;
  return { action: 'keep', until: Math.min(nextStep, deadline), reason: 'listing within its plan' };
}
