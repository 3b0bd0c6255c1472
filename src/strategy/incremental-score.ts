/**
 * Incremental scoring of a pool whose cards come and go (the dynamic backtest market): each band
 * keeps the sufficient statistics of its cards (count, Σ value, Σ value², Σ realized value,
 * Σ realized², Σ loss share, sold-back count), and `rowFor()` turns them into the same
 * `ScoreRow` as `scorePool` on the equivalent pool body in O(bands) — the decision code is
 * `score.ts`'s own (`rowFromStats`). The owner keeps the cards (as value ids, `valueId`) and hands
 * a band over when it changed (`setBand`, a copy, or `viewBand`, its own array lent); `addId`
 * builds the starting cards. Clones share band arrays until one writes (copy on first write).
 *
 * The equivalent pool: the view's metadata, `available` and `chase`, and per band the view's odds
 * if the band holds a card (else 0), `hittable_cards` = its card count, `cards` = its cards. Such
 * a pool is never truncated, so `estimated` is false and the low/high bounds equal the values.
 *
 * Per-card realized outcomes come from the strategy's own pull policy (`compilePolicy`, the rule
 * `realizedStats` applies per atom), evaluated when the card is added and kept with it. A
 * band's sums are recomputed from its cards' terms when a row is asked for after the band changed
 * (O(cards in the band), contiguous memory), not kept as running sums: between two rows the
 * world changes a pack far more often than it is scored, and sums taken afresh never drift.
 *
 * Exactness: scorePool sums atom by atom, this sums band by band, so unrounded statistics agree to
 * floating-point rounding (~1e-12 relative, tested at 1e-9); a rounded field (cents, 6-digit
 * ratios) can differ by one step only when the unrounded value sits within that of a rounding
 * boundary. `growth` (E log of the balance after opening) needs every outcome, not a sum: it is
 * computed exactly, over the cards' terms, only when the decision needs it (Kelly sizing of an
 * open-worthy pool whose growth sign the two moments cannot prove); a row whose decision did not
 * need it carries `growth: null` (the backtest's decisions never read it).
 *
 * One deliberate difference: the price integrity check's band-bounds and EV-gap part
 * (`checkPoolData`) is made once per view, at its first row, not at every row. In the dynamic
 * market a view's `expected_value` is the snapshot's and does not follow the cards, so a later
 * gap would be the simulation's, not the service's.
 */
import type { PackPool } from '../api/schemas.js';
import { toCents } from '../core/money.js';
import { BandValues, lossOf, R, R_EX2, R_EXPECTED, R_LOSS, R_SOLD, R_VALUE } from './band-values.js';
import { fastCents } from './cents.js';
import {
  type OutcomeEvaluator,
  outcomeEvaluator,
  T,
  T_EX2,
  T_EXPECTED,
  T_F2,
  T_LOSS,
  T_SOLD,
  T_X,
  T_X2,
} from './outcome-terms.js';
import { checkPoolData, type IntegrityIssue } from './pool-integrity.js';
import { type RealizedStats, rowFromStats, type ScoreContext, type ScoreRow } from './score.js';
import type { Strategy } from './strategy-schema.js';

/** `stale` flags: a band's `sum` is current, or must be taken afresh before it is read. */
const FRESH = 0;
const STALE = 1;

/**
 * `provenWait`'s margin on the realized mean: a mean this close under min_ev_ratio × price is left
 * to the row (the running sums agree with the row's to ~1e-12).
 */
const STILL_BELOW_MARGIN = 1e-6;

/** Starting room of a band's cards (doubles when full). */
const FIRST_CARDS_ROOM = 8;

// Per-band statistics, K sums each.
const S_VALUE = 0;
const S_VALUE2 = 1;
const S_EXPECTED = 2;
const S_EX2 = 3;
const S_LOSS = 4;
const S_SOLD = 5;
const K = 6;

export class IncrementalScorer {
  /** The strategy's outcome evaluator (one per strategy and thread, see `outcomeEvaluator`). */
  private readonly table: OutcomeEvaluator;
  /** The pool's price (cents): the loss terms depend on it, so every view scored must have it. */
  private readonly priceCents: number;
  /** The strategy's balance reserve (cents): the Kelly bankroll is the balance above it. */
  private readonly reserveCents: number;
  /** Per band, K sums over its cards; valid while the band's `stale` flag is FRESH. */
  private readonly sum: Float64Array;
  /** Per band, FRESH or STALE (its `sum` must be taken afresh before it is read). */
  private readonly stale: Uint8Array;
  /** Per band, its number of cards. */
  private readonly count: Int32Array;
  /** Per band, its values table (shared with clones). */
  private readonly values: BandValues[];
  /**
   * Per band, the value id of the card at each position. A clone shares its source's arrays until
   * either writes a band (`own`, copy on first write): the dynamic market clones every scorer per
   * path and hands each band over whole before it reads it, so most are never copied.
   */
  private readonly cards: Int32Array[];
  /** Per band, 1 if `cards[band]` is this scorer's own (else shared with a clone or its source). */
  private readonly owned: Uint8Array;
  /**
   * Each view's band-bounds and EV-gap check, made at its first row (shared with clones): once per
   * pool, off the hot path. The EV it compares is the cards' EV then, i.e. the snapshot's.
   */
  private readonly dataIssues: WeakMap<PackPool, IntegrityIssue | null>;
  /**
   * Scratch arrays reused by `realizedMeanOf` and by rows (whose growth is read at once, by the
   * decision, or never), so that neither allocates: per band the probability of each of its
   * cards, and the chase's terms.
   */
  private scratchEach = new Float64Array(0);
  private scratchChase = new Float64Array(T);

  /**
   * @param template metadata and bands (their order, odds and kinds) of the pool; its cards are
   *   not added (see `addId`).
   * @param copyOf a scorer of the same template whose cards and sums this one starts with.
   */
  constructor(
    readonly template: PackPool,
    readonly strategy: Strategy,
    copyOf?: IncrementalScorer,
  ) {
    this.table = outcomeEvaluator(strategy);
    this.priceCents = fastCents(template.price);
    this.reserveCents = toCents(strategy.budget.min_balance_usd);
    const n = template.bands.length;
    this.sum = new Float64Array(n * K);
    this.stale = new Uint8Array(n);
    this.count = new Int32Array(n);
    this.dataIssues = copyOf ? copyOf.dataIssues : new WeakMap();
    this.values = copyOf
      ? copyOf.values
      : template.bands.map((b) => new BandValues(this.table, b.is_consolation, this.priceCents));
    this.owned = new Uint8Array(n);
    if (copyOf) {
      this.sum.set(copyOf.sum);
      this.stale.set(copyOf.stale);
      this.count.set(copyOf.count);
      this.cards = copyOf.cards.slice();
      copyOf.owned.fill(0);
    } else {
      this.cards = template.bands.map(() => new Int32Array(FIRST_CARDS_ROOM));
      this.owned.fill(1);
    }
  }

  /** The id of `valueCents` in band `band`'s values (for `addId`; stable for this scorer and its clones). */
  valueId(band: number, valueCents: number): number {
    return this.values[band]!.id(valueCents);
  }

  /**
   * Numbers band `band`'s values at once: value `values[i]` gets id i (distinct values, none
   * numbered yet in this scorer); for an owner that numbers the values itself, the same for every
   * strategy (the dynamic market's band layout). `valueId` gives the same ids afterwards.
   */
  numberValues(band: number, values: Float64Array): void {
    this.values[band]!.number(values);
  }

  /** Adds a card with value id `id` (from `valueId`) at the end of `band`'s positions. */
  addId(band: number, id: number): void {
    const n = this.count[band]!;
    if (n === this.cards[band]!.length) this.growBand(band);
    else if (this.owned[band] === 0) this.own(band, this.cards[band]!.length, true);
    this.cards[band]![n] = id;
    this.count[band] = n + 1;
    this.stale[band] = STALE;
  }

  /**
   * Replaces `band`'s cards by the `n` value ids `ids[from..from+n)` (ids from `valueId`), in that
   * position order: an owner that keeps the cards itself (the dynamic market) hands a changed band
   * over when it needs a row, instead of every add and removal.
   */
  setBand(band: number, ids: Int32Array, from: number, n: number): void {
    // The band's old cards are all replaced: a shared or too small array is swapped, not copied.
    let room = this.cards[band]!.length;
    if (room < n || this.owned[band] === 0) {
      while (room < n) room *= 2;
      this.own(band, room, false);
    }
    const cards = this.cards[band]!;
    for (let i = 0; i < n; i++) cards[i] = ids[from + i]!;
    this.count[band] = n;
    // Summed when a row reads it: a band no view draws from (odds 0, e.g. the common band of an
    // aggressive pool) is never summed.
    this.stale[band] = STALE;
  }

  /**
   * Band `band`'s cards are the `n` value ids at the start of `cards`, read where they are (no
   * copy): an owner whose band store holds them contiguously (the dynamic market) lends its own
   * array. The owner must not change them while the scorer may read them, i.e. it hands the band
   * over again (this or `setBand`) after any change and before the scorer's next row. The scorer
   * never writes a lent array (a later `addId` copies it first).
   */
  viewBand(band: number, cards: Int32Array, n: number): void {
    this.cards[band] = cards;
    this.owned[band] = 0;
    this.count[band] = n;
    this.stale[band] = STALE;
  }

  private growBand(band: number): void {
    this.own(band, this.cards[band]!.length * 2, true);
  }

  /** Band `band`'s cards in an array of this scorer's own of `room` ids (its cards copied if `keep`). */
  private own(band: number, room: number, keep: boolean): void {
    const cards = new Int32Array(room);
    if (keep) cards.set(this.cards[band]!.subarray(0, this.count[band]!));
    this.cards[band] = cards;
    this.owned[band] = 1;
  }

  /** Band `band`'s sums, taken afresh from its cards' terms (in position order). */
  private refresh(band: number): void {
    const terms = this.values[band]!.summed;
    const cards = this.cards[band]!;
    const n = this.count[band]!;
    let value = 0;
    let value2 = 0;
    let expected = 0;
    let ex2 = 0;
    let loss = 0;
    let sold = 0;
    for (let i = 0; i < n; i++) {
      const at = cards[i]! * R;
      const v = terms[at + R_VALUE]!;
      value += v;
      value2 += v * v;
      expected += terms[at + R_EXPECTED]!;
      ex2 += terms[at + R_EX2]!;
      loss += terms[at + R_LOSS]!;
      sold += terms[at + R_SOLD]!;
    }
    const k = band * K;
    const sum = this.sum;
    sum[k + S_VALUE] = value;
    sum[k + S_VALUE2] = value2;
    sum[k + S_EXPECTED] = expected;
    sum[k + S_EX2] = ex2;
    sum[k + S_LOSS] = loss;
    sum[k + S_SOLD] = sold;
    this.stale[band] = FRESH;
  }

  /**
   * The realized mean (cents) `rowFor(view)` would decide on with `count` cards per band whose
   * expected realized values (`expectedOf`) sum to `expectedSum` per band, from those running
   * sums: equal to the row's up to floating-point rounding (~1e-12 relative), without refreshing
   * any band. For an owner that keeps the cards itself and hands them over only when it needs a
   * row (`setBand`). NaN when nothing can be drawn.
   */
  realizedMeanOf(view: PackPool, count: Int32Array, expectedSum: Float64Array): number {
    const each = this.scratch(view.bands.length);
    if (!cardWeights(view, count, each)) return Number.NaN;
    const chase = view.chase;
    let mean = 0;
    if (chase && chase.probability > 0) {
      const c = this.scratchChase;
      this.table.write(fastCents(chase.card.market_value), false, c, 0);
      mean += chase.probability * c[T_EXPECTED]!;
    }
    for (let b = 0; b < each.length; b++) if (each[b]! > 0) mean += each[b]! * expectedSum[b]!;
    return mean;
  }

  /**
   * Whether `rowFor(view, { balanceCents })` would decide `wait` with `count` cards per band whose
   * expected realized values sum to `expectedSum` (running sums, as `realizedMeanOf`), proven from
   * those sums without refreshing any band (false: not proven; nothing drawable is not proven):
   * - the realized mean is below min_ev_ratio × price (by a 1e-6 margin: the running sums agree
   *   with the row's to ~1e-12, a mean that close is left to the row); or
   * - Kelly sizing, and the Kelly size is below one pack even at an upper bound of the Kelly
   *   quantity. The row's quantity is bankroll × (mean − price) / variance of one pull's outcome;
   *   the variance is at least the spread of the per-band means: a card's E[outcome²] is at least
   *   its expected value squared (an outcome or a fill-weighted pair of them), and a band's Σ of
   *   squares at least (Σ expected)² / count. Margins of 1e-9 relative cover the rounding of both
   *   sums. `decide` then waits: every step before the Kelly size waits or goes on, and a size
   *   below one pack waits.
   * `rowFor` would be exact where this is a bound, so a true answer never hides an `open`.
   */
  provenWait(
    view: PackPool,
    count: Int32Array,
    expectedSum: Float64Array,
    balanceCents: number | undefined,
  ): boolean {
    const price = this.priceCents;
    if (!(price > 0)) return false;
    const each = this.scratch(view.bands.length);
    if (!cardWeights(view, count, each)) return false;
    const chase = view.chase;
    let mean = 0;
    let low2 = 0;
    if (chase && chase.probability > 0) {
      const c = this.scratchChase;
      this.table.write(fastCents(chase.card.market_value), false, c, 0);
      mean += chase.probability * c[T_EXPECTED]!;
      low2 += chase.probability * c[T_EX2]!;
    }
    for (let b = 0; b < each.length; b++) {
      const e = each[b]!;
      if (!(e > 0)) continue;
      const s = expectedSum[b]!;
      mean += e * s;
      low2 += (e * s * s) / count[b]!;
    }
    const open = this.strategy.open;
    if (mean < open.min_ev_ratio * price * (1 - STILL_BELOW_MARGIN)) return true;
    if (open.sizing !== 'kelly' || balanceCents === undefined) return false;
    const bankroll = Math.max(0, balanceCents - this.reserveCents);
    const edge = mean + 1e-9 * (Math.abs(mean) + price) - price;
    // No edge: `decide` waits (opening would lower the growth), as it does on a Kelly size of 0.
    if (!(edge > 0)) return true;
    const variance = low2 - mean * mean - 1e-9 * (low2 + mean * mean);
    if (!(variance > 0)) return false;
    return ((bankroll * edge) / variance) * open.kelly_fraction < 1 - 1e-9;
  }

  /** Expected realized value (cents) of a card of `band` with value id `id`. */
  expectedOf(band: number, id: number): number {
    return this.values[band]!.expected[id]!;
  }

  /**
   * This clone of `source`'s (same template and strategy) back to `source`'s cards and sums, as
   * `clone` would make it: another path of the dynamic market reuses its scorers this way.
   */
  restartFrom(source: IncrementalScorer): void {
    this.sum.set(source.sum);
    this.stale.set(source.stale);
    this.count.set(source.count);
    for (let b = 0; b < this.cards.length; b++) this.cards[b] = source.cards[b]!;
    this.owned.fill(0);
    source.owned.fill(0);
  }

  /** An independent copy (same cards, same sums): cheaper than adding the cards again. */
  clone(): IncrementalScorer {
    // Through the constructor, so the copy keeps the class's fast object shape.
    return new IncrementalScorer(this.template, this.strategy, this);
  }

  /**
   * The row `scorePool` would give on the equivalent pool of `view` (see the file comment), from
   * the band sums; null when the pool cannot produce a pull (`scorePool` would throw
   * EmptyPoolError). `view` gives the header, `available`, `chase` and the band odds (the
   * template's bands in the same order, same price), e.g. any risk level of the pack, so one scorer
   * serves every risk level that shares a price.
   */
  rowFor(view: PackPool, ctx: ScoreContext = {}): ScoreRow | null {
    const bands = view.bands;
    if (bands.length !== this.count.length) throw new RangeError('view has other bands than the scorer');
    if (fastCents(view.price) !== this.priceCents)
      throw new RangeError('view has another price than the scorer');
    const chase = view.chase;
    const chaseP = chase ? chase.probability : 0;
    // Per-card probability of each live band, kept for growth (read at once, if at all).
    const each = this.scratch(bands.length);
    if (!cardWeights(view, this.count, each)) return null;
    const t = this.table;
    let ev = 0;
    let ev2 = 0;
    let mean = 0;
    let ex2 = 0;
    let pLoss = 0;
    let soldBack = 0;
    let chaseTerms: Float64Array | null = null;
    if (chase && chaseP > 0) {
      const v = fastCents(chase.card.market_value);
      chaseTerms = this.scratchChase;
      t.write(v, false, chaseTerms, 0);
      chaseTerms[T_LOSS] = lossOf(chaseTerms, 0, this.priceCents);
      ev += chaseP * v;
      ev2 += chaseP * v * v;
      mean += chaseP * chaseTerms[T_EXPECTED]!;
      ex2 += chaseP * chaseTerms[T_EX2]!;
      pLoss += chaseP * chaseTerms[T_LOSS]!;
      soldBack += chaseP * chaseTerms[T_SOLD]!;
    }
    for (let b = 0; b < bands.length; b++) {
      const e = each[b]!;
      if (!(e > 0)) continue;
      const k = b * K;
      if (this.stale[b] === STALE) this.refresh(b);
      const sum = this.sum;
      ev += e * sum[k + S_VALUE]!;
      ev2 += e * sum[k + S_VALUE2]!;
      mean += e * sum[k + S_EXPECTED]!;
      ex2 += e * sum[k + S_EX2]!;
      pLoss += e * sum[k + S_LOSS]!;
      soldBack += e * sum[k + S_SOLD]!;
    }
    const priceCents = this.priceCents;
    const balance = ctx.balanceCents;
    const withGrowth = balance !== undefined && balance > priceCents && balance > 0;
    const lazyGrowth = withGrowth ? this.growthReader(balance, chaseP, chaseTerms, each) : null;
    const stats: RealizedStats = {
      mean,
      meanLow: mean,
      ex2,
      pLoss: Math.min(1, pLoss),
      shareSoldBack: Math.min(1, soldBack),
      growth: Number.NaN,
    };
    let drawableCards = 0;
    for (let b = 0; b < bands.length; b++) if (bands[b]!.odds > 0) drawableCards += this.count[b]!;
    let dataIssue = this.dataIssues.get(view);
    if (dataIssue === undefined) {
      dataIssue = checkPoolData(view, { evLoCents: ev, evHiCents: ev }, this.strategy.open.max_ev_gap_ratio);
      this.dataIssues.set(view, dataIssue);
    }
    const dist = {
      drawableCards,
      dataIssue,
      evCents: ev,
      evLoCents: ev,
      evHiCents: ev,
      varianceCents2: Math.max(0, ev2 - ev * ev),
      estimated: false,
      notes: [] as string[],
    };
    const sign = withGrowth && t.nonNegative ? growthSign(mean, ex2, priceCents, balance) : 0;
    return rowFromStats(view, this.strategy, ctx, dist, stats, lazyGrowth, sign, false);
  }

  /**
   * The growth of a row being made (`each`: its per-card probabilities), over the live cards: the
   * decision reads it at once or never (rows carry `growth: null` otherwise), so no copy is kept.
   */
  private growthReader(
    balance: number,
    chaseP: number,
    chaseTerms: Float64Array | null,
    each: Float64Array,
  ): () => number {
    const priceCents = this.priceCents;
    return () => growthOf(balance, priceCents, chaseP, chaseTerms, each, this.values, this.cards, this.count);
  }

  /** `scratchEach`, zeroed, for `n` bands. */
  private scratch(n: number): Float64Array {
    if (this.scratchEach.length !== n) this.scratchEach = new Float64Array(n);
    return this.scratchEach.fill(0);
  }
}

/**
 * `realizedMeanOf` for a view without an active chase, from its bands' live shares: `share[at + b]`
 * = band b's odds ÷ `total`, the odds of the bands holding cards (0 where the band is empty or has
 * no odds), the quotient `cardWeights` takes when no chase's part comes off first. The same
 * operations in the same order, so the same mean; NaN when nothing can be drawn (`total` 0).
 */
export function liveRealizedMean(
  total: number,
  share: Float64Array,
  at: number,
  n: number,
  count: Int32Array,
  expectedSum: Float64Array,
): number {
  if (!(total > 0)) return Number.NaN;
  let mean = 0;
  for (let b = 0; b < n; b++) {
    const s = share[at + b]!;
    if (!(s > 0)) continue;
    const each = s / count[b]!;
    if (each > 0) mean += each * expectedSum[b]!;
  }
  return mean;
}

/**
 * The sign of the growth Σ p · log(1 + u), u = (X − price) / B, from the first two moments,
 * when provable: log(1 + u) ≤ u gives growth ≤ E[u]; for u ≥ −a (X ≥ 0, a = price / B < 1),
 * log(1 + u) ≥ u − u² / (2 (1 − a)²) gives growth ≥ E[u] − E[u²] / (2 (1 − a)²). Margins of
 * 1e-9 relative cover the rounding of the moments (band sums vs per-outcome sums, ~1e-12).
 * Returns +1 (growth > 0), −1 (growth ≤ 0) or 0 (too close to call: compute it).
 */
function growthSign(mean: number, ex2: number, priceCents: number, balance: number): number {
  const p = priceCents;
  const a = p / balance;
  if (!(a < 1) || !(p >= 0)) return 0;
  const eu = (mean - p) / balance;
  const tol1 = (1e-9 * (Math.abs(mean) + p)) / balance;
  if (eu < -tol1) return -1;
  const eu2 = Math.max(0, ex2 - 2 * p * mean + p * p) / (balance * balance);
  const tol2 = (1e-9 * (ex2 + 2 * p * Math.abs(mean) + p * p)) / (balance * balance);
  const low = eu - eu2 / (2 * (1 - a) * (1 - a));
  if (low - tol1 - tol2 > 0) return 1;
  return 0;
}

/**
 * The probability of each card of each band (0 for a band that is empty or has no odds): the
 * view's odds renormalised over the bands holding cards, less the chase's share, split evenly
 * over the band's cards. False when nothing can be drawn.
 */
function cardWeights(view: PackPool, count: Int32Array, each: Float64Array): boolean {
  const bands = view.bands;
  const chaseP = view.chase ? view.chase.probability : 0;
  let oddsSum = 0;
  for (let b = 0; b < bands.length; b++) {
    const o = bands[b]!.odds;
    if (count[b]! > 0 && o > 0) oddsSum += o;
  }
  if (chaseP < 1 && !(oddsSum > 0)) return false;
  const rest = chaseP < 1 ? 1 - chaseP : 0;
  for (let b = 0; b < bands.length; b++) {
    const n = count[b]!;
    const odds = bands[b]!.odds;
    each[b] = n === 0 || !(odds > 0) || rest <= 0 ? 0 : (rest * odds) / oddsSum / n;
  }
  return true;
}

/** Σ p · log((B − price + X) / B) over every outcome, as `realizedStats` computes it. */
function growthOf(
  balance: number,
  priceCents: number,
  chaseP: number,
  chaseTerms: Float64Array | null,
  each: Float64Array,
  values: readonly BandValues[],
  cards: readonly Int32Array[],
  counts: Int32Array,
): number {
  const base = balance - priceCents;
  const logB = Math.log(balance);
  let growth = 0;
  const add = (p: number, d: Float64Array, at: number) => {
    const p2 = p * d[at + T_F2]!;
    const p1 = p - p2;
    growth += p1 * (Math.log(base + d[at + T_X]!) - logB);
    if (p2 > 0) growth += p2 * (Math.log(base + d[at + T_X2]!) - logB);
  };
  if (chaseTerms) add(chaseP, chaseTerms, 0);
  for (let b = 0; b < cards.length; b++) {
    const p = each[b]!;
    if (!(p > 0)) continue;
    const d = values[b]!.terms;
    const ids = cards[b]!;
    const n = counts[b]!;
    for (let k = 0; k < n; k++) add(p, d, ids[k]! * T);
  }
  return growth;
}
