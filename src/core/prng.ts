/**
 * Seeded, fast, allocation-free PRNG (sfc32 seeded through splitmix32). Every random choice in
 * the simulator and the backtests goes through one of these so a seed reproduces a run exactly.
 */
const EMPTY = new Float64Array(0);

export class Rng {
  /**
   * The generator's four words (a, b, c, d). In a typed array, not fields: an int32 word outside
   * the small-integer range makes a field a boxed number, and every draw then reads and writes
   * through the box (about twice the time of a draw from this array; the same values).
   */
  private readonly s = new Int32Array(4);
  /**
   * `poisson`'s last two means and their CDF tables (the last used first): a world tick asks for
   * two means in turn (other users' openings, then each pack's arrivals), so neither is looked up
   * again by value.
   */
  private cdfMean = Number.NaN;
  private cdf: Float64Array = EMPTY;
  private cdfMean2 = Number.NaN;
  private cdf2: Float64Array = EMPTY;

  constructor(seed: number) {
    let s = seed >>> 0;
    const next = () => {
      s = (s + 0x9e3779b9) | 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s[0] = next();
    this.s[1] = next();
    this.s[2] = next();
    this.s[3] = next();
    for (let i = 0; i < 12; i++) this.nextUint32();
  }

  nextUint32(): number {
    const s = this.s;
    const a = s[0]!;
    const b = s[1]!;
    const c = s[2]!;
    const d = s[3]!;
    const t = (((a + b) | 0) + d) | 0;
    s[3] = (d + 1) | 0;
    s[0] = b ^ (b >>> 9);
    s[1] = (c + (c << 3)) | 0;
    s[2] = (((c << 21) | (c >>> 11)) + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    // nextUint32 called directly (not through next): one level less for the inliner, same value.
    return Math.floor((this.nextUint32() / 4294967296) * n);
  }

  /** Standard normal (Box–Muller). */
  normal(): number {
    let u = 0;
    while (u === 0) u = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.next());
  }

  /**
   * Standard normals into `out[from..to)`, both of each Box–Muller pair used (half the logs and
   * square roots of `normal()` per value; a different sequence from calling `normal()`).
   */
  normals(out: Float64Array, from: number, to: number): void {
    for (let i = from; i < to; i += 2) {
      let u = 0;
      while (u === 0) u = this.next();
      const r = Math.sqrt(-2 * Math.log(u));
      const a = 2 * Math.PI * this.next();
      out[i] = r * Math.cos(a);
      if (i + 1 < to) out[i + 1] = r * Math.sin(a);
    }
  }

  /** Exponential with the given rate (events per unit). */
  exponential(rate: number): number {
    return -Math.log(1 - this.next()) / rate;
  }

  /**
   * Poisson-distributed count with the given mean: inversion of the CDF with one uniform (O(mean)
   * comparisons against the mean's CDF table, `poissonCdf`); means above 500 are split into a sum
   * of independent Poisson counts, whose sum is Poisson with the total mean (e^−mean would
   * underflow).
   */
  poisson(mean: number): number {
    if (!(mean > 0)) return 0;
    let total = 0;
    let rest = mean;
    while (rest > 500) {
      total += this.poisson(500);
      rest -= 500;
    }
    const u = this.next();
    // The same means come back every tick (two in turn, see `cdfMean`): no Map look-up then.
    if (rest !== this.cdfMean) {
      const other = this.cdf;
      const otherMean = this.cdfMean;
      this.cdf = rest === this.cdfMean2 ? this.cdf2 : poissonCdf(rest);
      this.cdfMean = rest;
      this.cdf2 = other;
      this.cdfMean2 = otherMean;
    }
    const cdf = this.cdf;
    // The first k whose CDF passes u; the last entry is where the terms underflow to 0.
    const last = cdf.length - 1;
    let k = 0;
    if (last >= 8) {
      // The first eight entries counted without a branch (the CDF never decreases, so the count
      // passed is the first k whose CDF passes u, below 8): where a small mean's count falls is
      // a coin flip, which the loop's exit mispredicts.
      k =
        +(u >= cdf[0]!) +
        +(u >= cdf[1]!) +
        +(u >= cdf[2]!) +
        +(u >= cdf[3]!) +
        +(u >= cdf[4]!) +
        +(u >= cdf[5]!) +
        +(u >= cdf[6]!) +
        +(u >= cdf[7]!);
      if (k < 8) return total + k;
    }
    while (k < last && u >= cdf[k]!) k++;
    return total + k;
  }

  /** A copy at this point of the stream: from here both draw the same numbers, independently. */
  clone(): Rng {
    const copy = Object.assign(Object.create(Rng.prototype) as Rng, this);
    (copy as unknown as { s: Int32Array }).s = this.s.slice();
    return copy;
  }

  /**
   * Brings an Rng restored from a simulator state saved by an older build (its prototype already
   * set) to this layout: the words were the fields a, b, c, d, and one CDF table was cached. The
   * same point of the same stream.
   */
  static revive(x: Rng): void {
    const o = x as unknown as {
      s?: Int32Array;
      a?: number;
      b?: number;
      c?: number;
      d?: number;
      cdfMean2?: number;
      cdf2?: Float64Array;
    };
    if (!(o.s instanceof Int32Array)) {
      o.s = Int32Array.of(o.a ?? 0, o.b ?? 0, o.c ?? 0, o.d ?? 0);
      delete o.a;
      delete o.b;
      delete o.c;
      delete o.d;
    }
    o.cdfMean2 ??= Number.NaN;
    o.cdf2 ??= EMPTY;
  }

  /** A derived, independent stream (for per-path or per-subsystem randomness). */
  fork(salt: number): Rng {
    return new Rng((this.nextUint32() ^ Math.imul(salt + 1, 0x9e3779b1)) >>> 0);
  }

  /** A random hex id of `bytes` bytes (for deterministic opaque ids). */
  hex(bytes: number): string {
    let out = '';
    for (let i = 0; i < bytes; i += 4) out += this.nextUint32().toString(16).padStart(8, '0');
    return out.slice(0, bytes * 2);
  }

  /** A UUID-shaped opaque id. */
  uuid(): string {
    const h = this.hex(16);
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}

const cdfs = new Map<number, Float64Array>();

/**
 * The Poisson CDF at 0, 1, 2… for `mean` (≤ 500), summed term by term (p_k = p_(k−1) · mean / k)
 * until a term underflows to 0, which ends it; kept per mean (a world asks for the same few means
 * every tick; the cache starts over past 64 means).
 */
function poissonCdf(mean: number): Float64Array {
  const known = cdfs.get(mean);
  if (known) return known;
  const out: number[] = [];
  let p = Math.exp(-mean);
  let cdf = p;
  let k = 0;
  // p reaches 0 only far in the tail, where rounding could keep cdf just below u forever.
  while (p > 0) {
    out.push(cdf);
    k++;
    p *= mean / k;
    cdf += p;
  }
  out.push(cdf);
  const table = Float64Array.from(out);
  if (cdfs.size >= 64) cdfs.clear();
  cdfs.set(mean, table);
  return table;
}
