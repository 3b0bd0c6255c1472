/**
 * A listing's whole life, priced once per strategy: from the listing of a fresh pull to its sale
 * or its delisting with sell-back, as `decideListing` runs it (the markup stepping down, the
 * sell-back deadline moving with the market's side of the locked value: a listing above it stays
 * up until the lock ends), buyers arriving at the fill model's hazard on every hourly tick, and
 * the card's value drifting (`sell.list.value_drift`) on the same tick — what the simulator and
 * the dynamic backtest do. Every rule is proportional to the card's value (price = markup ×
 * value, sell-back = rate × value), so the answer is a few ratios that hold for any card worth
 * well above the marketplace minimum: a trinomial lattice over the log value, stepped tick by
 * tick, gives them to within the lattice's resolution.
 */
import { LATE_RATE, VALUE_LOCK_MS } from '../api/rules.js';
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../core/clock.js';
import { AFTER_LOCK_MS, decideListing, type ListingView } from './decide-listing.js';
import { fillProbability } from './listing-model.js';
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
/** The lattice spans this many standard deviations of the log value at the horizon. */
const SPREAD_SD = 8;
/** Mass below which a lattice node is taken as empty. */
const EMPTY = 1e-14;

const lives = new WeakMap<Strategy, ListingLife>();

/** The listing life of a strategy (computed once per strategy object). */
export function listingLife(strategy: Strategy): ListingLife {
  let life = lives.get(strategy);
  if (!life) {
    life = computeLife(strategy);
    lives.set(strategy, life);
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
    return model.fills_per_day_at_value * Math.exp(-model.price_sensitivity * (ratio - 1));
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
  for (const at of [
    maxEnd,
    VALUE_LOCK_MS - list.lock_margin_minutes * MINUTE_MS,
    VALUE_LOCK_MS + AFTER_LOCK_MS,
  ])
    if (at > 0 && at <= horizon) out.push({ at, tick: false });
  // A tick and a decision at the same instant: the tick (fills at the new value) comes first.
  return out.sort((a, b) => a.at - b.at || Number(b.tick) - Number(a.tick));
}

function computeLife(strategy: Strategy): ListingLife {
  const list = strategy.sell.list;
  const { daily_volatility: vol, daily_trend: trend } = list.value_drift;
  const dtDays = TICK_MS / DAY_MS;
  const sd = vol * Math.sqrt(dtDays);
  const drift = (trend - (vol * vol) / 2) * dtDays;
  // Every listing has ended by then: past the lock the deadline is listing + max_days, and
  // inside it no later than the lock's end (decide-listing.ts, deadlineOnSide).
  const horizon = Math.max(list.max_days * DAY_MS, VALUE_LOCK_MS + AFTER_LOCK_MS) + TICK_MS;
  const ticks = Math.ceil(horizon / TICK_MS) + 1;
  // Trinomial steps of ±h with probability 1/6 each have variance sd²: h = sd·√3.
  const h = sd * Math.sqrt(3);
  const half = sd > 0 ? Math.ceil(SPREAD_SD * Math.sqrt(ticks / 3)) + 1 : 0;
  const n = 2 * half + 1;
  let mass = new Float64Array(n);
  let next = new Float64Array(n);
  mass[half] = 1;
  /** Price / value of each node's listing, as its last decision set it. */
  const ratio = new Float64Array(n).fill(list.markup);
  let center = 0; // log value of node `half` (moves with the drift)
  const fee = list.seller_fee_rate;
  let sold = 0;
  let sale = 0;
  let ended = 0;
  let fallback = 0;
  let days = 0;
  const view: ListingView = {
    priceCents: 0,
    listedAt: 0,
    marketValueCents: BASIS_CENTS,
    basisValueCents: BASIS_CENTS,
    lockedValueUntil: VALUE_LOCK_MS,
  };

  for (const e of events(strategy, horizon)) {
    if (e.tick) {
      if (sd > 0) {
        const p = 1 / 6;
        for (let j = 0; j < n; j++) {
          const m = mass[j]!;
          // Reflecting edges: mass that would leave the lattice (beyond SPREAD_SD) stays put.
          const up = j + 1 < n ? j + 1 : j;
          const down = j > 0 ? j - 1 : j;
          next[j] = next[j]! + (1 - 2 * p) * m;
          next[up] = next[up]! + p * m;
          next[down] = next[down]! + p * m;
        }
        [mass, next] = [next, mass];
        next.fill(0);
      }
      center += drift;
      for (let j = 0; j < n; j++) {
        const m = mass[j]!;
        if (m < EMPTY) continue;
        const r = ratio[j]!;
        const q = 1 - Math.exp(-hazardPerDay(list.fill, r, list.max_days) * dtDays);
        const s = m * q;
        sold += s;
        sale += s * r * (1 - fee) * Math.exp(center + (j - half) * h);
        days += (s * e.at) / DAY_MS;
        mass[j] = m - s;
      }
    }
    let kept = Number.NaN;
    for (let j = 0; j < n; j++) {
      const m = mass[j]!;
      if (m < EMPTY) continue;
      const value = Math.round(BASIS_CENTS * Math.exp(center + (j - half) * h));
      view.marketValueCents = value;
      // The listing follows the value (decideListing reprices it whenever the target moves 1%).
      view.priceCents = 1;
      let d = decideListing(view, strategy, e.at);
      if (d.action === 'reprice') {
        view.priceCents = d.priceCents;
        d = decideListing(view, strategy, e.at);
      }
      if (d.action === 'delist_and_sell_back') {
        const locked = e.at <= VALUE_LOCK_MS;
        ended += m;
        fallback += (m * LATE_RATE * (locked ? BASIS_CENTS : value)) / BASIS_CENTS;
        days += (m * e.at) / DAY_MS;
        mass[j] = 0;
      } else {
        ratio[j] = view.priceCents / value;
        kept = ratio[j]!;
      }
    }
    // Nodes the value has not reached yet take the price the others were just given.
    if (!Number.isNaN(kept)) for (let j = 0; j < n; j++) if (mass[j]! < EMPTY) ratio[j] = kept;
  }
  // Nothing should be left (every deadline is inside the horizon): sold back at 0.8 if it is.
  for (let j = 0; j < n; j++) {
    const m = mass[j]!;
    if (m <= 0) continue;
    ended += m;
    fallback += m * LATE_RATE * Math.exp(center + (j - half) * h);
    days += (m * horizon) / DAY_MS;
  }
  return {
    fill: sold,
    saleYield: sold > 0 ? sale / sold : list.markup * (1 - fee),
    fallbackYield: ended > 0 ? fallback / ended : LATE_RATE,
    expectedYield: sale + fallback,
    meanDays: days,
  };
}
