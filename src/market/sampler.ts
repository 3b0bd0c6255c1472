/**
 * Draw structures for millions of pulls. All of them work on preallocated typed arrays and draw
 * with no allocation; the backtest engine reuses them.
 * - AliasTable: O(1) draws from a fixed discrete distribution (Vose's method); `labelled` gives
 *   the same table drawing each outcome's label (the backtest's plan per atom) directly.
 * - FenwickTree: O(log n) weighted draws where weights change (depletion, restock).
 * - UniformBag: O(1) uniform draw-and-remove over a set of slots (swap-remove).
 */
import type { Rng } from '../core/prng.js';

export class AliasTable {
  readonly size: number;
  private readonly prob: Float64Array;
  private readonly alias: Int32Array;

  constructor(weights: ArrayLike<number>) {
    const n = weights.length;
    if (n === 0) throw new RangeError('AliasTable needs at least one weight');
    let total = 0;
    for (let i = 0; i < n; i++) {
      const w = weights[i]!;
      if (!(w >= 0) || !Number.isFinite(w)) throw new RangeError(`weight ${i} is not a finite number >= 0`);
      total += w;
    }
    if (!(total > 0)) throw new RangeError('AliasTable weights sum to 0');
    this.size = n;
    this.prob = new Float64Array(n);
    this.alias = new Int32Array(n);
    const scaled = new Float64Array(n);
    const small = new Int32Array(n);
    const large = new Int32Array(n);
    let ns = 0;
    let nl = 0;
    for (let i = 0; i < n; i++) {
      scaled[i] = (weights[i]! * n) / total;
      if (scaled[i]! < 1) small[ns++] = i;
      else large[nl++] = i;
    }
    while (ns > 0 && nl > 0) {
      const s = small[--ns]!;
      const l = large[--nl]!;
      this.prob[s] = scaled[s]!;
      this.alias[s] = l;
      scaled[l] = scaled[l]! + scaled[s]! - 1;
      if (scaled[l]! < 1) small[ns++] = l;
      else large[nl++] = l;
    }
    while (nl > 0) this.prob[large[--nl]!] = 1;
    while (ns > 0) this.prob[small[--ns]!] = 1; // only reached through rounding error
  }

  /** Index drawn with probability weight/total. */
  draw(rng: Rng): number {
    const u = rng.next() * this.size;
    const i = u | 0;
    return u - i < this.prob[i]! ? i : this.alias[i]!;
  }

  /**
   * The table with every outcome replaced by its label (`labels[i]` for outcome i): draws a label
   * directly, one lookup fewer per draw.
   */
  labelled(labels: ArrayLike<number>): LabelledAlias {
    if (labels.length !== this.size) throw new RangeError('one label per outcome');
    const own = new Int32Array(this.size);
    const other = new Int32Array(this.size);
    for (let i = 0; i < this.size; i++) {
      own[i] = labels[i]!;
      other[i] = labels[this.alias[i]!]!;
    }
    return new LabelledAlias(this.prob, own, other);
  }
}

/** An alias table whose outcomes carry labels (`AliasTable.labelled`): the same draws, labelled. */
export class LabelledAlias {
  readonly size: number;
  constructor(
    private readonly prob: Float64Array,
    private readonly own: Int32Array,
    private readonly other: Int32Array,
  ) {
    this.size = prob.length;
  }

  /** The label of an outcome drawn as `AliasTable.draw` draws it (the same random numbers). */
  draw(rng: Rng): number {
    const u = rng.next() * this.size;
    const i = u | 0;
    return u - i < this.prob[i]! ? this.own[i]! : this.other[i]!;
  }

  /** `n` labels drawn in turn into `out[0..n)`. */
  fill(rng: Rng, n: number, out: Int32Array): void {
    const size = this.size;
    const prob = this.prob;
    const own = this.own;
    const other = this.other;
    for (let k = 0; k < n; k++) {
      const u = rng.next() * size;
      const i = u | 0;
      out[k] = u - i < prob[i]! ? own[i]! : other[i]!;
    }
  }
}

/** Prefix sums over non-negative weights; `find` maps a point in [0, total) to its index. */
export class FenwickTree {
  readonly size: number;
  private readonly tree: Float64Array;
  private readonly weights: Float64Array;
  private readonly topBit: number;

  constructor(sizeOrWeights: number | ArrayLike<number>) {
    const n = typeof sizeOrWeights === 'number' ? sizeOrWeights : sizeOrWeights.length;
    this.size = n;
    this.tree = new Float64Array(n + 1);
    this.weights = new Float64Array(n);
    let b = 1;
    while (b * 2 <= n) b *= 2;
    this.topBit = b;
    if (typeof sizeOrWeights !== 'number') {
      // O(n) build: each node pushes its sum to its parent.
      for (let i = 0; i < n; i++) {
        const w = sizeOrWeights[i]!;
        if (!(w >= 0)) throw new RangeError(`weight ${i} must be >= 0`);
        this.weights[i] = w;
        this.tree[i + 1] = this.tree[i + 1]! + w;
        const p = i + 1 + ((i + 1) & -(i + 1));
        if (p <= n) this.tree[p] = this.tree[p]! + this.tree[i + 1]!;
      }
    }
  }

  get(i: number): number {
    return this.weights[i]!;
  }

  set(i: number, w: number): void {
    if (!(w >= 0)) throw new RangeError('weight must be >= 0');
    const delta = w - this.weights[i]!;
    if (delta === 0) return;
    this.weights[i] = w;
    for (let j = i + 1; j <= this.size; j += j & -j) this.tree[j] = this.tree[j]! + delta;
  }

  /** Sum of weights[0..i). */
  prefix(i: number): number {
    let s = 0;
    for (let j = i; j > 0; j -= j & -j) s += this.tree[j]!;
    return s;
  }

  total(): number {
    return this.prefix(this.size);
  }

  /** Smallest index whose cumulative weight exceeds `x` (0 <= x < total); -1 when empty. */
  find(x: number): number {
    let pos = 0;
    let rest = x;
    for (let step = this.topBit; step > 0; step >>= 1) {
      const next = pos + step;
      if (next <= this.size && this.tree[next]! <= rest) {
        pos = next;
        rest -= this.tree[next]!;
      }
    }
    if (pos >= this.size) {
      // Float drift at the very end of the range: fall back to the last positive weight.
      for (let i = this.size - 1; i >= 0; i--) if (this.weights[i]! > 0) return i;
      return -1;
    }
    return pos;
  }

  /** Index drawn with probability weight/total, or -1 when all weights are 0. */
  draw(rng: Rng): number {
    const t = this.total();
    if (!(t > 0)) return -1;
    return this.find(rng.next() * t);
  }
}

/**
 * A set of integer slots 0..capacity-1 with O(1) add, remove and uniform draw. The within-band
 * "uniform among the band's cards" of the pricing model, with depletion.
 */
export class UniformBag {
  private items: Int32Array;
  private pos: Int32Array;
  private n = 0;

  constructor(capacity = 16) {
    this.items = new Int32Array(Math.max(1, capacity));
    this.pos = new Int32Array(Math.max(1, capacity)).fill(-1);
  }

  get count(): number {
    return this.n;
  }

  has(slot: number): boolean {
    return slot < this.pos.length && this.pos[slot]! >= 0;
  }

  add(slot: number): void {
    if (this.has(slot)) return;
    if (slot >= this.pos.length) {
      const grown = new Int32Array(Math.max(slot + 1, this.pos.length * 2)).fill(-1);
      grown.set(this.pos);
      this.pos = grown;
    }
    if (this.n >= this.items.length) {
      const grown = new Int32Array(this.items.length * 2);
      grown.set(this.items);
      this.items = grown;
    }
    this.items[this.n] = slot;
    this.pos[slot] = this.n++;
  }

  remove(slot: number): void {
    if (!this.has(slot)) return;
    const at = this.pos[slot]!;
    const last = this.items[--this.n]!;
    this.items[at] = last;
    this.pos[last] = at;
    this.pos[slot] = -1;
  }

  /** A uniformly drawn slot (not removed), or -1 when empty. */
  pick(rng: Rng): number {
    return this.n === 0 ? -1 : this.items[rng.int(this.n)]!;
  }

  at(i: number): number {
    return this.items[i]!;
  }
}
