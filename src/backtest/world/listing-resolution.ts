/**
 * A listing's whole life in the dynamic market, decided when it is listed: its card's value
 * follows its category's value index (value-drift.ts, drawn ahead), `decideListing` is asked where
 * its decision can change (`keepRange`), and the market's fill hazard is looked ahead tick by tick
 * to the sale (docs/backtest-engine.md). Also what a listed card is worth now and
 * what selling it back pays (equity marks listings at their sell-back value).
 */
import { DAY_MS } from '../../core/clock.js';
import { applyRate, roundHalfAway } from '../../core/money.js';
import type { Rng } from '../../core/prng.js';
import type { Dynamics, Rules } from '../../market/world-schema.js';
import { decideListing, type KeepRange, keepRange, type ListingView } from '../../strategy/decide-listing.js';
import { fillRatePerDay, freshEnds, lockEnds, sellBackAmount } from '../../strategy/market-laws.js';
import type { BacktestModel } from '../path/model.js';
import type { Listing } from '../path/path-market.js';
import { CATEGORY_SLOT, NO_CATEGORY, slotOf, type ValueDrift } from './value-drift.js';

/** Decisions tried at one look at a listing before giving up until the next tick. */
const DECISIONS_PER_LOOK = 4;

export class ListingResolver {
  /** Model pool index → its category's position in CATEGORY_SLOT (NO_CATEGORY: none). */
  private readonly poolCategory: Int32Array;
  /**
   * Scratch objects reused by every call (no allocation per listing): `resolve`'s keep range and
   * the listing as `decideListing` sees it.
   */
  private readonly keep: KeepRange = { lo: 0, hi: 0, until: 0 };
  private readonly listingView: ListingView = {
    priceCents: 0,
    listedAt: 0,
    pricedAt: 0,
    marketValueCents: 0,
    basisValueCents: 0,
    lockedValueUntil: 0,
  };

  constructor(
    private readonly model: BacktestModel,
    /** The API's money rules (seller fee, sell-back rates). */
    private readonly rules: Rules,
    /** The world's rates (the listing fill hazard). */
    private readonly dyn: Dynamics,
    private readonly drift: ValueDrift,
    /** The path's start (ms): tick k is at start + k · tickMs. */
    private readonly start: number,
    /** The world's tick (ms). */
    private readonly tickMs: number,
  ) {
    this.poolCategory = poolCategories(model);
  }

  /** Slot of listing l's category: its pool's, or a bought card's own. */
  private categoryOf(l: Listing): number {
    return l.bought ? slotOf(l.category) : this.poolCategory[l.pool]!;
  }

  /** The value index of listing l's category (1 for a category the world does not move). */
  indexOf(l: Listing): number {
    const c = this.categoryOf(l);
    return c === NO_CATEGORY ? 1 : this.drift.indexNow(c);
  }

  /** What listing l's card is worth now (its value at acquisition moved by its category's index). */
  valueNow(l: Listing): number {
    return roundHalfAway((acquiredValue(l) * this.indexOf(l)) / l.anchorIndex);
  }

  /**
   * A new listing's whole life, decided at once: its card's value follows its category's index
   * path (drawn ahead, independent of everything else), so every decision `decideListing` takes
   * on the way (the bot looks at its listings after each tick and at each decision's `until`) can
   * be taken now. Repricing changes nothing the path sees (equity counts a listing at its
   * sell-back value); only the end does: one event, the sale or the delisting with sell-back.
   */
  list(l: Listing, now: number, rng: Rng): void {
    l.anchorIndex = this.indexOf(l);
    // The simulator fills a listing at each tick with probability 1 − e^(−rate·dt): the same law
    // as selling at the first tick where Σ rate·dt reaches one exponential draw.
    l.fillBudget = rng.exponential(1);
    this.resolve(l, now);
  }

  /** Listing l's card value after tick k (tick 0: the start), as `valueNow` gives it then. */
  private valueAfterTick(l: Listing, c: number, k: number): number {
    return roundHalfAway(
      (acquiredValue(l) * (c === NO_CATEGORY ? 1 : this.drift.indexAt(k, c))) / l.anchorIndex,
    );
  }

  /**
   * From `from`, alternately: decide (`decideListing`; a reprice is applied and decided again),
   * then look ahead tick by tick to the first tick where the listing sells (the tick's fill, at
   * the value after its drift), or where its value leaves the range over which the decision
   * holds (`keepRange`), or to the decision's own `until`. Ends with the outcome, its time and
   * amount set. The same decisions as deciding at every tick (test/backtest/dynamic-listings).
   */
  private resolve(l: Listing, from: number): void {
    const strategy = this.model.strategy;
    const v = this.listingView;
    v.listedAt = l.listedAt;
    // Listed at its price when `list` resolves it; the reprices on the way are set below.
    v.pricedAt = l.listedAt;
    v.basisValueCents = l.basisCents;
    v.lockedValueUntil = lockEnds(l.pulledAt, this.rules);
    const keep = this.keep;
    const step = this.tickMs;
    const dtDays = step / DAY_MS;
    const base = this.dyn.listing_fills_per_day_at_value;
    const sensitivity = this.dyn.listing_price_sensitivity;
    const c = this.categoryOf(l);
    let now = from;
    // The last tick at or before `now`: the value the decision sees.
    let k = Math.floor((now - this.start) / step);
    for (let first = true; ; first = false) {
      v.priceCents = l.priceCents;
      v.marketValueCents = this.valueAfterTick(l, c, k);
      // Past the first decision the value left its range or `until` came: the decision changes
      // (or, rarely, keeps with another range), so decideListing is asked first.
      let kept = first && keepRange(v, strategy, now, keep);
      for (let i = 0; !kept && i < DECISIONS_PER_LOOK; i++) {
        const d = decideListing(v, strategy, now);
        if (d.action === 'delist_and_sell_back') {
          l.eventAt = now;
          l.outcome = 'sold_back';
          l.amountCents = this.holdValueAt(l, now, v.marketValueCents);
          return;
        }
        if (d.action === 'reprice') {
          l.priceCents = v.priceCents = d.priceCents;
          v.pricedAt = now;
        }
        kept = keepRange(v, strategy, now, keep);
      }
      if (!kept) {
        // Cannot happen (a reprice's price holds at once); decide again at the next tick anyway.
        keep.lo = keep.hi = v.marketValueCents;
        keep.until = this.start + (k + 1) * step;
      }
      // `valueAfterTick` tick by tick, its inputs in locals and the drawn indexes read in place.
      const price = l.priceCents;
      const acquired = acquiredValue(l);
      const anchor = l.anchorIndex;
      const { lo, hi, until } = keep;
      let indexes = this.drift.indexesOf(c === NO_CATEGORY ? 0 : c);
      let drawnTo = -1;
      let budget = l.fillBudget;
      for (k++; ; k++) {
        const at = this.start + k * step;
        if (at > until) {
          now = until;
          k--;
          break;
        }
        let index = 1;
        if (c !== NO_CATEGORY) {
          if (k > drawnTo) {
            this.drift.indexAt(k, c);
            indexes = this.drift.indexesOf(c);
            drawnTo = this.drift.drawnTo(c);
          }
          index = indexes[k]!;
        }
        const value = roundHalfAway((acquired * index) / anchor);
        budget -= fillRatePerDay(price, value, base, sensitivity) * dtDays;
        if (budget <= 0) {
          l.fillBudget = budget;
          l.eventAt = at;
          l.outcome = 'sold';
          l.amountCents = price - applyRate(price, this.rules.seller_fee_rate);
          return;
        }
        if (value < lo || value > hi) {
          now = at;
          break;
        }
      }
      l.fillBudget = budget;
    }
  }

  /**
   * Equity marks a listed card at what selling it back pays once the pull's fresh window is over
   * (the locked rate of its basis, then the market rate of its value), as the bot's budget marks
   * its holdings (src/bot/spending/budget-state.ts), even inside the fresh window.
   */
  holdValue(l: Listing, now: number): number {
    const past = Math.max(now, freshEnds(l.pulledAt, this.rules) + 1);
    return this.holdValueAt(l, past, this.valueNow(l));
  }

  /** What selling the card back pays at `at` when it is worth `valueCents` then (`sellBackAmount`). */
  private holdValueAt(l: Listing, at: number, valueCents: number): number {
    return sellBackAmount(
      l.bought ? 'purchase' : 'pull',
      l.pulledAt,
      l.basisCents,
      valueCents,
      at,
      this.rules,
    );
  }
}

const poolCategoryCache = new WeakMap<BacktestModel, Int32Array>();

/** Model pool index → its category's slot, built once per model (shared by its paths, never written). */
function poolCategories(model: BacktestModel): Int32Array {
  let slots = poolCategoryCache.get(model);
  if (!slots) {
    slots = Int32Array.from(model.pools, (p) => CATEGORY_SLOT.get(p.category) ?? NO_CATEGORY);
    poolCategoryCache.set(model, slots);
  }
  return slots;
}

/** A listed card's value when acquired: a pull's is its basis, a bought card's is recorded apart. */
function acquiredValue(l: Listing): number {
  return l.bought ? l.valueCents! : l.basisCents;
}
