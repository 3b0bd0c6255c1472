/**
 * Expected vs realized on a backtest path (the report's `model` block), kept exactly as the live
 * bot keeps it (src/strategy/model-gap.ts): each order against the row it was opened on (realized
 * EV and spread per pack; the sell-back and held parts from the distribution its pulls were drawn
 * from), each listed pull against the listing life's mean for its value, a listing still running
 * at the path's end marked by what the model expects of it at its age. Sums only, in typed arrays,
 * so paths merge by addition in path order (workers and shards give the same report).
 */
import { listingCurve } from '../../strategy/listing-curve.js';
import {
  emptyFigures,
  type FiguresJson,
  figuresJson,
  gapJson,
  type ModelFigures,
  type ModelJson,
} from '../../strategy/model-gap.js';
import { shortDigest } from '../../strategy/strategy-digest.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { DrawParts, Listing } from './path-market.js';
import { ACT_HOLD, ACT_SELL, type PullPlans } from './pull-plans.js';

/** One set of `ModelFigures` sums with the at-sell-back marking (indexes below). */
const FIGURE_FIELDS = 21;
/** Per path: the sums of all orders, then of the orders still open at the end (resolved = the difference). */
export const MODEL_FIELDS = 2 * FIGURE_FIELDS;
const ORDERS = 0;
const PACKS = 1;
const RESOLVED = 2;
const OPEN = 3;
/** expected, realized, variance (cents, cents²) of: total, then sell_back, listing, held with pulls first. */
const TOTAL = 4;
const SELL = 7;
const LIST = 11;
const HELD = 15;
/** The at-sell-back marking: realized of the total and of the listing part. */
const FLOOR_TOTAL = 19;
const FLOOR_LIST = 20;

/**
 * Whole sums up to this size (2^52) add exactly in any order while every term is whole and
 * nonnegative and the terms together stay below it too (partial sums < 2^53).
 */
const WHOLE_LIMIT = 2 ** 52;
const wholeBelow = (x: number) => Number.isInteger(x) && Math.abs(x) <= WHOLE_LIMIT;

/** Per path and pool: orders, packs, resolved packs, open pulls, expected, realized, variance. */
export const MODEL_POOL_FIELDS = 7;

export const newDrawParts = (): DrawParts => ({ sellMean: 0, sellM2: 0, heldMean: 0, heldM2: 0 });

export function clearDrawParts(out: DrawParts): void {
  out.sellMean = 0;
  out.sellM2 = 0;
  out.heldMean = 0;
  out.heldM2 = 0;
}

/** Adds plan `j` drawn with probability `w` to `out` (a listed pull is the listing part's, not here). */
export function addDrawn(out: DrawParts, plans: PullPlans, j: number, w: number): void {
  const a = plans.amount[j]!;
  const act = plans.action[j];
  if (act === ACT_SELL) {
    out.sellMean += w * a;
    out.sellM2 += w * a * a;
  } else if (act === ACT_HOLD) {
    out.heldMean += w * a;
    out.heldM2 += w * a * a;
  }
}

/** An order's own sums (FIGURE_FIELDS), kept while it has a listing running. */
interface OrderSums {
  sums: Float64Array;
  running: number;
  /** Orders booked before it on the path (its place in `finish`'s sum). */
  seq: number;
}

/**
 * Order sums arrays left by finished paths (of this thread), for the next ones: a path books
 * dozens of orders with listings at once, and a typed array is slow to make.
 */
const SPARE_SUMS: Float64Array[] = [];
const MAX_SPARE_SUMS = 1024;

/** An order's terms, added to a MODEL_FIELDS array (the path's totals, or the order's own). */
function addOrder(
  a: Float64Array,
  packs: number,
  expected: number,
  costCents: number,
  variance: number,
  sellPart: number,
  sellVariance: number,
  heldPart: number,
  heldVariance: number,
): void {
  a[ORDERS]! += 1;
  a[PACKS]! += packs;
  a[TOTAL]! += expected;
  a[TOTAL + 1]! += -costCents;
  a[TOTAL + 2]! += variance;
  a[FLOOR_TOTAL]! += -costCents;
  a[SELL + 1]! += sellPart;
  a[SELL + 3]! += sellVariance;
  a[HELD + 1]! += heldPart;
  a[HELD + 3]! += heldVariance;
}

/** One path's model sums. */
export class PathModel {
  /** All orders' sums (FIGURE_FIELDS), then those of the orders still open at the end. */
  readonly totals = new Float64Array(MODEL_FIELDS);
  readonly pools: Float64Array;
  private readonly mean: number;
  private readonly curve;
  /** The order being booked, and the order of each listing still running. */
  private current: Float64Array = new Float64Array(FIGURE_FIELDS);
  private currentListings = 0;
  private readonly pendingListings: Listing[] = [];
  /**
   * Orders with a listing running, by slot (`Listing.modelOrder`); a slot whose order has none
   * left (`running` 0) is reused with its sums array (a typed array per order is slow to make).
   */
  private readonly orders: OrderSums[] = [];
  private readonly freeSlots: number[] = [];
  private booked = 0;
  /** Whether the order being booked keeps its own sums (`order`), and its cost. */
  private tracked = true;
  private costCents = 0;

  constructor(
    strategy: Strategy,
    nPools: number,
    private readonly plans: PullPlans,
    /** The path's end (ms): listings still running then are marked at their age. */
    private readonly end: number,
  ) {
    this.pools = new Float64Array(nPools * MODEL_POOL_FIELDS);
    this.curve = listingCurve(strategy);
    this.mean = this.curve.mean;
  }

  /**
   * A new path, the sums of the last one cleared (after its `finish`): a caller running many
   * paths keeps one model instead of making its typed arrays per path.
   */
  reset(): void {
    this.totals.fill(0);
    this.pools.fill(0);
    this.currentListings = 0;
    this.orders.length = 0;
    this.freeSlots.length = 0;
    this.booked = 0;
  }

  /** Adds `x` to field `i` of the path and of `order`'s own sums. */
  private add(i: number, x: number, order: Float64Array): void {
    this.totals[i]! += x;
    order[i]! += x;
  }

  /**
   * An order of `packs` packs of pool `pool`, opened on a row (cents per pack), costing
   * `costCents`. `tracked` false: the order lists none of its pulls (known before its pulls are
   * booked), so nothing will read its own sums and only the path's are kept.
   */
  order(
    pool: number,
    packs: number,
    realizedEvCents: number,
    sdCents: number,
    costCents: number,
    parts: DrawParts,
    tracked = true,
  ) {
    this.currentListings = 0;
    this.tracked = tracked;
    this.costCents = costCents;
    const expected = packs * realizedEvCents - costCents;
    const variance = packs * sdCents * sdCents;
    const sellPart = packs * parts.sellMean;
    const sellVariance = packs * Math.max(0, parts.sellM2 - parts.sellMean ** 2);
    const heldPart = packs * parts.heldMean;
    const heldVariance = packs * Math.max(0, parts.heldM2 - parts.heldMean ** 2);
    addOrder(
      this.totals,
      packs,
      expected,
      costCents,
      variance,
      sellPart,
      sellVariance,
      heldPart,
      heldVariance,
    );
    if (tracked) {
      this.current.fill(0);
      addOrder(
        this.current,
        packs,
        expected,
        costCents,
        variance,
        sellPart,
        sellVariance,
        heldPart,
        heldVariance,
      );
    }
    const o = pool * MODEL_POOL_FIELDS;
    const p = this.pools;
    p[o]! += 1;
    p[o + 1]! += packs;
    p[o + 4]! += expected;
    p[o + 5]! -= costCents;
    p[o + 6]! += variance;
  }

  /**
   * The current order's pulls `out[0..got)` that were sold back at once or held (plans ACT_SELL,
   * ACT_HOLD), resolved at their plans' amounts, added to the model's sums and to `poolValue[pool]`
   * (the path's value realized per pool), as if pull by pull in order.
   */
  resolvedPulls(pool: number, out: Int32Array, got: number, poolValue: Float64Array): void {
    const plans = this.plans;
    let sold = 0;
    let kept = 0;
    let sellSum = 0;
    let heldSum = 0;
    let whole = true;
    for (let k = 0; k < got; k++) {
      const j = out[k]!;
      const act = plans.action[j];
      if (act === ACT_SELL) {
        const a = plans.amount[j]!;
        sold++;
        sellSum += a;
        whole &&= Number.isInteger(a) && a >= 0;
      } else if (act === ACT_HOLD) {
        const a = plans.amount[j]!;
        kept++;
        heldSum += a;
        whole &&= Number.isInteger(a) && a >= 0;
      }
    }
    this.resolvedSums(pool, sold, kept, sellSum, heldSum, whole, out, got, poolValue);
  }

  /**
   * `resolvedPulls` from the pulls' counts and sums (sold back: `sold`, Σ `sellSum`; held: `kept`,
   * Σ `heldSum`, each summed in pull order; `whole`: every such amount whole and nonnegative).
   * Counts are small whole numbers, exact in any order. The amounts go in as one sum per field
   * when that is exact (whole amounts and sums, far below 2^53: every partial sum is then exact in
   * both orders), else one by one in pull order, as floating sums must.
   */
  resolvedSums(
    pool: number,
    sold: number,
    kept: number,
    sellSum: number,
    heldSum: number,
    whole: boolean,
    out: Int32Array,
    got: number,
    poolValue: Float64Array,
  ): void {
    if (sold + kept === 0) return;
    const tracked = this.tracked;
    const c = this.current;
    const t = this.totals;
    const p = this.pools;
    const o = pool * MODEL_POOL_FIELDS;
    t[SELL]! += sold;
    t[HELD]! += kept;
    t[RESOLVED]! += sold + kept;
    if (tracked) {
      c[SELL]! += sold;
      c[HELD]! += kept;
      c[RESOLVED]! += sold + kept;
    }
    p[o + 2]! += sold + kept;
    const all = sellSum + heldSum;
    // An untracked order's own sums would be those `order` starts (0, and −cost twice).
    const cost = -this.costCents;
    if (
      whole &&
      all <= WHOLE_LIMIT &&
      wholeBelow(t[SELL + 2]!) &&
      wholeBelow(tracked ? c[SELL + 2]! : 0) &&
      wholeBelow(t[HELD + 2]!) &&
      wholeBelow(tracked ? c[HELD + 2]! : 0) &&
      wholeBelow(t[TOTAL + 1]!) &&
      wholeBelow(tracked ? c[TOTAL + 1]! : cost) &&
      wholeBelow(t[FLOOR_TOTAL]!) &&
      wholeBelow(tracked ? c[FLOOR_TOTAL]! : cost) &&
      wholeBelow(p[o + 5]!) &&
      wholeBelow(poolValue[pool]!)
    ) {
      if (sold > 0) t[SELL + 2]! += sellSum;
      if (kept > 0) t[HELD + 2]! += heldSum;
      t[TOTAL + 1]! += all;
      t[FLOOR_TOTAL]! += all;
      if (tracked) {
        if (sold > 0) c[SELL + 2]! += sellSum;
        if (kept > 0) c[HELD + 2]! += heldSum;
        c[TOTAL + 1]! += all;
        c[FLOOR_TOTAL]! += all;
      }
      p[o + 5]! += all;
      poolValue[pool]! += all;
      return;
    }
    const plans = this.plans;
    for (let k = 0; k < got; k++) {
      const j = out[k]!;
      const act = plans.action[j];
      if (act !== ACT_SELL && act !== ACT_HOLD) continue;
      const a = plans.amount[j]!;
      const at = act === ACT_HOLD ? HELD + 2 : SELL + 2;
      t[at]! += a;
      t[TOTAL + 1]! += a;
      t[FLOOR_TOTAL]! += a;
      if (tracked) {
        c[at]! += a;
        c[TOTAL + 1]! += a;
        c[FLOOR_TOTAL]! += a;
      }
      p[o + 5]! += a;
      poolValue[pool]! += a;
    }
  }

  /** A pull of the current order, listed (`l.plan`, `l.listedAt`): compared with the listing life. */
  listed(l: Listing): void {
    // By index: the array keeps its length from order to order (no resizing per order).
    this.pendingListings[this.currentListings] = l;
    this.listedPlan(l.plan, l.listedAt);
  }

  /**
   * `listed` by the listing's plan and time (a caller that keeps its listings in typed arrays;
   * it then gives the listings their order's slot from `closeOrder`).
   */
  listedPlan(plan: number, listedAt: number): void {
    const v = this.plans.value[plan]!;
    const c = this.current;
    this.add(LIST, 1, c);
    this.add(LIST + 1, v * this.mean, c);
    // The spread of the mark process at the age the listing will have when the path ends.
    this.add(LIST + 3, v * v * this.curve.markAt(this.end - listedAt).variance, c);
    this.currentListings++;
  }

  /** The current order's pulls are all booked: an order with listings is followed until they end. */
  orderDone(): void {
    const n = this.currentListings;
    const slot = this.closeOrder();
    for (let k = 0; k < n; k++) this.pendingListings[k]!.modelOrder = slot;
  }

  /**
   * `orderDone` for a caller that keeps its listings itself: the slot of the order, which its
   * listings carry (-1: the order listed nothing).
   */
  closeOrder(): number {
    let slot = -1;
    if (this.currentListings > 0) {
      slot = this.freeSlots.pop() ?? this.orders.length;
      const o = this.orders[slot];
      const sums = this.current;
      if (o) {
        this.current = o.sums;
        o.sums = sums;
        o.running = this.currentListings;
        o.seq = this.booked;
      } else {
        this.orders.push({ sums, running: this.currentListings, seq: this.booked });
        this.current = SPARE_SUMS.pop() ?? new Float64Array(FIGURE_FIELDS);
      }
    }
    this.booked++;
    this.currentListings = 0;
    return slot;
  }

  /** A listing that ended within the path, paying `amountCents`. */
  ended(l: Listing, amountCents: number): void {
    const slot = l.modelOrder;
    this.endedIn(slot, l.pool, amountCents);
    if (slot >= 0) l.modelOrder = -1;
  }

  /** `ended` by the listing's order slot (-1: none) and pool. */
  endedIn(slot: number, pool: number, amountCents: number): void {
    const o = slot >= 0 ? this.orders[slot]! : undefined;
    const sums = o?.sums ?? this.current;
    this.add(LIST + 2, amountCents, sums);
    this.add(FLOOR_LIST, amountCents, sums);
    this.add(TOTAL + 1, amountCents, sums);
    this.add(FLOOR_TOTAL, amountCents, sums);
    this.add(RESOLVED, 1, sums);
    if (o && --o.running === 0) this.freeSlots.push(slot);
    const p = pool * MODEL_POOL_FIELDS;
    this.pools[p + 2]! += 1;
    this.pools[p + 5]! += amountCents;
  }

  /** A listing still running at the path's end: the model's mark at its age, or its sell-back offer. */
  open(l: Listing, sellBackCents: number): void {
    this.openIn(l.modelOrder, l.pool, l.plan, l.listedAt, sellBackCents);
  }

  /** `open` by the listing's order slot (-1: none), pool, plan and time. */
  openIn(slot: number, pool: number, plan: number, listedAt: number, sellBackCents: number): void {
    const mark = this.plans.value[plan]! * this.curve.markAt(this.end - listedAt).mark;
    const o = slot >= 0 ? this.orders[slot]! : undefined;
    const sums = o?.sums ?? this.current;
    this.add(LIST + 2, mark, sums);
    this.add(FLOOR_LIST, sellBackCents, sums);
    this.add(TOTAL + 1, mark, sums);
    this.add(FLOOR_TOTAL, sellBackCents, sums);
    this.add(OPEN, 1, sums);
    const p = pool * MODEL_POOL_FIELDS;
    this.pools[p + 3]! += 1;
    this.pools[p + 5]! += mark;
  }

  /** After the last `open`: the sums of the orders with a listing still running, kept apart. */
  finish(): void {
    // In booking order (the sums' order, so a path's figures do not depend on slot reuse).
    const open = this.orders.filter((o) => o.running > 0).sort((a, b) => a.seq - b.seq);
    for (const o of open)
      for (let k = 0; k < FIGURE_FIELDS; k++) this.totals[FIGURE_FIELDS + k]! += o.sums[k]!;
    // The path is over: its sums arrays serve the next path (`order` clears one before use).
    for (const o of this.orders) if (SPARE_SUMS.length < MAX_SPARE_SUMS) SPARE_SUMS.push(o.sums);
    this.orders.length = 0;
  }
}

/** Figures from one row of summed path fields (`at`: MODEL_FIELDS wide). */
function figuresOf(t: ArrayLike<number>, floor: boolean): ModelFigures {
  const f = emptyFigures();
  f.orders = t[ORDERS]!;
  f.packs = t[PACKS]!;
  f.resolvedPacks = t[RESOLVED]!;
  f.openPulls = t[OPEN]!;
  f.total = {
    packs: f.packs,
    pulls: t[RESOLVED]! + t[OPEN]!,
    expected: t[TOTAL]!,
    realized: floor ? t[FLOOR_TOTAL]! : t[TOTAL + 1]!,
    variance: t[TOTAL + 2]!,
  };
  const part = (at: number, packs: number, realized?: number) => ({
    packs,
    pulls: t[at]!,
    expected: t[at + 1]!,
    realized: realized ?? t[at + 2]!,
    variance: t[at + 3]!,
  });
  f.parts.sell_back = part(SELL, f.packs);
  f.parts.listing = part(LIST, t[LIST]!, floor ? t[FLOOR_LIST]! : undefined);
  f.parts.held = part(HELD, f.packs);
  return f;
}

/** A pool as the block's `by_pack` names it. */
export interface ModelPoolName {
  category: string;
  packType: string;
  risk: string;
}

/**
 * The report's `model` block from the per-path sums of the paths `idx` (summed in that order), the
 * same shape as `packbot report --json`'s: `series` is empty (paths have no common time line).
 */
export function modelBlock(
  model: Float64Array,
  modelPools: Float64Array,
  idx: readonly number[],
  pools: readonly ModelPoolName[],
  strategy: { name: string; digest: string },
): ModelJson {
  const sum = new Float64Array(MODEL_FIELDS);
  const nPools = pools.length;
  const perPool = new Float64Array(nPools * MODEL_POOL_FIELDS);
  const w = nPools * MODEL_POOL_FIELDS;
  for (const i of idx) {
    for (let k = 0; k < MODEL_FIELDS; k++) sum[k]! += model[i * MODEL_FIELDS + k]!;
    for (let k = 0; k < w; k++) perPool[k]! += modelPools[i * w + k]!;
  }
  const all = figuresJson(figuresOf(sum, false));
  const closed = new Float64Array(FIGURE_FIELDS);
  for (let k = 0; k < FIGURE_FIELDS; k++) closed[k] = sum[k]! - sum[FIGURE_FIELDS + k]!;
  const byPack: ModelJson['by_pack'] = [];
  pools.forEach((p, j) => {
    const o = j * MODEL_POOL_FIELDS;
    if (perPool[o] === 0) return;
    byPack.push({
      category: p.category,
      pack_type: p.packType,
      risk_level: p.risk,
      ...gapJson({
        packs: perPool[o + 1]!,
        pulls: perPool[o + 2]! + perPool[o + 3]!,
        expected: perPool[o + 4]!,
        realized: perPool[o + 5]!,
        variance: perPool[o + 6]!,
      }),
      orders: perPool[o]!,
      resolved_packs: perPool[o + 2]!,
      open_pulls: perPool[o + 3]!,
    });
  });
  const byStrategy: (FiguresJson & { strategy: string; version: string })[] =
    all.orders > 0 ? [{ strategy: strategy.name, version: shortDigest(strategy.digest), ...all }] : [];
  return {
    marking: 'model',
    ...all,
    excluded_orders: 0,
    at_sell_back: figuresJson(figuresOf(sum, true)),
    resolved: figuresJson(figuresOf(closed, false)),
    by_pack: byPack,
    by_strategy: byStrategy,
    series: [],
  };
}
