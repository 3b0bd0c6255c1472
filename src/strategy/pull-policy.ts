/**
 * The sell policy applied to one pull value: the single rule shared by the scorer (which values
 * every atom of a distribution with it) and `decidePull` (which acts on a real pull), so what is
 * scored is exactly what is done.
 */
import { applyRate, type Cents, toCents } from '../core/money.js';
import { FRESH_RATE, fillProbability, LATE_RATE, listingPriceCents, netOfFeeCents } from './listing-model.js';
import type { Strategy } from './strategy-schema.js';

export type PullPlan =
  | {
      action: 'sell_back';
      reason: 'below_threshold' | 'not_listable' | 'listing_not_better';
      payoutCents: Cents;
    }
  | {
      action: 'list';
      priceCents: Cents;
      /** Probability the listing sells within max_days. */
      fill: number;
      /** Paid when it sells (after the seller fee). */
      saleCents: Cents;
      /** Paid when it does not: delisted and sold back at 0.8. */
      fallbackCents: Cents;
      /** fill × sale + (1 − fill) × fallback. */
      expectedCents: number;
    };

/**
 * @param sellBackRate the rate selling back would pay right now (0.9 inside the fresh window).
 */
export function planForValue(valueCents: number, strategy: Strategy, sellBackRate = FRESH_RATE): PullPlan {
  const payoutCents = applyRate(valueCents, sellBackRate);
  if (valueCents < toCents(strategy.sell.threshold_usd))
    return { action: 'sell_back', reason: 'below_threshold', payoutCents };
  const list = strategy.sell.list;
  const priceCents = listingPriceCents(valueCents, list.markup, strategy);
  if (priceCents === null) return { action: 'sell_back', reason: 'not_listable', payoutCents };
  const fill = fillProbability(priceCents, valueCents, list.fill, list.max_days);
  const saleCents = netOfFeeCents(priceCents, strategy);
  const fallbackCents = applyRate(valueCents, LATE_RATE);
  const expectedCents = fill * saleCents + (1 - fill) * fallbackCents;
  if (list.only_when_better && expectedCents <= payoutCents)
    return { action: 'sell_back', reason: 'listing_not_better', payoutCents };
  return { action: 'list', priceCents, fill, saleCents, fallbackCents, expectedCents };
}

/** A sealed pack cannot be sold back: it is worth the strategy's fraction of its value. */
export function sealedValueCents(valueCents: number, strategy: Strategy): number {
  return valueCents * strategy.sell.sealed_value_fraction;
}
