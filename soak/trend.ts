/**
 * A trend judged with its uncertainty. Memory sampled through a run is not independent noise
 * around a line: the garbage collector, caches and the bot's own daily rhythm make neighbouring
 * samples alike, so the textbook standard error of a least-squares slope is too small and a flat
 * bot "grows" by chance. The slope's standard error here is Newey–West's (heteroskedasticity and
 * autocorrelation consistent, Bartlett weights), with a lag that spans the correlated neighbours
 * (a simulated day of samples, at most a quarter of them).
 *
 * A verdict then compares the one-sided 95 % bounds of the slope with a stated limit:
 * - flat: the upper bound is at most the limit (growth beyond it is ruled out);
 * - growing: the lower bound is above the limit (growth beyond it is shown);
 * - inconclusive: the interval straddles the limit, or there are too few samples: run longer.
 */

export interface Trend {
  /** Least-squares slope, y units per x unit. */
  slope: number;
  /** Newey–West standard error of the slope. */
  se: number;
  /** One-sided 95 % bounds: slope ∓ 1.645 se. */
  low: number;
  high: number;
  n: number;
  lag: number;
}

export type TrendVerdict = 'flat' | 'growing' | 'inconclusive';

/** One-sided 95 % normal quantile. */
const Z_95 = 1.645;

/** Slope and its Newey–West standard error; null with fewer than 3 points or no spread in x. */
export function trend(points: readonly (readonly [number, number])[], lag: number): Trend | null {
  const n = points.length;
  if (n < 3) return null;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let sxx = 0;
  let sxy = 0;
  for (const [x, y] of points) {
    sxx += (x - mx) ** 2;
    sxy += (x - mx) * (y - my);
  }
  if (sxx === 0) return null;
  const slope = sxy / sxx;
  const u = points.map(([x, y]) => (x - mx) * (y - my - slope * (x - mx)));
  const L = Math.max(0, Math.min(Math.floor(lag), n - 1));
  let s = u.reduce((a, v) => a + v * v, 0);
  for (let l = 1; l <= L; l++) {
    let c = 0;
    for (let t = l; t < n; t++) c += u[t]! * u[t - l]!;
    s += 2 * (1 - l / (L + 1)) * c;
  }
  // Small-sample correction for the two fitted parameters.
  const variance = (Math.max(0, s) / (sxx * sxx)) * (n / (n - 2));
  const se = Math.sqrt(variance);
  return { slope, se, low: slope - Z_95 * se, high: slope + Z_95 * se, n, lag: L };
}

/** Samples a verdict needs after the warm-up: fewer is inconclusive whatever the interval. */
const MIN_SAMPLES = 24;

export function judge(t: Trend | null, limit: number): TrendVerdict {
  if (t === null || t.n < MIN_SAMPLES) return 'inconclusive';
  if (t.high <= limit) return 'flat';
  if (t.low > limit) return 'growing';
  return 'inconclusive';
}
