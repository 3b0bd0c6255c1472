/**
 * When two figures agree: the harness's tolerances, pure. Every comparison is a gap with its
 * standard error; it agrees when |gap| ≤ z*·se, or when |gap| is within 2% of the figure compared
 * with (where the standard error is smaller than that, a departure of under 2% is a model's
 * approximation, not a disagreement worth a failure). z* is a family-wise threshold: a run makes
 * hundreds of comparisons, and 3σ each would fail a correct run by chance most of the time.
 */

/** The chance that a run whose every comparison holds fails anyway (Bonferroni over the run's checks). */
export const FAMILY_ALPHA = 0.01;
/** Agreement within this share of the figure compared with, whatever the standard error. */
export const RELATIVE_FLOOR = 0.02;
/** z* is never below the drift alarm's 3 (docs/model-drift.md), however few the checks. */
export const MIN_Z = 3;

/** The views that can disagree, as the table and the failure lines name them. */
export const VIEWS = {
  static: 'static backtest vs the scorer at its orders (per pack)',
  'static-model': "static backtest's model block (total z)",
  dynamic: 'dynamic backtest vs the scorer at its orders (per pack)',
  model: "dynamic backtest's model block (total z)",
  'model-sell-back': "dynamic backtest's model block, sell-back part",
  'model-listing': "dynamic backtest's model block, listing part",
  'model-held': "dynamic backtest's model block, held part",
  'live-packs': 'the bot live vs the dynamic backtest: packs opened per run',
  'live-net': 'the bot live vs the dynamic backtest: net P&L per run',
} as const;
export type View = keyof typeof VIEWS;

/** Checks a strategy × world row plans (the live ones apart): the count z* is set from. */
export const CHECKS_PER_ROW = 7;
export const CHECKS_PER_LIVE = 2;

export interface Comparison {
  view: View;
  /** What was measured less what was promised (USD, or packs). */
  gap: number;
  /** The gap's standard error (0: none known). */
  se: number;
  /** |gap| within this agrees whatever the standard error: 2% of the figure compared with. */
  floor: number;
  /** Null: judged. Otherwise why the figure is shown only (it is not a claim this world makes). */
  unjudged: string | null;
}

export interface Judged extends Comparison {
  /** gap / se; null without a standard error. */
  z: number | null;
  pass: boolean;
}

/** Two-sided tail P(|Z| > z) of a standard normal. */
export function twoSidedTail(z: number): number {
  return erfc(Math.abs(z) / Math.SQRT2);
}

/**
 * The z beyond which one of `checks` comparisons fails, so that a run where every comparison
 * holds fails with probability at most `alpha` (Bonferroni: each at alpha / checks, two-sided).
 * Conservative where comparisons are correlated, as a row's per-pack gap and model z are.
 */
export function familyZ(checks: number, alpha = FAMILY_ALPHA): number {
  const target = alpha / Math.max(1, checks);
  let lo = 0;
  let hi = 40;
  for (let i = 0; i < 100; i++) {
    const mid = (lo + hi) / 2;
    if (twoSidedTail(mid) > target) lo = mid;
    else hi = mid;
  }
  return Math.max(MIN_Z, hi);
}

export function judge(c: Comparison, zStar: number): Judged {
  const z = c.se > 0 ? c.gap / c.se : null;
  const within = Math.abs(c.gap) <= Math.max(zStar * c.se, c.floor);
  return { ...c, z, pass: c.unjudged !== null || within };
}

/**
 * erfc with a relative error below 1.2e-7 everywhere (Numerical Recipes' Chebyshev fit), so the
 * tails the family-wise threshold lives in (1e-6 and below) are right to their own precision.
 */
function erfc(x: number): number {
  const z = Math.abs(x);
  const t = 1 / (1 + 0.5 * z);
  const r =
    t *
    Math.exp(
      -z * z -
        1.26551223 +
        t *
          (1.00002368 +
            t *
              (0.37409196 +
                t *
                  (0.09678418 +
                    t *
                      (-0.18628806 +
                        t *
                          (0.27886807 +
                            t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277)))))))),
    );
  return x >= 0 ? r : 2 - r;
}

/**
 * Standard error of a difference of two means: the larger of Welch's (each sample its own
 * variance) and the pooled one (both from one distribution, the hypothesis tested). A few bot runs
 * may never see a rare event (a stop-loss, a pool gone below the ratio), and Welch's estimate would
 * then give their side no variance at all.
 */
export function seDiff(a: { v: number; n: number }, b: { v: number; n: number }): number {
  if (a.n < 1 || b.n < 1) return 0;
  const welch = a.v / a.n + b.v / b.n;
  const pooled =
    a.n + b.n > 2 ? (((a.n - 1) * a.v + (b.n - 1) * b.v) / (a.n + b.n - 2)) * (1 / a.n + 1 / b.n) : 0;
  return Math.sqrt(Math.max(welch, pooled));
}

export interface MeanVar {
  mean: number;
  /** Sample variance (n − 1). */
  v: number;
  n: number;
}

export function meanVar(xs: ArrayLike<number>): MeanVar {
  const n = xs.length;
  let s = 0;
  for (let i = 0; i < n; i++) s += xs[i]!;
  const mean = n > 0 ? s / n : 0;
  let ss = 0;
  for (let i = 0; i < n; i++) ss += (xs[i]! - mean) ** 2;
  return { mean, v: n > 1 ? ss / (n - 1) : 0, n };
}
