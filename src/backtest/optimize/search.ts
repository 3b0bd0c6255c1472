/**
 * `runOptimize`: successive halving over candidates of a search space, with common random numbers
 * (every candidate runs the same path indexes of the same seed, so their differences are paired),
 * then an out-of-sample check of the winner against the base on paths the search never used.
 *
 * Rungs: all candidates on a few paths; the best third (by objective, among feasible ones) moves
 * on to three times the paths, keeping the paths it already ran; until the last few run all
 * `paths`. The base strategy (candidate 0) is carried through every rung, so it is always
 * compared on the same paths. The winner is the best feasible candidate of the last rung; it is
 * kept only if it is at least as good as the base out of sample, else the base is the answer.
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';
import { resolveParams, type SpaceFile } from '../../config/space-file.js';
import { UsageError } from '../../core/errors.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { DynamicsInput } from '../dynamic-market.js';
import { Engine, type MarketKind, TOTALS } from '../engine.js';
import { strategyMisfit } from '../strategy-fit.js';
import { type Candidate, sampleCandidates } from './candidates.js';
import { type Figures, figures, type PathMetrics, pairedDifference } from './metrics.js';
import { EvalPool, type PathJob, type PathJobResult, type PoolStats } from './pool.js';

export const OPTIMIZE_FORMAT = 'packbot.optimize/v1';

export interface OptimizeOptions {
  snapshot: SnapshotFile;
  base: Strategy;
  space: SpaceFile;
  /** Candidates including the base. */
  trials: number;
  /** Paths of the last rung (and of the out-of-sample check unless `oosPaths`). */
  paths: number;
  days: number;
  seed: number;
  market: MarketKind;
  workers: number;
  balanceUsd?: number;
  dynamics?: DynamicsInput;
  /** Share kept per rung is 1/eta (default 3). */
  eta?: number;
  /** Candidates in the last rung (default 3, the base besides). */
  finalists?: number;
  oosPaths?: number;
  /** Paths per work unit (default 25). */
  chunk?: number;
  labels?: { strategy?: string; snapshot?: string; space?: string };
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** Called once at the end with where the time went (benchmarks). */
  onStats?: (s: PoolStats) => void;
  now?: () => number;
}

export interface Progress {
  done: number;
  total: number;
  stage: string;
}

export interface Trial {
  id: number;
  params: Record<string, unknown>;
  status: 'evaluated' | 'skipped';
  skipped_reason: string | null;
  /** The last rung the candidate ran (0-based), and its figures there. */
  rung: number | null;
  figures: Figures | null;
}

export interface OptimizeResult {
  format: typeof OPTIMIZE_FORMAT;
  strategy: string;
  snapshot: string;
  space: string;
  seed: number;
  days: number;
  market: MarketKind;
  trials: number;
  paths: number;
  objective: SpaceFile['objective'];
  constraints: SpaceFile['constraints'];
  params: string[];
  rungs: { paths: number; candidates: number[]; promoted: number[] }[];
  candidates: Trial[];
  /** The best feasible candidate of the last rung (0: the base). */
  winner: number;
  in_sample: { paths: number; winner: Figures; base: Figures };
  out_of_sample: {
    /** Path indexes [from, to): none of them used by the search. */
    paths: { from: number; to: number };
    winner: Figures;
    base: Figures;
    difference: number;
    difference_stderr: number;
  };
  /** The recommended strategy's candidate: the winner, or the base when the winner did not hold up. */
  chosen: number;
  chosen_reason: string;
  chosen_strategy: Strategy;
  elapsed_ms: number;
  evaluated_paths: number;
}

/** Candidates per rung and paths per rung (the last rung has all `paths`). */
export function schedule(
  valid: number,
  paths: number,
  eta: number,
  finalists: number,
): { counts: number[]; paths: number[] } {
  const counts = [valid];
  while (counts[counts.length - 1]! > finalists)
    counts.push(Math.max(finalists, Math.ceil(counts[counts.length - 1]! / eta)));
  const rungs = counts.length;
  const p = counts.map((_, r) => Math.max(Math.min(paths, 8), Math.round(paths / eta ** (rungs - 1 - r))));
  for (let r = 1; r < rungs; r++) p[r] = Math.max(p[r]!, p[r - 1]!);
  p[rungs - 1] = paths;
  return { counts, paths: p };
}

function newMetrics(n: number, startCents: number): PathMetrics {
  return { net: new Float64Array(n), drawdown: new Float64Array(n), ruined: new Uint8Array(n), startCents };
}

/** Ranks feasible candidates by objective (higher first), ties by id. */
function rank(ids: number[], figs: Map<number, Figures>): number[] {
  return ids
    .filter((id) => figs.get(id)!.feasible)
    .sort((a, b) => figs.get(b)!.objective - figs.get(a)!.objective || a - b);
}

export async function runOptimize(opts: OptimizeOptions): Promise<OptimizeResult> {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const eta = opts.eta ?? 3;
  const finalists = opts.finalists ?? 3;
  const chunk = Math.max(1, opts.chunk ?? 25);
  const oos = opts.oosPaths ?? opts.paths;
  const misfit = strategyMisfit(opts.base, opts.snapshot);
  if (misfit) throw new UsageError(`base strategy: ${misfit.field}: ${misfit.message}`);
  const spec = {
    snapshot: opts.snapshot,
    days: opts.days,
    seed: opts.seed,
    market: opts.market,
    ...(opts.balanceUsd !== undefined ? { balanceUsd: opts.balanceUsd } : {}),
    ...(opts.dynamics !== undefined ? { dynamics: opts.dynamics } : {}),
  };
  // Workers start now: their start-up overlaps the candidates' sampling below.
  const pool = new EvalPool({ spec, workers: opts.workers, ...(opts.signal ? { signal: opts.signal } : {}) });
  let done = 0;
  let total = 0;
  let stage = '';
  const metrics = new Map<number, PathMetrics>();
  const oosMetrics = new Map<number, PathMetrics>();
  const into =
    (m: Map<number, PathMetrics>, offset: number) =>
    (r: PathJobResult): void => {
      const pm = m.get(r.cand)!;
      for (let k = 0; k < r.count; k++) {
        const i = r.from - offset + k;
        pm.net[i] = r.totals[k * TOTALS + 5]!;
        pm.drawdown[i] = r.totals[k * TOTALS + 6]!;
        pm.ruined[i] = r.totals[k * TOTALS + 7]! ? 1 : 0;
      }
      done += r.count;
      opts.onProgress?.({ done, total, stage });
    };
  const jobsFor = (ids: number[], from: (id: number) => number, to: number): PathJob[] => {
    const jobs: PathJob[] = [];
    for (const cand of ids)
      for (let a = from(cand); a < to; a += chunk) jobs.push({ cand, from: a, to: Math.min(to, a + chunk) });
    return jobs;
  };
  const pathsOf = (jobs: PathJob[]) => jobs.reduce((s, j) => s + j.to - j.from, 0);

  try {
    const startCents = new Engine({ ...spec, strategy: opts.base }).model.startBalanceCents;
    const params = resolveParams(opts.space);
    const cands: Candidate[] = sampleCandidates(opts.base, params, opts.trials, opts.seed, opts.snapshot);
    pool.setStrategies(cands.map((c) => c.strategy ?? null));
    const valid = cands.filter((c) => c.strategy).map((c) => c.id);
    const plan = schedule(valid.length, opts.paths, eta, finalists);
    const have = new Map<number, number>();
    const figs = new Map<number, Figures>();
    const lastRung = new Map<number, number>();
    const rungDelta = (r: number) => plan.paths[r]! - (r > 0 ? plan.paths[r - 1]! : 0);
    // The base's out-of-sample paths are needed whatever the search finds: they fill the time a
    // worker would idle at the end of a rung (stored by path, so the figures are the same).
    oosMetrics.set(0, newMetrics(oos, startCents));
    let baseOos = jobsFor([0], () => opts.paths, opts.paths + oos);
    const plannedAfter = (r: number) => {
      let t = oos + pathsOf(baseOos);
      for (let k = r + 1; k < plan.counts.length; k++) t += (plan.counts[k]! + 1) * rungDelta(k);
      return t;
    };
    const runBatch = async (jobs: PathJob[], store: (r: PathJobResult) => void, withFiller: boolean) => {
      const left = await pool.run({
        jobs,
        store,
        ...(withFiller ? { filler: { jobs: baseOos, store: into(oosMetrics, opts.paths) } } : {}),
      });
      if (withFiller) baseOos = left;
      if (opts.signal?.aborted) throw new OptimizeAborted();
    };
    const rungs: OptimizeResult['rungs'] = [];
    let active = valid;
    for (let r = 0; r < plan.counts.length; r++) {
      const p = plan.paths[r]!;
      for (const id of active) if (!metrics.has(id)) metrics.set(id, newMetrics(opts.paths, startCents));
      const jobs = jobsFor(active, (id) => have.get(id) ?? 0, p);
      total = done + pathsOf(jobs) + plannedAfter(r);
      stage = `rung ${r + 1}/${plan.counts.length}: ${active.length} candidates x ${p} paths`;
      await runBatch(jobs, into(metrics, 0), true);
      for (const id of active) {
        have.set(id, p);
        figs.set(id, figures(metrics.get(id)!, p, opts.space));
        lastRung.set(id, r);
      }
      const last = r === plan.counts.length - 1;
      const promoted = last ? [] : rank(active, figs).slice(0, plan.counts[r + 1]!);
      if (!last && !promoted.includes(0)) promoted.push(0);
      promoted.sort((a, b) => a - b);
      rungs.push({ paths: p, candidates: active, promoted });
      if (!last) {
        active = promoted;
        pool.retain(active);
      }
    }
    const finalRung = rungs[rungs.length - 1]!;
    const winner = rank(finalRung.candidates, figs)[0] ?? 0;

    // Out of sample: the paths after every index the search used, same seed, same engine.
    const pair = winner === 0 ? [0] : [0, winner];
    pool.retain(pair);
    if (winner !== 0) oosMetrics.set(winner, newMetrics(oos, startCents));
    const oosJobs = [
      ...(winner === 0 ? [] : jobsFor([winner], () => opts.paths, opts.paths + oos)),
      ...baseOos,
    ];
    baseOos = [];
    total = done + pathsOf(oosJobs);
    stage = `out of sample: ${pair.length === 1 ? 'the base' : 'winner and base'} x ${oos} fresh paths`;
    await runBatch(oosJobs, into(oosMetrics, opts.paths), false);
    const oosBase = figures(oosMetrics.get(0)!, oos, opts.space);
    const oosWinner = winner === 0 ? oosBase : figures(oosMetrics.get(winner)!, oos, opts.space);
    const diff =
      winner === 0
        ? { difference: 0, stderr: 0 }
        : pairedDifference(oosMetrics.get(winner)!, oosMetrics.get(0)!, oos, opts.space.objective, opts.seed);
    let chosen = winner;
    let reason: string;
    if (winner === 0) reason = 'no candidate beat the base strategy in sample';
    else if (oosWinner.objective >= oosBase.objective && (oosWinner.feasible || !oosBase.feasible))
      reason = `candidate ${winner} won the search and held up out of sample`;
    else {
      chosen = 0;
      reason = `candidate ${winner} won the search but not out of sample (${oosWinner.feasible ? `objective ${oosWinner.objective} < base ${oosBase.objective}` : `infeasible: ${oosWinner.infeasible_reason}`}): the base is kept`;
    }
    const trials: Trial[] = cands.map((c) => ({
      id: c.id,
      params: c.params,
      status: c.strategy ? 'evaluated' : 'skipped',
      skipped_reason: c.skipped ?? null,
      rung: lastRung.get(c.id) ?? null,
      figures: figs.get(c.id) ?? null,
    }));
    return {
      format: OPTIMIZE_FORMAT,
      strategy: opts.labels?.strategy ?? opts.base.name,
      snapshot: opts.labels?.snapshot ?? opts.snapshot.source,
      space: opts.labels?.space ?? '',
      seed: opts.seed,
      days: opts.days,
      market: opts.market,
      trials: opts.trials,
      paths: opts.paths,
      objective: opts.space.objective,
      constraints: opts.space.constraints,
      params: params.map((p) => p.path),
      rungs,
      candidates: trials,
      winner,
      in_sample: { paths: opts.paths, winner: figs.get(winner)!, base: figs.get(0)! },
      out_of_sample: {
        paths: { from: opts.paths, to: opts.paths + oos },
        winner: oosWinner,
        base: oosBase,
        difference: diff.difference,
        difference_stderr: diff.stderr,
      },
      chosen,
      chosen_reason: reason,
      chosen_strategy: cands[chosen]!.strategy!,
      elapsed_ms: Math.round(now() - t0),
      evaluated_paths: done,
    };
  } finally {
    opts.onStats?.(pool.stats);
    await pool.close();
  }
}

/** Thrown when the search is interrupted (its signal aborted): nothing is chosen. */
export class OptimizeAborted extends Error {
  constructor() {
    super('optimize interrupted');
    this.name = 'OptimizeAborted';
  }
}
