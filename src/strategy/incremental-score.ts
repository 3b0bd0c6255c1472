/**
 * Incremental scoring of a pool whose cards come and go (the dynamic backtest market): each band
 * keeps the sufficient statistics of its cards (count, Σ value, Σ value², Σ realised value,
 * Σ realised², Σ loss share, sold-back count) under add / remove / revalue in O(1), and `row()`
 * turns them into the same `ScoreRow` as `scorePool` on the equivalent pool body in
 * O(bands) — the decision code is `score.ts`'s own (`rowFromStats`).
 *
 * The equivalent pool (what `body()` returns, and what the dynamic market used to score): the
 * template's metadata, `available` and `chase` as set, and per band the template's odds if the
 * band holds a card (else 0), `hittable_cards` = its card count, `cards` = its cards. Such a pool
 * is never truncated, so `estimated` is false and the low/high bounds equal the values.
 *
 * Per-card realised outcomes come from the strategy's own pull policy (`compilePolicy`, the rule
 * `realizedStats` applies per atom), evaluated once per distinct value and shared by every scorer
 * of the strategy. Sums are compensated (Neumaier), so removals do not accumulate drift.
 *
 * Exactness: scorePool sums atom by atom, this sums band by band, so unrounded statistics agree to
 * floating-point rounding (~1e-12 relative, tested at 1e-9); a rounded field (cents, 6-digit
 * ratios) can differ by one step only when the unrounded value sits within that of a rounding
 * boundary. `growth` (E log of the balance after opening) needs every outcome, not a sum: it is
 * computed exactly, over a copy of the outcome indices taken when the row is made, only when the
 * decision needs it (Kelly sizing of an open-worthy pool) or the row's `growth` is read.
 */
import type { Band, PackPool, PoolCard } from '../api/schemas.js';
import { fastCents } from './cents.js';
import { FRESH_RATE } from './listing-model.js';
import { compilePolicy, newScratch, sealedValueCents } from './pull-policy.js';
import { type RealizedStats, rowFromStats, type ScoreContext, type ScoreRow } from './score.js';
import type { Strategy } from './strategy-schema.js';

/**
 * Realised outcome of one pull by value (cents) and kind (card or sealed pack), evaluated once with
 * the strategy's pull policy: the same numbers `realizedStats` computes per atom.
 */
/** Values (cents) below this are indexed by a flat array, not a Map (a few MB at most). */
const DENSE_LIMIT = 1 << 22;

export class OutcomeTable {
  private capacity = 256;
  size = 0;
  /** Expected realised value (cents). */
  expected = new Float64Array(this.capacity);
  /** First outcome (sale, sell-back payout or sealed worth) and, when listed, the fallback. */
  x = new Float64Array(this.capacity);
  x2 = new Float64Array(this.capacity);
  /** Share of the atom's probability on the fallback (1 − fill when listed, else 0). */
  f2 = new Float64Array(this.capacity);
  /** 1 when sold back at once. */
  sold = new Uint8Array(this.capacity);
  /** Whether every outcome so far is ≥ 0 (what `growthSign`'s lower bound assumes). */
  nonNegative = true;
  /** E[outcome²] of one pull with this outcome: (1 − f2)·x² + f2·x2² (price-independent). */
  ex2 = new Float64Array(this.capacity);
  /** Outcome index by value (cents) for values below DENSE_LIMIT (−1: not evaluated yet); Map above. */
  private denseCard = new Int32Array(1024).fill(-1);
  private denseSealed = new Int32Array(1024).fill(-1);
  private readonly index = new Map<number, number>();
  private readonly policy;
  private readonly scratch = newScratch();

  constructor(private readonly strategy: Strategy) {
    this.policy = compilePolicy(strategy);
  }

  /** Index of the outcome of a card (`sealed` false) or a sealed pack worth `valueCents`. */
  of(valueCents: number, sealed: boolean): number {
    const dense = Number.isInteger(valueCents) && valueCents >= 0 && valueCents < DENSE_LIMIT;
    const key = sealed ? -1 - valueCents : valueCents;
    if (dense) {
      const d = sealed ? this.denseSealed : this.denseCard;
      if (valueCents < d.length) {
        const hit = d[valueCents]!;
        if (hit >= 0) return hit;
      }
    } else {
      const hit = this.index.get(key);
      if (hit !== undefined) return hit;
    }
    if (this.size === this.capacity) this.grow();
    const i = this.size++;
    if (sealed) {
      const x = sealedValueCents(valueCents, this.strategy);
      this.expected[i] = x;
      this.x[i] = x;
      this.x2[i] = 0;
      this.f2[i] = 0;
      this.sold[i] = 0;
    } else {
      const plan = this.policy.evaluate(valueCents, FRESH_RATE, this.scratch);
      this.expected[i] = plan.expectedCents;
      if (plan.list) {
        this.x[i] = plan.saleCents;
        this.x2[i] = plan.fallbackCents;
        this.f2[i] = 1 - plan.fill;
        this.sold[i] = 0;
      } else {
        this.x[i] = plan.payoutCents;
        this.x2[i] = 0;
        this.f2[i] = 0;
        this.sold[i] = 1;
      }
    }
    {
      const f2 = this.f2[i]!;
      const x = this.x[i]!;
      const x2 = this.x2[i]!;
      this.ex2[i] = (1 - f2) * x * x + f2 * x2 * x2;
      if (!(x >= 0) || !(x2 >= 0)) this.nonNegative = false;
    }
    if (dense) {
      let d = sealed ? this.denseSealed : this.denseCard;
      if (valueCents >= d.length) {
        const g = new Int32Array(Math.min(DENSE_LIMIT, Math.max(valueCents + 1, d.length * 2))).fill(-1);
        g.set(d);
        d = g;
        if (sealed) this.denseSealed = d;
        else this.denseCard = d;
      }
      d[valueCents] = i;
    } else this.index.set(key, i);
    return i;
  }

  private grow(): void {
    this.capacity *= 2;
    const g = (a: Float64Array) => {
      const b = new Float64Array(this.capacity);
      b.set(a);
      return b;
    };
    this.expected = g(this.expected);
    this.x = g(this.x);
    this.x2 = g(this.x2);
    this.f2 = g(this.f2);
    this.ex2 = g(this.ex2);
    const s = new Uint8Array(this.capacity);
    s.set(this.sold);
    this.sold = s;
  }
}

const tables = new WeakMap<Strategy, OutcomeTable>();
/** The outcome table shared by every scorer of a strategy (per thread). */
export function outcomeTable(strategy: Strategy): OutcomeTable {
  let t = tables.get(strategy);
  if (!t) {
    t = new OutcomeTable(strategy);
    tables.set(strategy, t);
  }
  return t;
}

// Per-band statistics, K compensated sums each.
const S_VALUE = 0;
const S_VALUE2 = 1;
const S_EXPECTED = 2;
const S_EX2 = 3;
const S_LOSS = 4;
const S_SOLD = 5;
const K = 6;
/** Integer values below this (cents) are summed exactly without compensation (see `apply`). */
const EXACT_LIMIT = 2 ** 26;
const MAX_EXACT = 2 ** 53;

export class IncrementalScorer {
  /**
   * Whether rows whose decision did not need `growth` compute it when read (default, exact like
   * `scorePool`), or carry `growth: null` (set false by callers that never read it, e.g. the
   * backtest's decisions: a lazy accessor costs ~1 µs per row and a copy of the outcomes).
   * Decisions are identical either way.
   */
  growthOnDemand = true;
  /** Set by the owner: the equivalent pool's `available` and (active) `chase`. */
  available: boolean;
  chase: PackPool['chase'];
  private readonly table: OutcomeTable;
  private readonly priceCents: number;
  private readonly sealed: boolean[];
  private readonly sum: Float64Array;
  private readonly comp: Float64Array;
  private readonly count: Int32Array;
  /** Per band: 1 while every value added since it was last empty is an exact small integer. */
  private readonly exact: Uint8Array;
  /** Per band: outcome index per position, slot per position, position per slot (−1: absent). */
  private readonly outcome: Int32Array[];
  private readonly slots: Int32Array[];
  private pos: Int32Array[];
  private readonly values: Float64Array[];

  /**
   * @param template metadata and bands (their order, odds and kinds) of the pool; its cards are
   *   not added (see `fromPool`).
   */
  constructor(
    readonly template: PackPool,
    readonly strategy: Strategy,
  ) {
    this.table = outcomeTable(strategy);
    this.priceCents = fastCents(template.price);
    this.available = template.available;
    this.chase = template.chase;
    const n = template.bands.length;
    this.sealed = template.bands.map((b) => b.is_consolation);
    this.sum = new Float64Array(n * K);
    this.comp = new Float64Array(n * K);
    this.count = new Int32Array(n);
    this.exact = new Uint8Array(n).fill(1);
    this.outcome = template.bands.map(() => new Int32Array(8));
    this.slots = template.bands.map(() => new Int32Array(8));
    this.values = template.bands.map(() => new Float64Array(8));
    this.pos = template.bands.map(() => new Int32Array(8).fill(-1));
  }

  /** A scorer holding a pool body's cards (slot = index in `pool.cards`); cards of no band are ignored. */
  static fromPool(pool: PackPool, strategy: Strategy): IncrementalScorer {
    const s = new IncrementalScorer(pool, strategy);
    const band = new Map<string, number>();
    pool.bands.forEach((b, i) => {
      if (!band.has(b.bucket_id)) band.set(b.bucket_id, i);
    });
    pool.cards.forEach((c, i) => {
      const b = band.get(c.bucket_id);
      if (b !== undefined) s.add(b, i, fastCents(c.market_value));
    });
    return s;
  }

  /** Cards in band `band`. */
  bandCount(band: number): number {
    return this.count[band]!;
  }

  has(band: number, slot: number): boolean {
    const p = this.pos[band]!;
    return slot < p.length && p[slot]! >= 0;
  }

  /** Adds card `slot` (any non-negative id unique within the band) worth `valueCents` to `band`. */
  add(band: number, slot: number, valueCents: number): void {
    if (this.has(band, slot)) throw new RangeError(`card ${slot} is already in band ${band}`);
    if (this.growthHold) this.detachGrowth();
    const o = this.table.of(valueCents, this.sealed[band]!);
    const n = this.count[band]!;
    if (n === this.outcome[band]!.length) this.growBand(band);
    if (slot >= this.pos[band]!.length) {
      const g = new Int32Array(Math.max(slot + 1, this.pos[band]!.length * 2)).fill(-1);
      g.set(this.pos[band]!);
      this.pos[band] = g;
    }
    this.outcome[band]![n] = o;
    this.slots[band]![n] = slot;
    this.values[band]![n] = valueCents;
    this.pos[band]![slot] = n;
    this.count[band] = n + 1;
    this.apply(band, o, valueCents, 1);
  }

  /** Removes card `slot` from `band` (swap-remove, O(1)). */
  remove(band: number, slot: number): void {
    if (!this.has(band, slot)) throw new RangeError(`card ${slot} is not in band ${band}`);
    if (this.growthHold) this.detachGrowth();
    const pos = this.pos[band]!;
    const at = pos[slot]!;
    const o = this.outcome[band]![at]!;
    const v = this.values[band]![at]!;
    const last = this.count[band]! - 1;
    const lastSlot = this.slots[band]![last]!;
    this.outcome[band]![at] = this.outcome[band]![last]!;
    this.values[band]![at] = this.values[band]![last]!;
    this.slots[band]![at] = lastSlot;
    pos[lastSlot] = at;
    pos[slot] = -1;
    this.count[band] = last;
    this.apply(band, o, v, -1);
    if (last === 0) {
      // An empty band restarts from exact zeros.
      this.sum.fill(0, band * K, band * K + K);
      this.comp.fill(0, band * K, band * K + K);
      this.exact[band] = 1;
    }
  }

  /** A card's value changed (e.g. value drift). */
  revalue(band: number, slot: number, valueCents: number): void {
    this.remove(band, slot);
    this.add(band, slot, valueCents);
  }

  /** Rows made since the last change whose growth is not read yet: they get a copy of the outcomes. */
  private growthHold: { outcomes: Int32Array[] | null; counts: Int32Array | null } | null = null;
  private detachGrowth(): void {
    const h = this.growthHold!;
    // One buffer for every band (views into it): one allocation instead of one per band.
    let total = 0;
    for (let b = 0; b < this.count.length; b++) total += this.count[b]!;
    const flat = new Int32Array(total);
    const outcomes: Int32Array[] = [];
    let at = 0;
    for (let b = 0; b < this.count.length; b++) {
      const n = this.count[b]!;
      flat.set(this.outcome[b]!.subarray(0, n), at);
      outcomes.push(flat.subarray(at, at + n));
      at += n;
    }
    h.outcomes = outcomes;
    h.counts = this.count.slice();
    this.growthHold = null;
  }

  private growBand(band: number): void {
    const cap = this.outcome[band]!.length * 2;
    const gi = (a: Int32Array) => {
      const b = new Int32Array(cap);
      b.set(a);
      return b;
    };
    this.outcome[band] = gi(this.outcome[band]!);
    this.slots[band] = gi(this.slots[band]!);
    const v = new Float64Array(cap);
    v.set(this.values[band]!);
    this.values[band] = v;
  }

  private loss(o: number): number {
    const t = this.table;
    const f2 = t.f2[o]!;
    const price = this.priceCents;
    return (t.x[o]! < price ? 1 - f2 : 0) + (f2 > 0 && t.x2[o]! < price ? f2 : 0);
  }

  private ex2(o: number): number {
    return this.table.ex2[o]!;
  }

  private apply(band: number, o: number, v: number, sign: number): void {
    const t = this.table;
    const b = band * K;
    // Integer cents below 2^26 whose running Σ value² stays below 2^53: every partial sum is an
    // exact integer in a double, so no compensation is needed (the compensated sum would give the
    // very same bits with a zero compensation term).
    const sum = this.sum;
    const v2 = sum[b + S_VALUE2]! + sign * v * v;
    if (
      this.exact[band] === 1 &&
      Number.isInteger(v) &&
      v < EXACT_LIMIT &&
      v > -EXACT_LIMIT &&
      v2 < MAX_EXACT &&
      v2 > -MAX_EXACT
    ) {
      sum[b + S_VALUE] = sum[b + S_VALUE]! + sign * v;
      sum[b + S_VALUE2] = v2;
      sum[b + S_SOLD] = sum[b + S_SOLD]! + sign * t.sold[o]!;
    } else {
      this.exact[band] = 0;
      this.acc(b + S_VALUE, sign * v);
      this.acc(b + S_VALUE2, sign * v * v);
      this.acc(b + S_SOLD, sign * t.sold[o]!);
    }
    this.acc(b + S_EXPECTED, sign * t.expected[o]!);
    this.acc(b + S_EX2, sign * t.ex2[o]!);
    this.acc(b + S_LOSS, sign * this.loss(o));
  }

  /** Neumaier compensated summation. */
  private acc(i: number, x: number): void {
    const s = this.sum[i]!;
    const t = s + x;
    this.comp[i] = this.comp[i]! + (Math.abs(s) >= Math.abs(x) ? s - t + x : x - t + s);
    this.sum[i] = t;
  }

  private total(i: number): number {
    return this.sum[i]! + this.comp[i]!;
  }

  /** Whether a pull can be drawn (else `row` returns null, as scorePools skips an empty pool). */
  drawable(view: PackPool = this.template): boolean {
    const chase = view === this.template ? this.chase : view.chase;
    const chaseP = chase ? chase.probability : 0;
    if (chaseP >= 1) return true;
    for (let b = 0; b < this.count.length; b++)
      if (this.count[b]! > 0 && view.bands[b]!.odds > 0) return true;
    return false;
  }

  /** An independent copy (same cards, same sums): cheaper than adding the cards again. */
  clone(): IncrementalScorer {
    const c = Object.create(IncrementalScorer.prototype) as IncrementalScorer;
    Object.assign(c, this, {
      sum: this.sum.slice(),
      comp: this.comp.slice(),
      count: this.count.slice(),
      exact: this.exact.slice(),
      outcome: this.outcome.map((a) => a.slice()),
      slots: this.slots.map((a) => a.slice()),
      pos: this.pos.map((a) => a.slice()),
      values: this.values.map((a) => a.slice()),
      header: null,
      headerFor: null,
      growthHold: null,
    });
    return c;
  }

  /**
   * The row `scorePool(this.body(), strategy, ctx)` would give, from the band sums; null when the
   * pool cannot produce a pull (`scorePool` would throw EmptyPoolError).
   */
  row(ctx: ScoreContext = {}): ScoreRow | null {
    return this.rowFor(this.poolHeader(), ctx);
  }

  /**
   * The row of another pool over the same cards: `view` gives the header, `available`, `chase`
   * and the band odds (same bands in the same order, same price), e.g. another risk level of the
   * pack, so one scorer serves every risk level that shares a price.
   */
  rowFor(view: PackPool, ctx: ScoreContext = {}): ScoreRow | null {
    const bands = view.bands;
    if (bands.length !== this.count.length) throw new RangeError('view has other bands than the scorer');
    if (fastCents(view.price) !== this.priceCents)
      throw new RangeError('view has another price than the scorer');
    const chase = view.chase;
    const chaseP = chase ? chase.probability : 0;
    let oddsSum = 0;
    for (let b = 0; b < bands.length; b++) {
      const o = bands[b]!.odds;
      if (this.count[b]! > 0 && o > 0) oddsSum += o;
    }
    if (chaseP < 1 && !(oddsSum > 0)) return null;
    const t = this.table;
    const rest = chaseP < 1 ? 1 - chaseP : 0;
    let ev = 0;
    let ev2 = 0;
    let mean = 0;
    let ex2 = 0;
    let pLoss = 0;
    let soldBack = 0;
    let chaseOutcome = -1;
    if (chase && chaseP > 0) {
      const v = fastCents(chase.card.market_value);
      chaseOutcome = t.of(v, false);
      ev += chaseP * v;
      ev2 += chaseP * v * v;
      mean += chaseP * t.expected[chaseOutcome]!;
      ex2 += chaseP * this.ex2(chaseOutcome);
      pLoss += chaseP * this.loss(chaseOutcome);
      soldBack += chaseP * t.sold[chaseOutcome]!;
    }
    // Per-card probability of each live band, kept for growth.
    const each = new Float64Array(bands.length);
    for (let b = 0; b < bands.length; b++) {
      const n = this.count[b]!;
      const odds = bands[b]!.odds;
      if (n === 0 || !(odds > 0) || rest <= 0) continue;
      const e = (rest * odds) / oddsSum / n;
      each[b] = e;
      const k = b * K;
      ev += e * this.total(k + S_VALUE);
      ev2 += e * this.total(k + S_VALUE2);
      mean += e * this.total(k + S_EXPECTED);
      ex2 += e * this.total(k + S_EX2);
      pLoss += e * this.total(k + S_LOSS);
      soldBack += e * this.total(k + S_SOLD);
    }
    const priceCents = this.priceCents;
    const balance = ctx.balanceCents;
    const withGrowth = balance !== undefined && balance > priceCents && balance > 0;
    let lazyGrowth: (() => number) | null = null;
    if (withGrowth && !this.growthOnDemand) {
      // Read only by the decision, synchronously, over the live outcomes: no copy to keep.
      lazyGrowth = () =>
        growthOf(t, balance, priceCents, chaseP, chaseOutcome, each, this.outcome, this.count);
    } else if (withGrowth) {
      // Outcomes as they are now: the row stays right whatever the scorer sees later. They are
      // copied only if the scorer changes before growth is read (copy on write, shared by the rows
      // made since the last change); until then the live arrays are the same outcomes.
      let hold = this.growthHold;
      if (!hold) {
        hold = { outcomes: null, counts: null };
        this.growthHold = hold;
      }
      const h = hold;
      lazyGrowth = () =>
        growthOf(
          t,
          balance,
          priceCents,
          chaseP,
          chaseOutcome,
          each,
          h.outcomes ?? this.outcome,
          h.counts ?? this.count,
        );
    }
    const stats: RealizedStats = {
      mean,
      meanLow: mean,
      ex2,
      pLoss: Math.min(1, pLoss),
      shareSoldBack: Math.min(1, soldBack),
      growth: Number.NaN,
    };
    const dist = {
      evCents: ev,
      evLoCents: ev,
      evHiCents: ev,
      varianceCents2: Math.max(0, ev2 - ev * ev),
      estimated: false,
      notes: [] as string[],
    };
    const sign = withGrowth && t.nonNegative ? growthSign(mean, ex2, priceCents, balance) : 0;
    return rowFromStats(view, this.strategy, ctx, dist, stats, lazyGrowth, sign, this.growthOnDemand);
  }

  private header: PackPool | null = null;
  private headerFor: { available: boolean; chase: PackPool['chase'] } | null = null;
  /** The template with the current `available` and `chase` (what `rowFromStats` reads of the pool). */
  private poolHeader(): PackPool {
    if (!this.header || this.headerFor?.available !== this.available || this.headerFor.chase !== this.chase) {
      this.header = { ...this.template, available: this.available, chase: this.chase };
      this.headerFor = { available: this.available, chase: this.chase };
    }
    return this.header;
  }

  /** The equivalent pool body (for tests and debugging: O(cards)). */
  body(): PackPool {
    const cards: PoolCard[] = [];
    const bands: Band[] = this.template.bands.map((b, i) => {
      const n = this.count[i]!;
      const odds = n > 0 ? b.odds : 0;
      if (odds > 0)
        for (let k = 0; k < n; k++) {
          const v = this.values[i]![k]!;
          cards.push({
            id: `s${this.slots[i]![k]}`,
            name: 'card',
            market_value: v / 100,
            bucket_id: b.bucket_id,
          });
        }
      return { ...b, odds, hittable_cards: odds > 0 ? n : 0 };
    });
    return {
      ...this.template,
      available: this.available,
      chase: this.chase,
      bands,
      cards,
      total_cards: cards.length,
    };
  }
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

/** Σ p · log((B − price + X) / B) over every outcome, as `realizedStats` computes it. */
function growthOf(
  t: OutcomeTable,
  balance: number,
  priceCents: number,
  chaseP: number,
  chaseOutcome: number,
  each: Float64Array,
  outcomes: readonly Int32Array[],
  counts: Int32Array,
): number {
  const base = balance - priceCents;
  const logB = Math.log(balance);
  let growth = 0;
  const add = (p: number, o: number) => {
    const p2 = p * t.f2[o]!;
    const p1 = p - p2;
    growth += p1 * (Math.log(base + t.x[o]!) - logB);
    if (p2 > 0) growth += p2 * (Math.log(base + t.x2[o]!) - logB);
  };
  if (chaseOutcome >= 0) add(chaseP, chaseOutcome);
  for (let b = 0; b < outcomes.length; b++) {
    const p = each[b]!;
    if (!(p > 0)) continue;
    const os = outcomes[b]!;
    const n = counts[b]!;
    for (let k = 0; k < n; k++) add(p, os[k]!);
  }
  return growth;
}
