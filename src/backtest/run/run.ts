/**
 * `runBacktest`: spreads paths in small ranges over threads (threads.ts), merges results by path
 * index (so the summary does not depend on how many threads ran them), and stops cleanly on abort,
 * marking the result partial.
 */

import { availableParallelism } from 'node:os';
import { strategyDigest } from '../../strategy/strategy-digest.js';
import { cardWidth, POOL_FIELDS, TOTALS } from '../path/path-io.js';
import { MODEL_FIELDS, MODEL_POOL_FIELDS } from '../path/path-model.js';
import {
  type BacktestReport,
  buildReport,
  type Collected,
  type ReportContext,
} from '../report/backtest-report.js';
import { type ChunkResult, Engine, type EngineSpec } from './engine.js';
import { type Job, PathThreads } from './threads.js';

/** Shard K of N (K from 1): the paths i with i % N = K − 1. */
export interface Shard {
  index: number;
  count: number;
}

/** The path indexes a run covers: `start + j · step` for j below `count`. */
export interface PathSet {
  start: number;
  step: number;
  count: number;
}

function shardPaths(total: number, shard?: Shard): PathSet {
  if (!shard || shard.count === 1) return { start: 0, step: 1, count: total };
  const start = shard.index - 1;
  return { start, step: shard.count, count: Math.max(0, Math.ceil((total - start) / shard.count)) };
}

export interface BacktestOptions extends EngineSpec {
  paths: number;
  /**
   * Threads that run paths: this one and `workers − 1` worker threads (0 or 1: this thread alone).
   * Default: available cores.
   */
  workers?: number;
  /** Names shown in the report (e.g. the file paths). */
  strategyLabel?: string;
  snapshotLabel?: string;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** Paths per work unit (default 25). */
  chunk?: number;
  /** Run only this shard's paths of `paths` (the report then covers those paths). */
  shard?: Shard;
  /** Injected for tests; elapsed time is reported, never asserted. */
  now?: () => number;
}

export async function runBacktest(opts: BacktestOptions): Promise<BacktestReport> {
  return (await runBacktestPaths(opts)).report;
}

/** A run's report together with what built it: the per-path arrays and the report's context. */
export interface BacktestRun {
  report: BacktestReport;
  context: ReportContext;
  collected: Collected;
  paths: PathSet;
}

export async function runBacktestPaths(opts: BacktestOptions): Promise<BacktestRun> {
  const now = opts.now ?? (() => performance.now());
  const t0 = now();
  const spec: EngineSpec = {
    snapshot: opts.snapshot,
    strategy: opts.strategy,
    days: opts.days,
    seed: opts.seed,
    market: opts.market,
    ...(opts.balanceUsd !== undefined ? { balanceUsd: opts.balanceUsd } : {}),
    ...(opts.dynamics !== undefined ? { dynamics: opts.dynamics } : {}),
  };
  const total = opts.paths;
  const set = shardPaths(total, opts.shard);
  const jobs = chunkJobs(set, Math.max(1, opts.chunk ?? 25));
  const threads = Math.max(1, Math.min(opts.workers ?? availableParallelism(), jobs.length));
  // The workers start first: loading their modules and building their engines overlaps this
  // thread's build, which also validates the inputs (a bad input ends them at once).
  const pool = new PathThreads(spec, threads - 1, jobs);
  let engine: Engine;
  try {
    engine = new Engine(spec);
  } catch (e) {
    pool.cancel();
    throw e;
  }
  const nPools = engine.model.pools.length;
  const cw = cardWidth(engine.cards);
  const col: Collected = {
    done: new Uint8Array(total),
    totals: new Float64Array(total * TOTALS),
    equity: new Float64Array(total * (opts.days + 1)),
    pools: new Float64Array(total * nPools * POOL_FIELDS),
    maxDaily: new Float64Array(total),
    cards: new Float64Array(total * cw),
    model: new Float64Array(total * MODEL_FIELDS),
    modelPools: new Float64Array(total * nPools * MODEL_POOL_FIELDS),
  };
  let finished = 0;
  const days1 = opts.days + 1;
  const store = (r: ChunkResult) => {
    for (let k = 0; k < r.count; k++) {
      const i = r.from + k * r.step;
      col.totals.set(r.totals.subarray(k * TOTALS, (k + 1) * TOTALS), i * TOTALS);
      col.equity.set(r.equity.subarray(k * days1, (k + 1) * days1), i * days1);
      const w = nPools * POOL_FIELDS;
      col.pools.set(r.pools.subarray(k * w, (k + 1) * w), i * w);
      col.maxDaily[i] = r.maxDaily[k]!;
      if (cw > 0) col.cards.set(r.cards.subarray(k * cw, (k + 1) * cw), i * cw);
      col.model.set(r.model.subarray(k * MODEL_FIELDS, (k + 1) * MODEL_FIELDS), i * MODEL_FIELDS);
      const mw = nPools * MODEL_POOL_FIELDS;
      col.modelPools.set(r.modelPools.subarray(k * mw, (k + 1) * mw), i * mw);
      col.done[i] = 1;
    }
    finished += r.count;
    opts.onProgress?.(finished, set.count);
  };
  await pool.run(engine, store, opts.signal);
  const context = reportContext(engine);
  const report = buildReport({
    context,
    collected: col,
    requested: set.count,
    partial: finished < set.count,
    strategyLabel: opts.strategyLabel ?? opts.strategy.name,
    snapshotLabel: opts.snapshotLabel ?? opts.snapshot.source,
    elapsedMs: Math.round(now() - t0),
  });
  return { report, context, collected: col, paths: set };
}

function chunkJobs(set: PathSet, chunk: number): Job[] {
  const jobs: Job[] = [];
  const end = set.start + set.count * set.step;
  for (let j = 0; j < set.count; j += chunk) {
    const from = set.start + j * set.step;
    jobs.push({ from, to: Math.min(end, from + chunk * set.step), step: set.step });
  }
  return jobs;
}

/** What the report says about the run besides its paths: the spec, the strategy and the pools' scorer rows. */
function reportContext(engine: Engine): ReportContext {
  const { model, spec } = engine;
  return {
    days: spec.days,
    seed: spec.seed,
    market: spec.market,
    strategyName: model.strategy.name,
    strategyDigest: strategyDigest(model.strategy),
    takenAt: model.snapshot.taken_at,
    startBalanceCents: model.startBalanceCents,
    limits: {
      max_packs_per_day: model.limits.maxPacksPerDay,
      min_seconds_between_purchases: model.limits.minSecondsBetween,
      packs_left_first_day: model.limits.packsLeftFirstDay,
    },
    pools: model.pools.map((pool) => {
      const row = pool.row;
      return {
        category: pool.category,
        packType: pool.packType,
        risk: pool.risk,
        priceCents: pool.priceCents,
        ev: row?.ev ?? null,
        realizedEv: row?.realized_ev ?? null,
        decision: !row
          ? 'wait: nothing can be pulled'
          : row.decision.action === 'open'
            ? `open up to ${row.decision.quantity}`
            : `wait: ${row.decision.reason}`,
      };
    }),
    ...(engine.cards ? { cards: { ...engine.cards } } : {}),
  };
}
