/**
 * The engines one thread of a search holds, by candidate. A fresh engine costs more than its
 * construction (~3 ms; what the snapshot alone decides is shared, see docs/optimize.md): its
 * caches (pull plans, a first world) fill during its first paths, which makes a new candidate's
 * first 25 paths cost ~12 ms more than the same paths on a warm engine.
 * So engines are kept for the whole search, not per rung, and dropped only when the search says a
 * candidate is out (`retain`) or past `capacity` (~1 MB each), least recently used first.
 */
import type { Strategy } from '../../strategy/strategy-schema.js';
import { Engine, type EngineSpec, runChunk } from '../run/engine.js';

export type PoolSpec = Omit<EngineSpec, 'strategy'>;

/** Paths [from, to) of candidate `cand`. */
export interface PathJob {
  cand: number;
  from: number;
  to: number;
}

/** Rows of 8 totals per path (engine TOTALS), for paths from `from` on. */
export interface PathJobResult {
  cand: number;
  from: number;
  count: number;
  totals: Float64Array;
  /** Time spent running the paths, without building the engine (ms): schedules, never results. */
  ms: number;
  /** Time spent building the engine for this job (0: it was held). */
  buildMs: number;
  /** Candidates whose engines were dropped to make room for this one. */
  evicted: number[];
}

/** Engines a thread keeps by default: enough for every candidate of a 100-candidate first rung. */
const ENGINE_CAPACITY = 64;

export class EngineCache {
  /** Insertion order is recency: a used engine is moved to the end. */
  private readonly engines = new Map<number, Engine>();
  private strategies: readonly (Strategy | null)[] = [];

  constructor(
    private readonly spec: PoolSpec,
    private readonly capacity = ENGINE_CAPACITY,
  ) {}

  setStrategies(strategies: readonly (Strategy | null)[]): void {
    this.strategies = strategies;
    this.engines.clear();
  }

  /** Drops the engines of candidates not in `cands` (out of the search). */
  retain(cands: ReadonlySet<number>): void {
    for (const c of [...this.engines.keys()]) if (!cands.has(c)) this.engines.delete(c);
  }

  private get(cand: number, evicted: number[]): Engine {
    let e = this.engines.get(cand);
    if (e) {
      this.engines.delete(cand);
      this.engines.set(cand, e);
      return e;
    }
    const strategy = this.strategies[cand];
    if (!strategy) throw new Error(`candidate ${cand} has no strategy`);
    e = new Engine({ ...this.spec, strategy });
    while (this.engines.size >= this.capacity) {
      const oldest = this.engines.keys().next().value!;
      this.engines.delete(oldest);
      evicted.push(oldest);
    }
    this.engines.set(cand, e);
    return e;
  }

  run(job: PathJob, stop?: () => boolean): PathJobResult {
    const evicted: number[] = [];
    const held = this.engines.has(job.cand);
    const tb = performance.now();
    const engine = this.get(job.cand, evicted);
    const t0 = performance.now();
    const r = runChunk(engine, job.from, job.to, stop);
    return {
      cand: job.cand,
      from: job.from,
      count: r.count,
      totals: r.totals,
      ms: performance.now() - t0,
      buildMs: held ? 0 : t0 - tb,
      evicted,
    };
  }
}
