/**
 * The sell policy applied to one pull value: the single rule shared by the scorer (which values
 * every atom of a distribution with it) and `decidePull` (which acts on a real pull), so what is
 * scored is exactly what is done.
 */
import { type Cents, toCents } from '../core/money.js';
import { fastRate, fastRound } from './cents.js';
import { listingLife } from './listing-life.js';
import { FRESH_RATE, minListingCents, priceWithinRules } from './listing-model.js';
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
      /** Probability the listing sells before it is delisted (listing-life.ts). */
      fill: number;
      /** Expected pay when it sells (after the seller fee, repricing and value drift included). */
      saleCents: Cents;
      /** Expected pay when it does not: delisted and sold back at 0.8 (of the locked value or the market's). */
      fallbackCents: Cents;
      /** fill × sale + (1 − fill) × fallback. */
      expectedCents: number;
    };

/** Allocation-free result of `PullPolicy.evaluate`, reused across atoms by the scorer. */
export interface PlanScratch {
  list: boolean;
  reason: 'below_threshold' | 'not_listable' | 'listing_not_better' | null;
  payoutCents: number;
  priceCents: number;
  fill: number;
  saleCents: number;
  fallbackCents: number;
  expectedCents: number;
}

export const newScratch = (): PlanScratch => ({
  list: false,
  reason: null,
  payoutCents: 0,
  priceCents: 0,
  fill: 0,
  saleCents: 0,
  fallbackCents: 0,
  expectedCents: 0,
});

export interface PullPolicy {
  /** @param sellBackRate the rate selling back would pay right now (0.9 inside the fresh window). */
  plan(valueCents: number, sellBackRate?: number): PullPlan;
  /** Same decision written into `out` (the scorer's hot loop). */
  evaluate(valueCents: number, sellBackRate: number, out: PlanScratch): PlanScratch;
}

/** The policy with the strategy's constants converted once (the scorer calls it per atom). */
export function compilePolicy(strategy: Strategy): PullPolicy {
  const list = strategy.sell.list;
  const threshold = toCents(strategy.sell.threshold_usd);
  const floor = minListingCents(strategy);
  const life = listingLife(strategy);
  const evaluate = (valueCents: number, sellBackRate: number, out: PlanScratch): PlanScratch => {
    const payoutCents = fastRate(valueCents, sellBackRate);
    out.payoutCents = payoutCents;
    out.list = false;
    out.expectedCents = payoutCents;
    if (valueCents < threshold) {
      out.reason = 'below_threshold';
      return out;
    }
    const priceCents = priceWithinRules(valueCents, list.markup, floor);
    if (priceCents === null) {
      out.reason = 'not_listable';
      return out;
    }
    const fill = life.fill;
    const saleCents = fastRound(valueCents * life.saleYield);
    const fallbackCents = fastRound(valueCents * life.fallbackYield);
    const expectedCents = fill * saleCents + (1 - fill) * fallbackCents;
    if (list.only_when_better && expectedCents <= payoutCents) {
      out.reason = 'listing_not_better';
      return out;
    }
    out.list = true;
    out.reason = null;
    out.priceCents = priceCents;
    out.fill = fill;
    out.saleCents = saleCents;
    out.fallbackCents = fallbackCents;
    out.expectedCents = expectedCents;
    return out;
  };
  return {
    evaluate,
    plan(valueCents, sellBackRate = FRESH_RATE) {
      const r = evaluate(valueCents, sellBackRate, newScratch());
      if (!r.list) return { action: 'sell_back', reason: r.reason!, payoutCents: r.payoutCents };
      const { priceCents, fill, saleCents, fallbackCents, expectedCents } = r;
      return { action: 'list', priceCents, fill, saleCents, fallbackCents, expectedCents };
    },
  };
}

/** One-off form of `compilePolicy(strategy).plan(...)`. */
export function planForValue(valueCents: number, strategy: Strategy, sellBackRate = FRESH_RATE): PullPlan {
  return compilePolicy(strategy).plan(valueCents, sellBackRate);
}

/** A sealed pack cannot be sold back: it is worth the strategy's fraction of its value. */
export function sealedValueCents(valueCents: number, strategy: Strategy): number {
  return valueCents * strategy.sell.sealed_value_fraction;
}
