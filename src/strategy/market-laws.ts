/**
 * The market's laws: what happens at one event of the world, as pure functions of numbers (no
 * state, no IO; randomness comes in as a uniform, a normal or an `Rng`). The one home of these
 * laws: the simulator (src/market/dynamics.ts, inventory.ts, buyback.ts, orders.ts), the
 * backtest's fast world (src/backtest/world/world-pools.ts, value-drift.ts, rescoring.ts,
 * listing-resolution.ts, shop.ts) and the scorer's listing life (src/strategy/listing-life.ts)
 * all call them, each over its own data layout, so they cannot drift apart
 * (test/strategy/market-laws-shared.test.ts checks that no file of src restates one). It sits in
 * the strategy layer, below the market, so that the scorer can use it too.
 *
 * Rates and rules come from the world file (`dynamics`, `rules`: src/market/world-schema.ts, whose
 * sell-back defaults are the spec's numbers in src/api/rules.ts); the choices the spec leaves open
 * are listed in docs/simulator.md.
 */
import { FRESH_RATE, FRESH_WINDOW_MS, LATE_RATE, VALUE_LOCK_DAYS } from '../api/rules.js';
import { DAY_MS, HOUR_MS } from '../core/clock.js';
import { applyRate, type Cents } from '../core/money.js';
import type { Rng } from '../core/prng.js';

/** `pickWeighted`/`pickByGap`'s answer when no entry has a positive weight. */
export const NO_CHOICE = -1;

// ---------------------------------------------------------------------------------------------
// Choice by weight (bands, packs)

/**
 * The entry chosen by a point `x` in [0, Σ weights): the first entry with a positive weight
 * whose running weight exceeds x (entries `from` … `from + n − 1`, answered as an offset from
 * `from`). When rounding leaves x at or above the total, the last entry with a positive weight;
 * NO_CHOICE when there is none. Every weighted choice of the world (a band by its odds, a pack
 * by its popularity, an arrival's band by its gap) is this walk with x = u · Σ weights.
 */
export function pickWeighted(
  x: number,
  weights: ArrayLike<number>,
  from = 0,
  n = weights.length - from,
): number {
  let chosen = NO_CHOICE;
  for (let i = 0; i < n; i++) {
    const w = weights[from + i]!;
    if (!(w > 0)) continue;
    chosen = i;
    if (x < w) break;
    x -= w;
  }
  return chosen;
}

/**
 * The same choice as `pickWeighted` from running sums of the weights (`running[base + i]` =
 * Σ weights of entries 0 … i, an entry of weight 0 repeating its predecessor's sum): the first
 * entry whose running sum exceeds x (it has a positive weight), else the last entry whose sum
 * rises (NO_CHOICE if none). For callers that keep the running sums between draws.
 */
export function pickRunning(x: number, running: ArrayLike<number>, base: number, n: number): number {
  for (let i = 0; i < n; i++) if (x < running[base + i]!) return i;
  for (let i = n - 1; i >= 0; i--) if (running[base + i]! > (i > 0 ? running[base + i - 1]! : 0)) return i;
  return NO_CHOICE;
}

// ---------------------------------------------------------------------------------------------
// Pulls: the chase, then a band by renormalised odds, then a card of the band

/**
 * Whether a pull takes the chase: with its probability, before any band (spec "Pack pool": the
 * chase's probability is per pack opened), while the chase is active.
 */
export function pullsChase(u: number, probability: number): boolean {
  return u < probability;
}

/**
 * The uniform `pullsChase` tested, given that the pull missed the chase (u ≥ probability): again
 * uniform on [0, 1), so the band is drawn from it and the pull needs no second random number.
 */
export function pastChase(u: number, probability: number): number {
  return (u - probability) / (1 - probability);
}

/**
 * A band's weight in a pull at a risk level: its odds while it holds a card, else 0. The pull's
 * band is drawn by these weights (`pickWeighted`), i.e. by the odds renormalised over the bands
 * holding cards (docs/simulator.md "Pool odds"; within the band a card uniformly, DESIGN.md).
 */
export function liveOdds(odds: number, cards: number): number {
  return cards > 0 ? odds : 0;
}

/**
 * Running `liveOdds` of bands `countBase` … `countBase + n − 1` (odds `odds[i]`, cards
 * `count[countBase + i]`) into `out[outBase + i]`; returns their total (0: nothing to draw).
 * With `pickRunning(u · total, out, outBase, n)` it draws as `pickWeighted`.
 */
export function runningLiveOdds(
  odds: ArrayLike<number>,
  count: ArrayLike<number>,
  countBase: number,
  n: number,
  out: Float64Array,
  outBase: number,
): number {
  let acc = 0;
  for (let i = 0; i < n; i++) {
    const w = liveOdds(odds[i]!, count[countBase + i]!);
    if (w > 0) acc += w;
    out[outBase + i] = acc;
  }
  return acc;
}

/**
 * The pricing model's expected value of one pull (DESIGN.md), in fractional cents: the chase with
 * its probability `chaseP` (worth `chaseCents`; 0 and 0 without an active chase), else a band by
 * its live odds renormalised (`liveOdds`) at the mean value of its cards:
 * p·chase + (1 − p)·Σ w·mean / Σ w over bands `base` … `base + n − 1` (odds `odds[i]`, cards
 * `count[base + i]`, Σ value `sum[base + i]`); the bands' part is 0 when none holds a card.
 */
export function pullEv(
  chaseP: number,
  chaseCents: number,
  odds: ArrayLike<number>,
  count: ArrayLike<number>,
  sum: ArrayLike<number>,
  base = 0,
  n = odds.length,
): number {
  let total = 0;
  for (let i = 0; i < n; i++) total += liveOdds(odds[i]!, count[base + i]!);
  let bands = 0;
  if (total > 0)
    for (let i = 0; i < n; i++) {
      const w = liveOdds(odds[i]!, count[base + i]!);
      if (w > 0) bands += (w / total) * (sum[base + i]! / count[base + i]!);
    }
  return chaseP * chaseCents + (total > 0 ? 1 - chaseP : 0) * bands;
}

/**
 * Σ over a pack's `levels` risk levels of `pullEv` (the same operations in the same order, so the
 * same sum), from what a caller keeps between changes of which bands hold cards: per level r its
 * live odds' total `totals[r]` (`runningLiveOdds`) and per band its share `share[r · n + i]` =
 * `liveOdds` ÷ that total (0 where the band is empty or has no odds), the very quotient `pullEv`
 * takes. Each band's mean is taken once for all levels (into `means`, n entries of scratch).
 */
export function pullEvOfLevels(
  chaseP: number,
  chaseCents: number,
  share: ArrayLike<number>,
  totals: ArrayLike<number>,
  levels: number,
  count: ArrayLike<number>,
  sum: ArrayLike<number>,
  base: number,
  n: number,
  means: Float64Array,
): number {
  for (let i = 0; i < n; i++) {
    const c = count[base + i]!;
    means[i] = c > 0 ? sum[base + i]! / c : 0;
  }
  let ev = 0;
  for (let r = 0; r < levels; r++) {
    const total = totals[r]!;
    let bands = 0;
    if (total > 0)
      for (let i = 0; i < n; i++) {
        const w = share[r * n + i]!;
        if (w > 0) bands += w * means[i]!;
      }
    ev += chaseP * chaseCents + (total > 0 ? 1 - chaseP : 0) * bands;
  }
  return ev;
}

// ---------------------------------------------------------------------------------------------
// Other users' openings (docs/simulator.md "Dynamics"; rates: world `dynamics.others_*`)

/** Other users open the 'standard' risk level with this chance, plus its share of the rest… */
export const OTHERS_STANDARD_SHARE = 0.6;
/** …and every risk level (standard included) with an equal part of this. Without a 'standard' level, all equally. */
export const OTHERS_ANY_SHARE = 1 - OTHERS_STANDARD_SHARE;

/**
 * Probability that another user's opening is at risk level `r` of a pack with `levels` risk
 * levels, `standard` the position of its 'standard' level (negative: none). The law behind
 * `othersRiskLevel`, for callers that draw the risk level and the band at once from the mixture.
 */
export function othersRiskShare(r: number, levels: number, standard: number): number {
  if (standard < 0) return 1 / levels;
  return (r === standard ? OTHERS_STANDARD_SHARE : 0) + OTHERS_ANY_SHARE / levels;
}

/**
 * The risk level (position) of another user's opening: 'standard' with OTHERS_STANDARD_SHARE,
 * else any of the pack's levels uniformly (draws one uniform, two with a 'standard' level that
 * loses the first). Its law is `othersRiskShare`.
 */
export function othersRiskLevel(levels: number, standard: number, rng: Rng): number {
  if (standard >= 0 && rng.next() < OTHERS_STANDARD_SHARE) return standard;
  return rng.int(levels);
}

/**
 * The joint law of what one other user's opening does, at one of `open` packs open to them
 * (equal popularity: `pickEqual`): [its chase, each of its `n` bands, nothing], the chase with
 * `chaseP` (0 without an active one), else a risk level by `othersRiskShare` and a band by live
 * odds, i.e. by the pack's running mixture `mix[base]` … `mix[base + n − 1]` (Σ over risk levels
 * of P(level) × the band's renormalised odds; less than 1 in all when a level has nothing to
 * draw, and that opening takes nothing). Each share is the probability of the whole opening.
 */
export function othersOpeningShares(
  open: number,
  chaseP: number,
  mix: ArrayLike<number>,
  base: number,
  n: number,
): Float64Array {
  const out = new Float64Array(n + 2);
  out[0] = chaseP / open;
  let below = 0;
  for (let i = 0; i < n; i++) {
    const m = mix[base + i]!;
    out[i + 1] = ((1 - chaseP) * (m - below)) / open;
    below = m;
  }
  out[n + 1] = ((1 - chaseP) * Math.max(0, 1 - below)) / open;
  return out;
}

/**
 * The pack of another user's opening among the `n` packs open to them (purchasable, available,
 * drawable): in proportion to each pack's `popularity` (world file), for a uniform u.
 */
export function pickByPopularity(u: number, popularity: ArrayLike<number>, n = popularity.length): number {
  let total = 0;
  for (let i = 0; i < n; i++) if (popularity[i]! > 0) total += popularity[i]!;
  return pickWeighted(u * total, popularity, 0, n);
}

/**
 * The category of another user's shop purchase: in proportion to each category's stock
 * (`stock[i]` cards), by one uniform of `rng`, drawn only when the shop holds a card; NO_CHOICE
 * (nothing drawn) when it is empty. The purchase then takes one of the category's cards uniformly.
 */
export function pickByStock(stock: ArrayLike<number>, rng: Rng): number {
  let total = 0;
  for (let i = 0; i < stock.length; i++) total += stock[i]!;
  if (!(total > 0)) return NO_CHOICE;
  return pickWeighted(rng.next() * total, stock);
}

/**
 * `pickByPopularity` when every pack has the same popularity (a world built from a snapshot,
 * which records none: each pack gets the default 1): ⌊u·n⌋ for the next uniform u of `rng`, the
 * very choice the walk makes (`Rng.int`).
 */
export function pickEqual(n: number, rng: Rng): number {
  return rng.int(n);
}

// ---------------------------------------------------------------------------------------------
// Restock (world `dynamics.restock_*`)

/** A band's (or shop's) gap: how many cards it lacks to its initial (recorded) size. */
export function bandGap(size: number, cards: number): number {
  return size > cards ? size - cards : 0;
}

/**
 * The band of an arriving card (`restock_cards_per_hour_per_pack`): in proportion to each band's
 * gap, for an integer x uniform in [0, Σ gaps) (bands `base` … `base + n − 1` of `size`/`count`);
 * NO_CHOICE when the pack is full (the arrival is lost).
 */
export function pickByGap(
  x: number,
  size: ArrayLike<number>,
  count: ArrayLike<number>,
  base: number,
  n: number,
): number {
  for (let i = 0; i < n; i++) {
    const g = size[base + i]! - count[base + i]!;
    if (g <= 0) continue;
    if (x < g) return i;
    x -= g;
  }
  return NO_CHOICE;
}

/**
 * `pickByGap`'s band for an x below the pack's Σ gaps, without a branch per band (the backtest's
 * arrivals: which band takes a card is a coin flip, which a branch per band mispredicts): the
 * number of bands whose running gap is at most x. A band with no gap adds nothing to the running
 * gap, so it is passed over as `pickByGap` skips it. Answers n (not NO_CHOICE) for x ≥ Σ gaps.
 */
export function pickByGapFlat(
  x: number,
  size: Int32Array,
  count: Int32Array,
  base: number,
  n: number,
): number {
  let below = 0;
  let band = 0;
  for (let i = 0; i < n; i++) {
    const g = size[base + i]! - count[base + i]!;
    // max(0, g) for an int32 g: the sign mask clears a negative one.
    below += g & ~(g >> 31);
    band += +(below <= x);
  }
  return band;
}

/**
 * The share of its gap a band (or shop) regains on a tick of `dtHours` (`restock_fraction_per_hour`,
 * `shop_restock_fraction_per_hour`): 1 − e^(−rate·dt), the gap's exponential relaxation.
 */
export function refillShare(ratePerHour: number, dtHours: number): number {
  return ratePerHour > 0 ? 1 - Math.exp(-ratePerHour * dtHours) : 0;
}

/**
 * Whole cards refilled into a gap on a tick: expected gap · share (`refillShare`), rounded
 * stochastically (one uniform, drawn only when there is a gap and a share), at most the gap.
 */
export function refillCount(gap: number, share: number, rng: Rng): number {
  if (gap <= 0 || !(share > 0)) return 0;
  const expected = gap * share;
  const whole = Math.floor(expected);
  // The rounding's 0 or 1 as a number, not a branch: it is a coin flip, which a branch mispredicts.
  return Math.min(gap, whole + +(rng.next() < expected - whole));
}

// ---------------------------------------------------------------------------------------------
// Value drift (world `dynamics.value_daily_trend`, `value_daily_volatility`, `tick_seconds`)

/** A tick's log-normal step of a category's value index: log factor = drift + scale · z. */
export interface ValueStep {
  drift: number;
  scale: number;
}

/**
 * The value index's step over `dtDays`: geometric Brownian motion, log factor
 * (trend − σ²/2)·dt + σ·√dt·z for a standard normal z (a martingale when trend = 0).
 */
export function valueStep(trendPerDay: number, sigmaPerDay: number, dtDays: number): ValueStep {
  return {
    drift: (trendPerDay - (sigmaPerDay * sigmaPerDay) / 2) * dtDays,
    scale: sigmaPerDay * Math.sqrt(dtDays),
  };
}

/** The factor a value index is multiplied by on a step, for the standard normal z. */
export function indexFactor(step: ValueStep, z: number): number {
  return Math.exp(step.drift + step.scale * z);
}

// ---------------------------------------------------------------------------------------------
// Listing fills (world `dynamics.listing_fills_per_day_at_value`, `listing_price_sensitivity`)

/** Fill hazard per day: base × exp(−sensitivity × (price/value − 1)); cheap listings sell fast. */
export function fillRatePerDay(
  priceCents: number,
  valueCents: number,
  base: number,
  sensitivity: number,
): number {
  if (valueCents <= 0) return 0;
  return base * Math.exp(-sensitivity * (priceCents / valueCents - 1));
}

/**
 * Probability that a listing fills on a tick of `dtDays` at the hazard `ratePerDay` (checked at
 * every tick at the value after the tick's drift): 1 − e^(−rate·dt). Equivalently, it sells at
 * the first tick where Σ rate·dt reaches an exponential(1) draw.
 */
export function fillProbability(ratePerDay: number, dtDays: number): number {
  return 1 - Math.exp(-ratePerDay * dtDays);
}

// ---------------------------------------------------------------------------------------------
// Sell-back (spec "States and transitions", "Sell back"; numbers in world `rules`, defaults src/api/rules.ts)

/** The world's sell-back rules (`rules` of a world file; the spec's numbers by default). */
export interface SellBackRules {
  fresh_rate: number;
  fresh_window_seconds: number;
  locked_rate: number;
  lock_days: number;
  market_rate: number;
  purchased_card_rate: number;
}

/** The spec's sell-back rules (src/api/rules.ts): what the scorer assumes of the real service. */
export const SPEC_SELL_BACK_RULES: Readonly<SellBackRules> = Object.freeze({
  fresh_rate: FRESH_RATE,
  fresh_window_seconds: FRESH_WINDOW_MS / 1000,
  locked_rate: LATE_RATE,
  lock_days: VALUE_LOCK_DAYS,
  market_rate: LATE_RATE,
  purchased_card_rate: LATE_RATE,
});

/** How the holder got the card: a pull (fresh window, then locked) or a card purchase (locked only). */
export type AcquisitionKind = 'pull' | 'purchase';

/** End of the fresh window of a pull made at `at` (inclusive). */
export function freshEnds(at: number, rules: SellBackRules): number {
  return at + rules.fresh_window_seconds * 1000;
}

/** End of the value lock of an acquisition made at `at` (inclusive). */
export function lockEnds(at: number, rules: SellBackRules): number {
  return at + rules.lock_days * DAY_MS;
}

export interface Offer {
  rate: number;
  basisCents: Cents;
  amountCents: Cents;
  /** End of the value lock while it holds, else null. */
  lockedUntil: number | null;
}

/** The phases of a sell-back offer: a pull's fresh window, the value lock, then the market. */
const FRESH = 0;
const LOCKED = 1;
const MARKET = 2;

/**
 * The phase of the sell-back offer at `now` for a card acquired at `acquiredAt`: a pull's fresh
 * window while `now ≤ pull + fresh window`, then the value lock until it ends (`lock_days`), then
 * the market.
 */
function offerPhase(kind: AcquisitionKind, acquiredAt: number, now: number, rules: SellBackRules): number {
  if (kind === 'pull' && now <= freshEnds(acquiredAt, rules)) return FRESH;
  return now <= lockEnds(acquiredAt, rules) ? LOCKED : MARKET;
}

/**
 * The rate of an offer in `phase`: `fresh_rate`; under the lock `locked_rate` (pulls) or
 * `purchased_card_rate` (bought cards); then `market_rate`.
 */
function phaseRate(kind: AcquisitionKind, phase: number, rules: SellBackRules): number {
  if (phase === FRESH) return rules.fresh_rate;
  if (phase === LOCKED) return kind === 'pull' ? rules.locked_rate : rules.purchased_card_rate;
  return rules.market_rate;
}

/** What an offer in `phase` pays its rate of: the locked basis, or in the market the current value. */
function phaseBasis(phase: number, basisCents: Cents, valueCents: Cents): Cents {
  return phase === MARKET ? valueCents : basisCents;
}

/**
 * The sell-back offer at `now` for a card acquired at `acquiredAt` with locked basis `basisCents`
 * (value at pull; for a bought card min(price paid, value at purchase)) now worth `valueCents`:
 * a pull pays `fresh_rate` of its basis while `now ≤ pull + fresh window`; then, until the lock
 * ends (`lock_days`), `locked_rate` (pulls) or `purchased_card_rate` (bought cards) of the basis;
 * then `market_rate` of the current value. Rounded half away from zero to the cent.
 */
export function sellBackOffer(
  kind: AcquisitionKind,
  acquiredAt: number,
  basisCents: Cents,
  valueCents: Cents,
  now: number,
  rules: SellBackRules,
): Offer {
  const lockUntil = lockEnds(acquiredAt, rules);
  const phase = offerPhase(kind, acquiredAt, now, rules);
  return {
    rate: phaseRate(kind, phase, rules),
    basisCents: phaseBasis(phase, basisCents, valueCents),
    amountCents: sellBackAmount(kind, acquiredAt, basisCents, valueCents, now, rules),
    lockedUntil: now <= lockUntil ? lockUntil : null,
  };
}

/** `sellBackOffer`'s amount alone (no object: for hot callers). */
export function sellBackAmount(
  kind: AcquisitionKind,
  acquiredAt: number,
  basisCents: Cents,
  valueCents: Cents,
  now: number,
  rules: SellBackRules,
): Cents {
  const phase = offerPhase(kind, acquiredAt, now, rules);
  return applyRate(phaseBasis(phase, basisCents, valueCents), phaseRate(kind, phase, rules));
}

// ---------------------------------------------------------------------------------------------
// Poisson processes (other users' openings and shop purchases, arrivals: world `dynamics`)

/**
 * Delay (ms, at least 1) to the next event of a Poisson process of `ratePerHour`: exponential
 * inter-arrival times (the simulator's event-by-event schedule); +∞ when the rate is 0.
 */
export function nextEventDelayMs(ratePerHour: number, rng: Rng): number {
  return ratePerHour > 0
    ? Math.max(1, Math.round(rng.exponential(ratePerHour) * HOUR_MS))
    : Number.POSITIVE_INFINITY;
}

/**
 * Events of a Poisson process of `ratePerHour` in a tick of `dtHours`: a Poisson count of mean
 * rate·dt (the backtest's batch per tick; the same law as `nextEventDelayMs`'s schedule).
 */
export function poissonCount(ratePerHour: number, dtHours: number, rng: Rng): number {
  return rng.poisson(ratePerHour * dtHours);
}
