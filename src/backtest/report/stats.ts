/** Distribution summaries of per-path results (USD, rounded to the cent at the boundary). */

export interface Stat {
  mean: number;
  stdev: number;
  p5: number;
  p50: number;
  p95: number;
}

/** Linear-interpolated quantile of sorted values. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  if (n === 0) return 0;
  const pos = (n - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.min(n - 1, lo + 1);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** Mean, sample standard deviation and percentiles; values are summed in index order. */
export function describe(values: Float64Array, scale = 1, digits = 2): Stat {
  const n = values.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += values[i]!;
  const mean = n > 0 ? sum / n : 0;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (values[i]! - mean) ** 2;
  const stdev = n > 1 ? Math.sqrt(ss / (n - 1)) : 0;
  const sorted = Float64Array.from(values).sort();
  const r = (x: number) => {
    const f = 10 ** digits;
    return Math.round((x / scale) * f) / f;
  };
  return {
    mean: r(mean),
    stdev: r(stdev),
    p5: r(quantile(sorted, 0.05)),
    p50: r(quantile(sorted, 0.5)),
    p95: r(quantile(sorted, 0.95)),
  };
}
