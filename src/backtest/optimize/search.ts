/**
 * `runOptimize`: the search in one process. Candidates of a space run on common random numbers
 * (every candidate the same path indexes of the same seed, so their differences are paired); a
 * race (race.ts) drops each as soon as it is behind the leader with the stated confidence, or
 * successive halving (`method: 'halving'`) keeps the best third at fixed rungs; then the winner is
 * checked against the base on paths the search never used. The decisions are SearchMachine's
 * (machine.ts); this file runs its batches on worker threads (pool.ts) and fills the threads' idle
 * time at a batch's end with the base's out-of-sample paths, needed whatever the search finds.
 */
import { UsageError } from '../../core/errors.js';
import { TOTALS } from '../path/path-io.js';
import { strategyMisfit } from '../run/strategy-fit.js';
import { SearchMachine } from './machine.js';
import { EvalPool, type PathJob, type PathJobResult, type PoolStats } from './pool.js';
import { buildResult, type OptimizeResult } from './result.js';
import { poolSpec, type SearchInput, setupSearch } from './setup.js';

export { schedule } from './machine.js';
export type { OptimizeResult } from './result.js';

export interface OptimizeOptions extends SearchInput {
  workers: number;
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
  /** An upper bound while the race runs: as if every candidate still in ran every path. */
  total: number;
  stage: string;
}

/** Jobs of at most `chunk` paths: every candidate of `cands` on [from, to). */
function jobsFor(cands: readonly number[], from: number, to: number, chunk: number): PathJob[] {
  const jobs: PathJob[] = [];
  for (const cand of cands)
    for (let a = from; a < to; a += chunk) jobs.push({ cand, from: a, to: Math.min(to, a + chunk) });
  return jobs;
}

const pathsOf = (jobs: readonly PathJob[]) => jobs.reduce((s, j) => s + j.to - j.from, 0);

/** Stores a job's per-path totals in the machine. */
function storeJob(m: SearchMachine, r: PathJobResult): void {
  for (let k = 0; k < r.count; k++)
    m.store(
      r.cand,
      r.from + k,
      r.totals[k * TOTALS + 5]!,
      r.totals[k * TOTALS + 6]!,
      r.totals[k * TOTALS + 7]! !== 0,
    );
}

export async function runOptimize(opts: OptimizeOptions): Promise<OptimizeResult> {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const chunk = Math.max(1, opts.chunk ?? 25);
  const misfit = strategyMisfit(opts.base, opts.snapshot);
  if (misfit) throw new UsageError(`base strategy: ${misfit.field}: ${misfit.message}`);
  // Workers start now: their start-up overlaps the candidates' sampling below.
  const pool = new EvalPool({
    spec: poolSpec(opts),
    workers: opts.workers,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  let stage = '';
  let total = 0;
  try {
    const setup = setupSearch(opts);
    const { settings } = setup;
    const m = new SearchMachine(setup.init);
    pool.setStrategies(setup.candidates.map((c) => c.strategy ?? null));
    const store = (r: PathJobResult) => {
      storeJob(m, r);
      opts.onProgress?.({ done: m.evaluated, total, stage });
    };
    let baseOos = jobsFor([0], settings.paths, settings.paths + settings.oos, chunk);
    const noun = settings.method === 'race' ? 'look' : 'rung';
    for (let b = m.batch(); b; b = m.batch()) {
      const search = b.kind === 'search';
      const jobs = search
        ? jobsFor(b.cands, b.from, b.to, chunk)
        : [
            ...jobsFor(
              b.cands.filter((c) => c !== 0),
              b.from,
              b.to,
              chunk,
            ),
            ...baseOos,
          ];
      if (!search) baseOos = [];
      // What is left if every candidate still in ran every path (the race's upper bound).
      const after = search ? b.cands.length * (settings.paths - b.to) + settings.oos : 0;
      total = m.evaluated + pathsOf(jobs) + pathsOf(baseOos) + after;
      stage = search
        ? `${noun} ${b.rung + 1}/${m.looks.length}: ${b.cands.length} candidates x ${b.to} paths`
        : `out of sample: ${b.cands.length === 1 ? 'the base' : 'winner and base'} x ${settings.oos} fresh paths`;
      const left = await pool.run({
        jobs,
        store,
        ...(search ? { filler: { jobs: baseOos, store } } : {}),
      });
      if (search) baseOos = left;
      if (opts.signal?.aborted) throw new OptimizeAborted();
      m.close();
      // Engines of candidates out of the search are dropped; the base's runs the filler.
      const keep = m.phase === 'oos' ? m.batch()!.cands : [...m.active, 0];
      if (m.phase !== 'done') pool.retain(keep);
    }
    return buildResult(m, {
      candidates: setup.candidates,
      space: opts.space,
      params: setup.params,
      labels: {
        strategy: opts.labels?.strategy ?? opts.base.name,
        snapshot: opts.labels?.snapshot ?? opts.snapshot.source,
        space: opts.labels?.space ?? '',
      },
      days: opts.days,
      market: opts.market,
      elapsedMs: now() - t0,
    });
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
