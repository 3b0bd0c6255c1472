/**
 * The static market: the snapshot's pools, unchanged for ever (draws with replacement from the
 * exact pull distribution), and listings that fill with the strategy's own fill probability within
 * `max_days` — the scoring model, so a backtest's means converge to `packbot score`'s realized EV.
 */
import { DAY_MS } from '../../core/clock.js';
import { toCents } from '../../core/money.js';
import type { Rng } from '../../core/prng.js';
import type { LabelledAlias } from '../../market/sampler.js';
import { budgetPrice } from '../../strategy/decide-open.js';
import { compareRows, type ScoreRow, scorePools } from '../../strategy/score.js';
import type { BacktestModel } from './model.js';
import { rowSdCents } from './path.js';
import type { DrawParts, Listing, PathMarket, RowsPick } from './path-market.js';
import { addDrawn, newDrawParts } from './path-model.js';
import { ACT_LIST } from './pull-plans.js';

/** Entries of the direct-mapped table of balance buckets (a power of two). */
const SLOTS = 1024;

/** A balance bucket's rows and their pick. */
export interface BucketRows {
  rows: readonly ScoreRow[];
  pick: RowsPick;
}

/**
 * What every static path of a worker shares: the rows per balance bucket (they depend on the
 * balance only through sizing), and per pool its draw table and the parts of its distribution.
 */
export class StaticRowsCache {
  /** Per balance bucket, its rows and their pick (`RowsPick`, interned: equal picks are one object). */
  private readonly cache = new Map<number, BucketRows>();
  private readonly slotKeys = new Float64Array(SLOTS).fill(Number.NaN);
  private readonly slotRows: BucketRows[] = [];
  private readonly interned = new Map<string, RowsPick>();
  private readonly bodies;
  /** Per pool, its alias table drawing plan indexes (`PullPlans`) directly; null: nothing to draw. */
  readonly draws: readonly (LabelledAlias | null)[];
  /** Per plan, log(1 − fill) of its listing (the fill time's scale; 0 for a plan that is not listed). */
  readonly logMiss: Float64Array;
  /** Per plan, 1 when its amount (sold back or held) is whole and nonnegative (`PathModel.resolvedSums`). */
  readonly wholeAmount: Uint8Array;
  /**
   * Per pool, the sell-back and held parts of its (fixed) distribution: summed once, in atom
   * order (the sums an order's promise reads; an order would otherwise walk every atom).
   */
  readonly parts: readonly DrawParts[];
  constructor(private readonly model: BacktestModel) {
    this.bodies = model.pools.filter((p) => p.dist !== null).map((p) => p.body);
    this.parts = model.pools.map((p) => {
      const out = newDrawParts();
      const dist = p.dist;
      if (dist) for (let i = 0; i < dist.size; i++) addDrawn(out, model.plans, p.atomPlan[i]!, dist.prob[i]!);
      return out;
    });
    this.draws = model.pools.map((p) => p.alias?.labelled(p.atomPlan) ?? null);
    const plans = model.plans;
    this.logMiss = new Float64Array(plans.size);
    for (let j = 0; j < plans.size; j++)
      if (plans.action[j] === ACT_LIST) this.logMiss[j] = Math.log(1 - plans.fill[j]!);
    this.wholeAmount = new Uint8Array(plans.size);
    for (let j = 0; j < plans.size; j++) {
      const a = plans.amount[j]!;
      this.wholeAmount[j] = Number.isInteger(a) && a >= 0 ? 1 : 0;
    }
  }

  /** The rows of balance bucket `balanceCents` and their pick, scored on first use. */
  get(balanceCents: number): BucketRows {
    // A slot's bucket is asked at every order: a direct-mapped table in front of the map.
    const slot = balanceCents & (SLOTS - 1);
    if (this.slotKeys[slot] === balanceCents) return this.slotRows[slot]!;
    let hit = this.cache.get(balanceCents);
    if (!hit) {
      const rows = scorePools(this.bodies, this.model.strategy, {
        balanceCents,
        maxQuantity: this.model.maxQuantity,
      });
      hit = { rows, pick: this.intern(pickOf(rows)) };
      this.cache.set(balanceCents, hit);
    }
    this.slotKeys[slot] = balanceCents;
    this.slotRows[slot] = hit;
    return hit;
  }

  private intern(p: RowsPick): RowsPick {
    const b = p.best;
    const key = b
      ? `${b.category}\u0000${b.pack_type}\u0000${b.risk_level}\u0000${b.decision.action === 'open' ? b.decision.quantity : 0}\u0000${p.priceCents}\u0000${p.maxPriceCents}\u0000${p.realizedEvCents}\u0000${p.sdCents}`
      : '';
    let hit = this.interned.get(key);
    if (!hit) {
      hit = p;
      this.interned.set(key, p);
    }
    return hit;
  }
}

/**
 * The row `decideOpen` picks from `rows` when the day's packs, the rate limit and the budget leave
 * every open row with a price a quantity of at least one: its scan over the same rows with the
 * same tests (an open row, a price above zero, the row's own quantity at least one), the least in
 * `compareRows` order, first on a tie.
 */
function pickOf(rows: readonly ScoreRow[]): RowsPick {
  let best: ScoreRow | null = null;
  let priceCents = 0;
  let maxPriceCents = 0;
  for (const row of rows) {
    if (row.decision.action !== 'open') continue;
    const price = budgetPrice(row);
    if (!(price > 0) || !(row.decision.quantity >= 1)) continue;
    if (price > maxPriceCents) maxPriceCents = price;
    if (best === null || compareRows(row, best) < 0) {
      best = row;
      priceCents = price;
    }
  }
  return {
    best,
    priceCents,
    maxPriceCents,
    realizedEvCents: best ? toCents(best.realized_ev) : 0,
    sdCents: best ? rowSdCents(rows, best) : 0,
  };
}

export class StaticMarket implements PathMarket {
  /** Cards are backtested in the dynamic market only (the report says so). */
  readonly shop = null;
  private readonly maxDaysMs: number;
  private lastBalance = Number.NaN;
  private lastRows: readonly ScoreRow[] = [];
  private lastRowsPick: RowsPick | null = null;

  constructor(
    private readonly model: BacktestModel,
    private readonly cache: StaticRowsCache,
  ) {
    this.maxDaysMs = model.strategy.sell.list.max_days * DAY_MS;
  }

  advance(): void {}

  /** The snapshot's distribution, for ever: each atom's plan with its probability (summed once). */
  drawParts(pool: number, _now: number, out: DrawParts): void {
    const p = this.cache.parts[pool]!;
    out.sellMean = p.sellMean;
    out.sellM2 = p.sellM2;
    out.heldMean = p.heldMean;
    out.heldM2 = p.heldM2;
  }

  rows(balanceCents: number): readonly ScoreRow[] {
    // A path asks at every slot and its bucket moves every few orders: the last answer first.
    if (balanceCents !== this.lastBalance) {
      this.lastBalance = balanceCents;
      const hit = this.cache.get(balanceCents);
      this.lastRows = hit.rows;
      this.lastRowsPick = hit.pick;
    }
    return this.lastRows;
  }

  /** Rows are cached per balance bucket and the refresh time is fixed: nothing to keep. */
  rowsUnread(): void {}

  lastPick(): RowsPick | null {
    return this.lastRowsPick;
  }

  nextRefreshAt(): number {
    return Number.POSITIVE_INFINITY;
  }

  /** The pulls' plans straight from the pool's alias table: no per-pull object or lookup. */
  open(pool: number, qty: number, _now: number, rng: Rng, out: Int32Array): number {
    const draws = this.cache.draws[pool];
    if (!draws) return -1;
    draws.fill(rng, qty, out);
    return qty;
  }

  list(l: Listing, now: number, rng: Rng): void {
    const plans = this.model.plans;
    const after = listingSoldAfter(
      plans.fill[l.plan]!,
      this.cache.logMiss[l.plan]!,
      this.maxDaysMs,
      rng.next(),
    );
    if (after >= 0) {
      l.eventAt = now + after;
      l.outcome = 'sold';
      l.amountCents = plans.sale[l.plan]!;
    } else {
      l.eventAt = now + this.maxDaysMs;
      l.outcome = 'sold_back';
      l.amountCents = plans.fallback[l.plan]!;
    }
  }

  holdValue(l: Listing): number {
    return this.model.plans.fallback[l.plan]!;
  }
}

/**
 * When a static listing sells (ms after listing), from one uniform `u`, or -1 when it does not
 * within `maxDaysMs` (then it is delisted and sold back at `maxDaysMs`): a constant hazard with
 * P(sold within max_days) = `fill`, the time drawn given that it sells (`logMiss`: log(1 − fill)).
 */
function listingSoldAfter(fill: number, logMiss: number, maxDaysMs: number, u: number): number {
  if (!(u < fill)) return -1;
  const at = fill >= 1 ? u * maxDaysMs : (maxDaysMs * Math.log(1 - u)) / logMiss;
  return Math.min(maxDaysMs, Math.max(0, at));
}
