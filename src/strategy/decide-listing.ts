/**
 * What to do with a card already listed: keep it, reprice it, or delist it and sell it back.
 * The timing is lock-aware: while the sell-back offer is based on the value locked at acquisition
 * (`locked_value_until`), a market below that basis makes the lock worth using before it ends,
 * and a market above it makes the end of the lock worth waiting for.
 */

import { MAX_LISTING_MULTIPLE } from '../api/rules.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../core/clock.js';
import type { Cents } from '../core/money.js';
import { fixed } from './cents.js';
import { listingPriceCents, minListingCents, priceWithinRules } from './listing-model.js';
import type { Strategy } from './strategy-schema.js';

export interface ListingView {
  priceCents: Cents;
  /** When the card was listed (ms). */
  listedAt: number;
  /**
   * When the listing's price was set (ms): its listing, or its last reprice. A markup step taken
   * since then reprices the listing whatever the band (see `keepTolerance`).
   */
  pricedAt: number;
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

/**
 * How long after the lock's end a listing that waited for it is sold back: the offer is the
 * locked one up to and including `locked_value_until` (spec), so selling at that instant would
 * forgo the market value the wait was for; a minute also covers a small clock difference.
 */
export const AFTER_LOCK_MS = MINUTE_MS;

/** When the listing should give up and sell back, given the value lock. */
export function sellBackDeadline(listing: ListingView, strategy: Strategy, now: number): number {
  return deadlineOnSide(
    listing,
    strategy,
    now,
    Math.sign(listing.marketValueCents - listing.basisValueCents),
  );
}

/** `sellBackDeadline` for a market value below (−1), at (0) or above (+1) the locked basis. */
function deadlineOnSide(listing: ListingView, strategy: Strategy, now: number, side: number): number {
  const maxEnd = listing.listedAt + strategy.sell.list.max_days * DAY_MS;
  const lockEnd = listing.lockedValueUntil;
  if (lockEnd === null) return maxEnd;
  const over = lockEnd + AFTER_LOCK_MS;
  if (now >= over) return maxEnd;
  if (side < 0) return Math.min(maxEnd, lockEnd - strategy.sell.list.lock_margin_minutes * MINUTE_MS);
  if (side > 0) return Math.max(maxEnd, over);
  return maxEnd;
}

/** Whole repricing periods since listing (the markup steps down once per period). */
function stepsAt(listedAt: number, period: number, now: number): number {
  return Math.max(0, Math.floor((now - listedAt) / period));
}

/** The markup after `steps` repricing steps: down by markup_step each, never below min_markup. */
export function markupAfter(steps: number, strategy: Strategy): number {
  const list = strategy.sell.list;
  return Math.max(markupFloor(strategy), list.markup - steps * list.markup_step);
}

/** The lowest markup repricing steps down to. */
function markupFloor(strategy: Strategy): number {
  return Math.min(strategy.sell.list.min_markup, strategy.sell.list.markup);
}

/** The reprice reasons of a strategy, by step and cause: the same few strings, built once. */
const repriceReasons = new WeakMap<Strategy, string[]>();
function repriceReason(strategy: Strategy, steps: number, markup: number, stepped: boolean): string {
  let cache = repriceReasons.get(strategy);
  if (!cache) {
    cache = [];
    repriceReasons.set(strategy, cache);
  }
  // Steps are bounded by a listing's life over the repricing period: a short array.
  const key = 2 * steps + (stepped ? 1 : 0);
  let reason = cache[key];
  if (reason === undefined) {
    const at = `markup ${fixed(markup, 2)} after ${steps} step(s)`;
    const band = fixed(strategy.sell.list.reprice_band * 100, 1);
    reason = stepped ? at : `${at}: target moved more than ${band}% from the price`;
    cache[key] = reason;
  }
  return reason;
}

/**
 * Whether a markup step has been taken since the listing's price was set: then the listing is
 * repriced to the stepped-down markup even when that moves its price by less than the band (a
 * band wider than a step would otherwise skip steps, and the schedule is the strategy's plan).
 */
function steppedSincePriced(
  listing: ListingView,
  strategy: Strategy,
  period: number,
  markup: number,
): boolean {
  return markupAfter(stepsAt(listing.listedAt, period, listing.pricedAt), strategy) > markup;
}

/**
 * How far (cents) the target may be from the listed price before the listing is repriced: the
 * band's share of the price, so that small value moves do not delist and relist it (each reprice
 * is two writes and may cost the listing its place); none right after a markup step.
 */
function keepTolerance(priceCents: number, strategy: Strategy, stepped: boolean): number {
  return stepped ? 0 : strategy.sell.list.reprice_band * priceCents;
}

/** Whether a listing at `priceCents` stays as it is at market value `marketCents` (no reprice, not too cheap). */
function priceHolds(
  priceCents: number,
  marketCents: number,
  markup: number,
  floorCents: Cents,
  tolerance: number,
): boolean {
  const target = priceWithinRules(marketCents, markup, floorCents);
  return (
    target !== null &&
    priceCents <= MAX_LISTING_MULTIPLE * marketCents &&
    Math.abs(target - priceCents) <= tolerance
  );
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

  const period = list.reprice_every_hours * HOUR_MS;
  const steps = stepsAt(listing.listedAt, period, now);
  const markup = markupAfter(steps, strategy);
  const target = listingPriceCents(listing.marketValueCents, markup, strategy);
  if (target === null)
    return { action: 'delist_and_sell_back', reason: 'market value too low to stay listed' };
  const cap = 2 * listing.marketValueCents;
  if (listing.priceCents > cap)
    return { action: 'reprice', priceCents: target, reason: 'price above 2 x the current market value' };
  const stepped = steppedSincePriced(listing, strategy, period, markup);
  if (Math.abs(target - listing.priceCents) > keepTolerance(listing.priceCents, strategy, stepped))
    return { action: 'reprice', priceCents: target, reason: repriceReason(strategy, steps, markup, stepped) };
  const nextStep = listing.listedAt + (steps + 1) * period;
  return { action: 'keep', until: Math.min(nextStep, deadline), reason: 'listing within its plan' };
}

/** One step of a listing's repricing plan: when its markup steps down, and to what. */
export interface RepriceStep {
  at: number;
  markup: number;
  /** The price at that markup for the listing's market value; null when it could not stay listed. */
  priceCents: Cents | null;
}

/**
 * The repricing steps still ahead of a listing at `now` (at most `limit`), as `decideListing` will
 * take them if the market value stays where it is: one per period until the markup reaches its
 * floor or the sell-back deadline comes.
 */
export function repriceSchedule(
  listing: ListingView,
  strategy: Strategy,
  now: number,
  limit = 50,
): RepriceStep[] {
  const list = strategy.sell.list;
  const deadline = sellBackDeadline(listing, strategy, now);
  const period = list.reprice_every_hours * HOUR_MS;
  const floor = markupFloor(strategy);
  const out: RepriceStep[] = [];
  for (let k = 1; k <= limit; k++) {
    const at = listing.listedAt + k * period;
    if (at >= deadline) break;
    const markup = markupAfter(k, strategy);
    if (at > now)
      out.push({ at, markup, priceCents: listingPriceCents(listing.marketValueCents, markup, strategy) });
    if (markup === floor) break;
  }
  return out;
}

/** Market values (cents, inclusive) over which a kept listing stays kept, and until when. */
export interface KeepRange {
  lo: number;
  hi: number;
  until: number;
}

/**
 * Where `decideListing` keeps this listing: false when it would not keep it at `now`; otherwise
 * true, with `out` set to the market values [lo, hi] (containing the listing's) at which it
 * keeps it at any time from `now` to `until`: the next repricing step that lowers the markup,
 * or the sell-back deadline (decideListing's own `until` stops at every step, even once the
 * markup has settled at its floor). A backtest then needs a decision only when the value leaves
 * the range or `until` comes, not at every move of the market (the answer is the same). The
 * deadline depends on the value's side of the locked basis (below, at, above): the range spans
 * the sides whose `until` is the same; within a side every condition of a keep is monotone in
 * the value, so the range is an interval. Exact: just outside it, a value is not kept or is kept
 * until another time. Hot in backtests: no allocation.
 */
export function keepRange(listing: ListingView, strategy: Strategy, now: number, out: KeepRange): boolean {
  const basis = listing.basisValueCents;
  const v = listing.marketValueCents;
  const side = Math.sign(v - basis);
  const deadline = deadlineOnSide(listing, strategy, now, side);
  if (now >= deadline) return false;
  const period = strategy.sell.list.reprice_every_hours * HOUR_MS;
  const steps = stepsAt(listing.listedAt, period, now);
  const markup = markupAfter(steps, strategy);
  const floor = minListingCents(strategy);
  const price = listing.priceCents;
  // Constant until `until`: the steps since the price was set change only at the next step.
  const tol = keepTolerance(price, strategy, steppedSincePriced(listing, strategy, period, markup));
  if (!priceHolds(price, v, markup, floor, tol)) return false;
  // Once the markup has reached its floor (or never steps), the next repricing steps change
  // nothing: decideListing keeps at each of them, so the answer can only change at the deadline.
  const list = strategy.sell.list;
  const settled = list.markup_step === 0 || markup === Math.min(list.min_markup, list.markup);
  const nextStep = settled ? Number.POSITIVE_INFINITY : listing.listedAt + (steps + 1) * period;
  const until = Math.min(nextStep, deadline);
  const atBasis = sameUntil(listing, strategy, now, 0, nextStep, until);
  let lo = 0;
  let hi = Number.MAX_SAFE_INTEGER;
  if (side > 0)
    lo = atBasis ? (sameUntil(listing, strategy, now, -1, nextStep, until) ? 0 : basis) : basis + 1;
  else if (side < 0)
    hi = atBasis ? (sameUntil(listing, strategy, now, 1, nextStep, until) ? hi : basis) : basis - 1;
  else {
    lo = sameUntil(listing, strategy, now, -1, nextStep, until) ? 0 : basis;
    hi = sameUntil(listing, strategy, now, 1, nextStep, until) ? hi : basis;
  }
  // Where the target price (≈ markup × value) leaves the band around the price, and where the
  // price passes 2 × value: first guesses, each within a cent or two of the edge.
  const loGuess = Math.max(Math.ceil((price - tol) / markup), Math.ceil(price / 2));
  const hiGuess = Math.floor((price + tol) / markup);
  out.lo = edge(v, -1, lo, loGuess, price, markup, floor, tol);
  out.hi = edge(v, 1, hi, hiGuess, price, markup, floor, tol);
  out.until = until;
  return true;
}

/** Whether a value on `side` of the basis is kept too, until the same time (its deadline not passed). */
function sameUntil(
  listing: ListingView,
  strategy: Strategy,
  now: number,
  side: number,
  nextStep: number,
  until: number,
): boolean {
  const d = deadlineOnSide(listing, strategy, now, side);
  return now < d && Math.min(nextStep, d) === until;
}

/**
 * The last value from `from` in direction `dir` (not past `limit`) where the price holds, given
 * that it holds at `from` and that where it holds is an interval: from a guess, galloping outward
 * while it holds, else bisecting back towards `from`.
 */
function edge(
  from: number,
  dir: 1 | -1,
  limit: number,
  guess: number,
  price: number,
  markup: number,
  floor: Cents,
  tol: number,
): number {
  let good = from;
  let bad = Number.NaN;
  const g = dir * (guess - limit) > 0 ? limit : guess;
  if (dir * (g - from) > 0) {
    if (priceHolds(price, g, markup, floor, tol)) good = g;
    else bad = g;
  }
  if (Number.isNaN(bad))
    for (let step = 1; ; step *= 2) {
      const x = good + dir * step;
      if (dir * (x - limit) > 0) {
        if (good === limit || priceHolds(price, limit, markup, floor, tol)) return limit;
        bad = limit;
        break;
      }
      if (!priceHolds(price, x, markup, floor, tol)) {
        bad = x;
        break;
      }
      good = x;
    }
  while (Math.abs(bad - good) > 1) {
    const mid = good + dir * Math.floor(Math.abs(bad - good) / 2);
    if (priceHolds(price, mid, markup, floor, tol)) good = mid;
    else bad = mid;
  }
  return good;
}
