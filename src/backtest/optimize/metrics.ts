/**
 * A candidate's figures from its per-path results: the objective with its standard error,
 * the constraint figures and feasibility, and the paired difference of two candidates on the same
 * paths. Pure: values are read in path-index order, so they do not depend on how paths were run.
 */
import type { Objective, SpaceFile } from '../../config/space-file.js';
import { Rng } from '../../core/prng.js';
import { quantile } from '../report/stats.js';

/** Per-path results of one candidate (index = path index − first path). Money in cents. */
export interface PathMetrics {
  net: Float64Array;
  drawdown: Float64Array;
  ruined: Uint8Array;
  startCents: number;
}

export interface Figures {
  paths: number;
  objective: number;
  objective_stderr: number;
  mean_net_pnl: number;
  median_net_pnl: number;
  p5_net_pnl: number;
  mean_log_growth: number;
  p_loss: number;
  p_ruin: number;
  max_drawdown_p95: number;
  feasible: boolean;
  /** The constraints broken, e.g. "p_loss 0.62 > 0.5". */
  infeasible_reason: string | null;
}

const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** log(end equity / start) of each path (end equity floored at one cent). */
function logGrowth(m: PathMetrics, n: number): Float64Array {
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.log(Math.max(1, m.startCents + m.net[i]!) / m.startCents);
  return out;
}

/** The objective's per-path sample (USD for P&L objectives) and how it aggregates. */
function sampleOf(m: PathMetrics, n: number, objective: Objective): { x: Float64Array; q: number | null } {
  if (objective === 'mean_log_growth') return { x: logGrowth(m, n), q: null };
  const x = Float64Array.from(m.net.subarray(0, n), (v) => v / 100);
  return { x, q: objective === 'median_net_pnl' ? 0.5 : objective === 'p5_net_pnl' ? 0.05 : null };
}

function mean(x: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < x.length; i++) s += x[i]!;
  return x.length > 0 ? s / x.length : 0;
}

function stderrOfMean(x: ArrayLike<number>): number {
  const n = x.length;
  if (n < 2) return 0;
  const m = mean(x);
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (x[i]! - m) ** 2;
  return Math.sqrt(ss / (n - 1) / n);
}

/**
 * Standard error of the q-quantile, distribution-free: half the distance between the order
 * statistics n·q ± √(n·q·(1−q)) (the binomial one-sigma band of the quantile's rank).
 */
function stderrOfQuantile(sorted: Float64Array, q: number): number {
  const n = sorted.length;
  if (n < 2) return 0;
  const half = Math.sqrt(n * q * (1 - q));
  return (
    (quantile(sorted, Math.min(1, (n * q + half) / n)) - quantile(sorted, Math.max(0, (n * q - half) / n))) /
    2
  );
}

function aggregate(x: Float64Array, q: number | null): number {
  if (q === null) return mean(x);
  return quantile(Float64Array.from(x).sort(), q);
}

/** A candidate's figures over its first `n` paths. */
export function figures(
  m: PathMetrics,
  n: number,
  space: Pick<SpaceFile, 'objective' | 'constraints'>,
): Figures {
  const usd = Float64Array.from(m.net.subarray(0, n), (v) => v / 100);
  const sorted = Float64Array.from(usd).sort();
  const growth = logGrowth(m, n);
  let losing = 0;
  let ruined = 0;
  for (let i = 0; i < n; i++) {
    if (m.net[i]! < 0) losing++;
    if (m.ruined[i]) ruined++;
  }
  const dd = Float64Array.from(m.drawdown.subarray(0, n), (v) => v / 100).sort();
  const { x, q } = sampleOf(m, n, space.objective);
  const objective = aggregate(x, q);
  const objectiveSe = q === null ? stderrOfMean(x) : stderrOfQuantile(Float64Array.from(x).sort(), q);
  const f = {
    paths: n,
    objective: r6(objective),
    objective_stderr: r6(objectiveSe),
    mean_net_pnl: r6(mean(usd)),
    median_net_pnl: r6(quantile(sorted, 0.5)),
    p5_net_pnl: r6(quantile(sorted, 0.05)),
    mean_log_growth: r6(mean(growth)),
    p_loss: n > 0 ? r6(losing / n) : 0,
    p_ruin: n > 0 ? r6(ruined / n) : 0,
    max_drawdown_p95: r6(quantile(dd, 0.95)),
  };
  const c = space.constraints;
  const broken: string[] = [];
  if (c.p_ruin_max !== undefined && f.p_ruin > c.p_ruin_max)
    broken.push(`p_ruin ${f.p_ruin} > ${c.p_ruin_max}`);
  if (c.p_loss_max !== undefined && f.p_loss > c.p_loss_max)
    broken.push(`p_loss ${f.p_loss} > ${c.p_loss_max}`);
  if (c.max_drawdown_p95_max !== undefined && f.max_drawdown_p95 > c.max_drawdown_p95_max)
    broken.push(`max_drawdown_p95 ${f.max_drawdown_p95} > ${c.max_drawdown_p95_max}`);
  return {
    ...f,
    feasible: broken.length === 0,
    infeasible_reason: broken.length > 0 ? broken.join('; ') : null,
  };
}

/**
 * Objective of `a` minus objective of `b` on the same `n` paths, with its standard error: from the
 * per-path differences for a mean; by a seeded paired bootstrap (paths resampled together) for a
 * quantile, whose difference is not a mean of per-path differences. Rounded to 6 places for
 * reports; unrounded (`round` false) for the race's tests, where a log-growth difference is small.
 */
export function pairedDifference(
  a: PathMetrics,
  b: PathMetrics,
  n: number,
  objective: Objective,
  seed: number,
  round = true,
): { difference: number; stderr: number } {
  const r = round ? r6 : (x: number) => x;
  const xa = sampleOf(a, n, objective);
  const xb = sampleOf(b, n, objective).x;
  if (xa.q === null) {
    const d = Float64Array.from(xa.x, (v, i) => v - xb[i]!);
    return { difference: r(mean(d)), stderr: r(stderrOfMean(d)) };
  }
  const q = xa.q;
  const difference = aggregate(xa.x, q) - aggregate(xb, q);
  const rng = new Rng(seed ^ 0x5bd1e995);
  const reps = 200;
  const ra = new Float64Array(n);
  const rb = new Float64Array(n);
  const diffs = new Float64Array(reps);
  for (let r = 0; r < reps; r++) {
    for (let i = 0; i < n; i++) {
      const k = rng.int(n);
      ra[i] = xa.x[k]!;
      rb[i] = xb[k]!;
    }
    diffs[r] = aggregate(ra, q) - aggregate(rb, q);
  }
  return { difference: r(difference), stderr: r(n > 1 ? Math.sqrt(stderrOfMean(diffs) ** 2 * reps) : 0) };
}
