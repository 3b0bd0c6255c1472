/**
 * A listing's whole life, priced once per strategy: from the listing of a fresh pull to its sale
 * or its delisting with sell-back, as `decideListing` runs it (the markup stepping down, the
 * sell-back deadline moving with the market's side of the locked value: a listing above it stays
 * up until the lock ends), buyers arriving at the fill model's hazard on every hourly tick, and
 * the card's value drifting (`sell.list.value_drift`) on the same tick — what the simulator and
 * the dynamic backtest do. The price follows the value only where decideListing reprices: past
 * the reprice band, and at each markup step. Every rule is proportional to the card's value
 * (price = markup × value, sell-back = rate × value), so the answer is a few ratios that hold for
 * any card worth well above the marketplace minimum: a lattice over the log value and the price
 * (life-lattice.ts), stepped tick by tick, gives them to within the lattice's resolution.
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../core/clock.js';
import { AFTER_LOCK_MS } from './decide-listing.js';
import { LifeLattice, walkOf } from './life-lattice.js';
import { fillProbability } from './listing-model.js';
import {
  fillRatePerDay,
  lockEnds,
  SPEC_SELL_BACK_RULES,
  fillProbability as tickFillProbability,
  valueStep,
} from './market-laws.js';
import { SellListCache } from './sell-list-cache.js';
import type { FillModel, Strategy } from './strategy-schema.js';

export interface ListingLife {
  /** Probability the listing sells before it is delisted. */
  fill: number;
  /** Expected sale, net of the seller fee, given it sells: a multiple of the value at listing. */
  saleYield: number;
  /** Expected sell-back given it does not sell: a multiple of the value at listing. */
  fallbackYield: number;
  /** fill × saleYield + (1 − fill) × fallbackYield. */
  expectedYield: number;
  /** Expected days from listing to the sale or the sell-back. */
  meanDays: number;
}

/** The simulator's step of value drift and listing fills (world `dynamics.tick_seconds` default). */
const TICK_MS = HOUR_MS;
/** Where the listing falls between two ticks: half-way on average (purchases are not on the tick). */
const TICK_PHASE = 0.5;
/** Value at listing (cents) of the card the lattice prices: large, so cent rounding is noise. */
const BASIS_CENTS = 10_000_000;
/** End of the value lock of a card acquired at 0 (the spec's 7 days). */
const LOCK_END = lockEnds(0, SPEC_SELL_BACK_RULES);

/** Lock bases are priced on a grid of this share of the value, linearly in between. */
const BASIS_STEP = 0.02;

/** Lives by basis grid point, per listing setting; each computed on first use. */
const lives = new SellListCache<{ listOnly: Strategy; byBasis: Map<number, ListingLife> }>((listOnly) => ({
  listOnly,
  byBasis: new Map(),
}));

/**
 * The listing life of a strategy, for a card whose sell-back offer is locked to `basisRatio` ×
 * its value at listing for the 7-day lock: 1 for a pull (value at pull), min(price paid, value) /
 * value for a bought card (spec, card purchase). Computed once per listing setting and basis.
 */
export function listingLife(strategy: Strategy, basisRatio = 1): ListingLife {
  const x = Math.min(1, Math.max(BASIS_STEP, basisRatio)) / BASIS_STEP;
  const k = Math.floor(x + 1e-9);
  const w = x - k;
  const lo = lifeAt(strategy, k);
  if (w < 1e-9) return lo;
  const hi = lifeAt(strategy, k + 1);
  const mix = (a: number, b: number) => a + w * (b - a);
  const fill = mix(lo.fill, hi.fill);
  const sale = mix(lo.fill * lo.saleYield, hi.fill * hi.saleYield);
  const fallback = mix((1 - lo.fill) * lo.fallbackYield, (1 - hi.fill) * hi.fallbackYield);
  return {
    fill,
    saleYield: fill > 0 ? sale / fill : lo.saleYield,
    fallbackYield: fill < 1 ? fallback / (1 - fill) : lo.fallbackYield,
    expectedYield: sale + fallback,
    meanDays: mix(lo.meanDays, hi.meanDays),
  };
}

/** The life at basis k · BASIS_STEP, computed once per listing setting and grid point. */
function lifeAt(strategy: Strategy, k: number): ListingLife {
  const { listOnly, byBasis } = lives.get(strategy);
  let life = byBasis.get(k);
  if (!life) {
    life = computeLife(listOnly, k * BASIS_STEP);
    byBasis.set(k, life);
  }
  return life;
}

/**
 * Buyers per day for a listing at `ratio` × market value. The hazard model is a rate; the
 * logistic and piecewise models give P(sold within max_days), read as a constant hazard over
 * `max_days` (−ln(1 − P) / max_days) so that a listing that lives longer or shorter sells more or
 * less accordingly.
 */
export function hazardPerDay(model: FillModel, ratio: number, maxDays: number): number {
  if (model.model === 'hazard')
    return fillRatePerDay(ratio, 1, model.fills_per_day_at_value, model.price_sensitivity);
  const p = Math.min(fillProbability(ratio * BASIS_CENTS, BASIS_CENTS, model, maxDays), 1 - 1e-12);
  return p > 0 ? -Math.log(1 - p) / maxDays : 0;
}

interface LifeEvent {
  at: number;
  tick: boolean;
}

/** Ticks, and the instants where decideListing's answer can change without a value move. */
function events(strategy: Strategy, horizon: number): LifeEvent[] {
  const list = strategy.sell.list;
  const out: LifeEvent[] = [{ at: 0, tick: false }];
  for (let k = 0; (k + TICK_PHASE) * TICK_MS <= horizon; k++)
    out.push({ at: (k + TICK_PHASE) * TICK_MS, tick: true });
  const period = list.reprice_every_hours * HOUR_MS;
  for (let n = 1; n * period <= horizon; n++) out.push({ at: n * period, tick: false });
  const maxEnd = list.max_days * DAY_MS;
  for (const at of [maxEnd, LOCK_END - list.lock_margin_minutes * MINUTE_MS, LOCK_END + AFTER_LOCK_MS])
    if (at > 0 && at <= horizon) out.push({ at, tick: false });
  // A tick and a decision at the same instant: the tick (fills at the new value) comes first.
  return out.sort((a, b) => a.at - b.at || Number(b.tick) - Number(a.tick));
}

/**
 * Cumulative outcome of a listing's life at an instant (each a multiple of the value at listing):
 * mass sold and ended (delisted and sold back) so far, with the first and second moments of what
 * they paid. What `listing-curve.ts` needs to say what a listing still running is worth.
 */
export interface LifeSoFar {
  at: number;
  sold: number;
  sale1: number;
  sale2: number;
  ended: number;
  fallback1: number;
  fallback2: number;
}

/**
 * The lattice of one life (basis `basisRatio` × the value at listing, life-lattice.ts);
 * `record`, when given, is told the cumulative outcome after every event (ticks and decision
 * instants), in time order.
 */
export function computeLife(
  strategy: Strategy,
  basisRatio: number,
  record?: (so: LifeSoFar) => void,
): ListingLife {
  const list = strategy.sell.list;
  const { daily_volatility: vol, daily_trend: trend } = list.value_drift;
  const dtDays = TICK_MS / DAY_MS;
  const { drift, scale: sd } = valueStep(trend, vol, dtDays);
  // Every listing has ended by then: past the lock the deadline is listing + max_days, and
  // inside it no later than the lock's end (decide-listing.ts, deadlineOnSide).
  const horizon = Math.max(list.max_days * DAY_MS, LOCK_END + AFTER_LOCK_MS) + TICK_MS;
  const life = new LifeLattice({
    strategy,
    walk: walkOf(drift, sd, Math.ceil(horizon / TICK_MS) + 1),
    basisCents: BASIS_CENTS,
    lockBasisCents: Math.round(BASIS_CENTS * basisRatio),
    lockEnd: LOCK_END,
    // A basis below the value is a bought card's (min(price paid, value)): its lock pays the
    // purchased-card rate, and it has no fresh window.
    kind: basisRatio < 1 ? 'purchase' : 'pull',
    horizon,
    fillOnTick: (ratio) => tickFillProbability(hazardPerDay(list.fill, ratio, list.max_days), dtDays),
  });
  const soFar = (at: number): LifeSoFar => ({
    at,
    sold: life.sold,
    sale1: life.sale,
    sale2: life.sale2,
    ended: life.ended,
    fallback1: life.fallback,
    fallback2: life.fallback2,
  });
  for (const e of events(strategy, horizon)) {
    if (e.tick) life.tick(e.at);
    life.decide(e.at);
    record?.(soFar(e.at));
  }
  // Nothing should be left (every deadline is inside the horizon): sold back if it is.
  life.finish(horizon);
  record?.(soFar(horizon));
  const fee = list.seller_fee_rate;
  return {
    fill: life.sold,
    saleYield: life.sold > 0 ? life.sale / life.sold : list.markup * (1 - fee),
    fallbackYield: life.ended > 0 ? life.fallback / life.ended : SPEC_SELL_BACK_RULES.market_rate,
    expectedYield: life.sale + life.fallback,
    meanDays: life.days,
  };
}
