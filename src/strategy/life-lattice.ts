/**
 * The state of a listing's life on a lattice, for listing-life.ts: the card's value on a trinomial
 * walk of its log value (a node), and the listing's price. With a reprice band the price is not a
 * function of the value: it was set where the value was at the last reprice (a node) and at the
 * markup of that step, and stays while the value moves inside the band. So listings are kept in
 * price groups, one per (node priced at, markup step), each with its mass over the nodes the value
 * has moved to since; `decideListing` moves a node's mass to the group priced there and then, or
 * ends it. The value's walk keeps its drift in the moves' probabilities, not in a moving centre,
 * so a node's value never changes and a group's price stays exact in cents.
 */
import { DAY_MS, HOUR_MS } from '../core/clock.js';
import { decideListing, type KeepRange, keepRange, type ListingView, markupAfter } from './decide-listing.js';
import { listingPriceCents } from './listing-model.js';
import { SPEC_SELL_BACK_RULES, sellBackAmount } from './market-laws.js';
import type { Strategy } from './strategy-schema.js';

/** The lattice spans this many standard deviations of the log value at the horizon. */
const SPREAD_SD = 8;
/**
 * Mass below which a node's listings are taken as sold back at once: without it the walk's far
 * tails (1e-100 and less) would spread every group over the whole lattice.
 */
const EMPTY = 1e-14;

/**
 * The walk of the log value on nodes `h` apart, one move a tick: up, down or stay. h = sd·√3 (a
 * third of the mass moves, so the fourth moment is a normal's) while the drift fits in the
 * probabilities (|drift| ≤ √2·sd); else the smallest h that carries it.
 */
export interface Walk {
  h: number;
  up: number;
  down: number;
  /** Nodes each side of the start. */
  half: number;
  /**
   * Where the value at listing lies between two nodes (× h): half-way when the value diffuses,
   * so that no node sits on a pull's locked basis. A node there would be neither above nor below
   * it, and decideListing's deadline differs by side, where a continuous value is on each side
   * half of the time.
   */
  offset: number;
}

export function walkOf(drift: number, sd: number, ticks: number): Walk {
  const second = sd * sd + drift * drift;
  if (second === 0) return { h: 0, up: 0, down: 0, half: 0, offset: 0 };
  const h = drift * drift > 2 * sd * sd ? Math.sqrt(second) : sd * Math.sqrt(3);
  const moves = second / (h * h);
  const half = Math.ceil((SPREAD_SD * sd * Math.sqrt(ticks) + Math.abs(drift) * ticks) / h) + 1;
  return { h, up: (moves + drift / h) / 2, down: (moves - drift / h) / 2, half, offset: sd > 0 ? 0.5 : 0 };
}

/** Listings whose price was set alike: at one node's value, at one markup step class. */
interface PriceGroup {
  /** The node priced at (the listing's own group: the node above its value, for keepRange). */
  node: number;
  cls: number;
  /** False for the listing's own group, priced at the value at listing (no node's). */
  keyed: boolean;
  priceCents: number;
  /** An instant inside the step class's period: decideListing reads only its step. */
  pricedAt: number;
  /** Mass by node of the listings at this price still running. */
  mass: Float64Array;
  /** P(sold on a tick) by node at this price (NaN until first needed). */
  fill: Float64Array;
  /** Nodes outside [lo, hi] hold no mass. */
  lo: number;
  hi: number;
  /** Nodes over which decideListing keeps the group before `keepUntil` (keepRange). */
  keepLo: number;
  keepHi: number;
  keepUntil: number;
}

/** What the lattice needs of a listing's setting besides the strategy. */
export interface LatticeSetting {
  strategy: Strategy;
  walk: Walk;
  /** Value at listing (cents) of the card priced: large, so cent rounding is noise. */
  basisCents: number;
  /** The value the sell-back is locked to (cents), and the lock's end (the card acquired at 0). */
  lockBasisCents: number;
  lockEnd: number;
  /** A bought card's lock pays the purchased-card rate and has no fresh window. */
  kind: 'pull' | 'purchase';
  /** Instants past which no listing runs: bounds the markup's step classes. */
  horizon: number;
  /** P(a listing at `ratio` × value sells on one tick). */
  fillOnTick: (ratio: number) => number;
}

const scratchRange: KeepRange = { lo: 0, hi: 0, until: 0 };

/**
 * A listing's life in progress, listed at 0 at the node of its value: `tick` moves the values and
 * sells, `decide` asks decideListing, and the fields hold the cumulative outcome (each a multiple
 * of the value at listing: mass sold and ended, the moments of what they paid, mass × days).
 */
export class LifeLattice {
  sold = 0;
  sale = 0;
  sale2 = 0;
  ended = 0;
  fallback = 0;
  fallback2 = 0;
  days = 0;
  private readonly n: number;
  private readonly values: Float64Array;
  private readonly scratch: Float64Array;
  private readonly period: number;
  /** Step classes: one per markup step within the horizon, the last for every step at the floor. */
  private readonly classes: number;
  private readonly groups: (PriceGroup | undefined)[] = [];
  private active: PriceGroup[] = [];
  private readonly spare: PriceGroup[] = [];
  private readonly view: ListingView;

  constructor(private readonly s: LatticeSetting) {
    const { h, half, offset } = s.walk;
    this.n = 2 * half + 1;
    this.values = Float64Array.from({ length: this.n }, (_, j) =>
      Math.round(s.basisCents * Math.exp((j - half + offset) * h)),
    );
    this.scratch = new Float64Array(this.n);
    this.period = s.strategy.sell.list.reprice_every_hours * HOUR_MS;
    const maxSteps = Math.floor(s.horizon / this.period);
    let classes = 1;
    while (classes <= maxSteps && markupAfter(classes, s.strategy) < markupAfter(classes - 1, s.strategy))
      classes++;
    this.classes = classes;
    this.view = {
      priceCents: 0,
      listedAt: 0,
      pricedAt: 0,
      marketValueCents: s.basisCents,
      basisValueCents: s.lockBasisCents,
      lockedValueUntil: s.lockEnd,
    };
    if (offset === 0) this.groupAt(half, 0).mass[half] = 1;
    else {
      // Listed at the value at listing, between nodes half − 1 and half: half of it at each.
      const g = this.newGroup(
        half,
        0,
        listingPriceCents(s.basisCents, s.strategy.sell.list.markup, s.strategy) ?? 0,
      );
      g.keyed = false;
      g.lo = half - 1;
      g.hi = half;
      g.mass[half - 1] = 0.5;
      g.mass[half] = 0.5;
      this.active.push(g);
    }
  }

  /** One tick of the market: the value moves, then a buyer may come for each listing. */
  tick(at: number): void {
    const { up, down, h } = this.s.walk;
    const stay = 1 - up - down;
    const n = this.n;
    const scratch = this.scratch;
    const fee = this.s.strategy.sell.list.seller_fee_rate;
    for (const g of this.active) {
      const mass = g.mass;
      if (h > 0) {
        // Reflecting edges: mass that would leave the lattice (beyond SPREAD_SD) stays put.
        for (let j = g.lo; j <= g.hi; j++) {
          const m = mass[j]!;
          if (m === 0) continue;
          const upper = j + 1 < n ? j + 1 : j;
          const lower = j > 0 ? j - 1 : j;
          scratch[j] = scratch[j]! + stay * m;
          scratch[upper] = scratch[upper]! + up * m;
          scratch[lower] = scratch[lower]! + down * m;
        }
        g.lo = Math.max(0, g.lo - 1);
        g.hi = Math.min(n - 1, g.hi + 1);
        for (let j = g.lo; j <= g.hi; j++) {
          mass[j] = scratch[j]!;
          scratch[j] = 0;
        }
      }
      const y = (g.priceCents * (1 - fee)) / this.s.basisCents;
      let sold = 0;
      for (let j = g.lo; j <= g.hi; j++) {
        const m = mass[j]!;
        if (m === 0) continue;
        if (m < EMPTY) {
          this.end(m, j, at);
          mass[j] = 0;
          continue;
        }
        let q = g.fill[j]!;
        if (Number.isNaN(q)) {
          q = this.s.fillOnTick(g.priceCents / this.values[j]!);
          g.fill[j] = q;
        }
        sold += m * q;
        mass[j] = m - m * q;
      }
      this.sold += sold;
      this.sale += sold * y;
      this.sale2 += sold * y * y;
      this.days += (sold * at) / DAY_MS;
    }
    this.compact(at);
  }

  /** decideListing for every listing running at `at`: kept, repriced (moved to its new group) or ended. */
  decide(at: number): void {
    const view = this.view;
    // Groups made by this pass's reprices are priced at their target: kept at once.
    const count = this.active.length;
    for (let gi = 0; gi < count; gi++) {
      const g = this.active[gi]!;
      view.priceCents = g.priceCents;
      view.pricedAt = g.pricedAt;
      if (at >= g.keepUntil) this.keepNodes(g, at);
      if (at < g.keepUntil) {
        this.decideNodes(g, g.lo, Math.min(g.hi, g.keepLo - 1), at);
        this.decideNodes(g, Math.max(g.lo, g.keepHi + 1), g.hi, at);
      } else this.decideNodes(g, g.lo, g.hi, at);
    }
    this.compact(at);
  }

  /** Whatever still runs at `at` is sold back then. */
  finish(at: number): void {
    for (const g of this.active)
      for (let j = g.lo; j <= g.hi; j++) {
        const m = g.mass[j]!;
        if (m > 0) this.end(m, j, at);
        g.mass[j] = 0;
      }
    this.compact(at);
  }

  private decideNodes(g: PriceGroup, from: number, to: number, at: number): void {
    const mass = g.mass;
    const view = this.view;
    for (let j = from; j <= to; j++) {
      const m = mass[j]!;
      if (m === 0) continue;
      view.marketValueCents = this.values[j]!;
      const d = decideListing(view, this.s.strategy, at);
      if (d.action === 'keep') continue;
      mass[j] = 0;
      if (d.action === 'delist_and_sell_back') this.end(m, j, at);
      else {
        const to = this.groupAt(j, this.classAt(at));
        to.mass[j] = to.mass[j]! + m;
      }
    }
  }

  /**
   * The nodes over which decideListing keeps group g from `at` until the range's end (keepRange,
   * asked at the node the group was priced at), so that only the nodes outside are decided one by
   * one; none when it is not kept there (a markup step since, or its deadline).
   */
  private keepNodes(g: PriceGroup, at: number): void {
    this.view.marketValueCents = this.values[g.node]!;
    g.keepLo = 0;
    g.keepHi = -1;
    g.keepUntil = Number.NEGATIVE_INFINITY;
    if (!keepRange(this.view, this.s.strategy, at, scratchRange)) return;
    g.keepLo = firstAtLeast(this.values, scratchRange.lo);
    g.keepHi = firstAtLeast(this.values, scratchRange.hi + 1) - 1;
    g.keepUntil = scratchRange.until;
  }

  private end(m: number, node: number, at: number): void {
    const s = this.s;
    const paid = sellBackAmount(s.kind, 0, s.lockBasisCents, this.values[node]!, at, SPEC_SELL_BACK_RULES);
    this.ended += m;
    this.fallback += (m * paid) / s.basisCents;
    this.fallback2 += m * (paid / s.basisCents) ** 2;
    this.days += (m * at) / DAY_MS;
  }

  private classAt(at: number): number {
    return Math.min(this.classes - 1, Math.max(0, Math.floor(at / this.period)));
  }

  /** The group priced at `node` in step class `cls`, active and holding `node` in its range. */
  private groupAt(node: number, cls: number): PriceGroup {
    const key = cls * this.n + node;
    let g = this.groups[key];
    if (!g) {
      // A reprice's price: the target at this node's value and this step's markup (never null:
      // decideListing delists a card too cheap to list instead of repricing it).
      const markup = markupAfter(cls, this.s.strategy);
      g = this.newGroup(node, cls, listingPriceCents(this.values[node]!, markup, this.s.strategy) ?? 0);
      this.groups[key] = g;
      this.active.push(g);
    } else if (g.lo > g.hi) this.active.push(g);
    if (g.lo > g.hi) g.lo = g.hi = node;
    else {
      g.lo = Math.min(g.lo, node);
      g.hi = Math.max(g.hi, node);
    }
    return g;
  }

  /** An empty group (a spare one when there is one), not yet active. */
  private newGroup(node: number, cls: number, priceCents: number): PriceGroup {
    const g = this.spare.pop() ?? {
      node: 0,
      cls: 0,
      keyed: true,
      priceCents: 0,
      pricedAt: 0,
      mass: new Float64Array(this.n),
      fill: new Float64Array(this.n),
      lo: 0,
      hi: -1,
      keepLo: 0,
      keepHi: -1,
      keepUntil: 0,
    };
    g.node = node;
    g.cls = cls;
    g.keyed = true;
    g.priceCents = priceCents;
    g.pricedAt = (cls + 0.5) * this.period;
    g.fill.fill(Number.NaN);
    g.lo = node;
    g.hi = node - 1;
    g.keepUntil = Number.NEGATIVE_INFINITY;
    return g;
  }

  /**
   * Trims each group's nodes to those holding mass and drops the empty groups; one of a step
   * class already past is spare (only the current class takes reprices), as is the listing's own.
   */
  private compact(at: number): void {
    const current = this.classAt(at);
    let kept = 0;
    for (const g of this.active) {
      while (g.lo <= g.hi && g.mass[g.lo] === 0) g.lo++;
      while (g.hi >= g.lo && g.mass[g.hi] === 0) g.hi--;
      if (g.lo <= g.hi) this.active[kept++] = g;
      else if (!g.keyed) this.spare.push(g);
      else if (g.cls < current) {
        this.groups[g.cls * this.n + g.node] = undefined;
        this.spare.push(g);
      }
    }
    this.active.length = kept;
  }
}

/** The first index of the increasing `values` holding at least x (their length when none does). */
function firstAtLeast(values: Float64Array, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
