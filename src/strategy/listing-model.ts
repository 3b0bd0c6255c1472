/**
 * The marketplace as the strategy sees it: the price a card is listed at, and the probability
 * that a listing at that price sells within `max_days`. The spec sets the rules (at most 2 × market
 * value, above an unpublished minimum); the fill model is our assumption, a strategy parameter.
 */
import { MAX_LISTING_MULTIPLE } from '../api/rules.js';
import { type Cents, toCents } from '../core/money.js';
import { fastRound } from './cents.js';
import { fillRatePerDay, fillProbability as fillWithin } from './market-laws.js';
import type { FillModel, Strategy } from './strategy-schema.js';

/** Sell-back rates of the spec (src/api/rules.ts): 0.9 within 5 minutes of the pull, 0.8 afterwards. */
export { FRESH_RATE, LATE_RATE } from '../api/rules.js';

/**
 * `markup × market value` rounded to the cent, capped at 2 × market value and kept strictly above
 * the marketplace minimum; null when no price satisfies both (the card is too cheap to list).
 */
export function listingPriceCents(marketCents: number, markup: number, strategy: Strategy): Cents | null {
  return priceWithinRules(marketCents, markup, minListingCents(strategy));
}

/** The lowest price the marketplace accepts: strictly above its minimum. */
export const minListingCents = (strategy: Strategy): Cents => toCents(strategy.sell.list.min_price_usd) + 1;

export function priceWithinRules(marketCents: number, markup: number, floorCents: Cents): Cents | null {
  const cap = Math.floor(MAX_LISTING_MULTIPLE * marketCents + 1e-9);
  if (cap < floorCents) return null;
  return Math.max(floorCents, Math.min(fastRound(markup * marketCents), cap));
}

/** P(a listing at `priceCents` sells within `horizonDays`), per the strategy's fill model. */
export function fillProbability(
  priceCents: number,
  marketCents: number,
  model: FillModel,
  horizonDays: number,
): number {
  if (!(marketCents > 0)) return 0;
  const r = priceCents / marketCents;
  if (model.model === 'hazard')
    return fillWithin(
      fillRatePerDay(priceCents, marketCents, model.fills_per_day_at_value, model.price_sensitivity),
      horizonDays,
    );
  if (model.model === 'logistic')
    return model.max_fill / (1 + Math.exp(model.steepness * (r - model.midpoint)));
  const pts = model.points;
  const first = pts[0]!;
  if (r <= first[0]) return first[1];
  for (let i = 1; i < pts.length; i++) {
    const [x1, y1] = pts[i]!;
    if (r <= x1) {
      const [x0, y0] = pts[i - 1]!;
      return y0 + ((y1 - y0) * (r - x0)) / (x1 - x0);
    }
  }
  return pts[pts.length - 1]![1];
}
