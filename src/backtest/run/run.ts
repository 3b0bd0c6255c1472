/**
 * `runBacktest`: spreads paths over worker threads in small ranges, merges results by path index
 * (so the summary does not depend on how many workers ran them), and stops cleanly on abort,
 * marking the result partial.
 */

import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../../config/package-root.js';
import { strategyDigest } from '../../strategy/strategy-digest.js';
import { cardWidth, POOL_FIELDS, TOTALS } from '../path/path-io.js';
import { MODEL_FIELDS, MODEL_POOL_FIELDS } from '../path/path-model.js';
import {
  type BacktestReport,
  buildReport,
  type Collected,
  type ReportContext,
} from '../report/backtest-report.js';
import { type ChunkResult, Engine, type EngineSpec, runChunk } from './engine.js';

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
  /** Worker threads; 0 runs in this thread. Default: available cores. */
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

/** The compiled worker script (workers cannot run TypeScript sources). */
function workerScript(): string {
  const path = join(packageRoot(), 'dist', 'src', 'backtest', 'run', 'worker.js');
  if (!existsSync(path)) throw new Error(`backtest worker not built: ${path} is missing (run npm run build)`);
  return path;
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
  const engine = new Engine(spec); // validates the inputs here, before any thread starts
  const nPools = engine.model.pools.length;
  const cw = cardWidth(engine.cards);
  const total = opts.paths;
  const set = shardPaths(total, opts.shard);
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
  const chunk = Math.max(1, opts.chunk ?? 25);
  const workers = Math.max(0, Math.min(opts.workers ?? availableParallelism(), Math.ceil(set.count / chunk)));
  const jobs = chunkJobs(set, chunk);
  if (workers === 0) await runHere(engine, jobs, store, opts.signal);
  else await runThreads(spec, workers, jobs, store, opts.signal);
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

/** A work unit: paths `from, from + step, …` below `to`. */
interface Job {
  from: number;
  to: number;
  step: number;
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

async function runHere(
  engine: Engine,
  jobs: Job[],
  store: (r: ChunkResult) => void,
  signal?: AbortSignal,
): Promise<void> {
  for (const job of jobs) {
    if (signal?.aborted) return;
    store(runChunk(engine, job.from, job.to, () => signal?.aborted ?? false, job.step));
    // Let signals and progress output through between ranges.
    await new Promise<void>((r) => setImmediate(r));
  }
}

function runThreads(
  spec: EngineSpec,
  count: number,
  jobs: Job[],
  store: (r: ChunkResult) => void,
  signal?: AbortSignal,
): Promise<void> {
  const script = workerScript();
  const stop = new SharedArrayBuffer(4);
  const stopFlag = new Int32Array(stop);
  let next = 0;
  const take = (): Job | null => {
    if (next >= jobs.length || Atomics.load(stopFlag, 0) !== 0) return null;
    return jobs[next++]!;
  };
  const onAbort = () => Atomics.store(stopFlag, 0, 1);
  signal?.addEventListener('abort', onAbort, { once: true });
  if (signal?.aborted) onAbort();
  const runs = Array.from({ length: count }, () => {
    return new Promise<void>((resolve, reject) => {
      const w = new Worker(script, {
        workerData: { spec, stop },
        resourceLimits: { maxYoungGenerationSizeMb: 64 },
      });
      const feed = () => {
        const job = take();
        w.postMessage(job);
        if (job === null) void w.terminate().then(() => resolve());
      };
      w.on('message', (r: ChunkResult) => {
        store(r);
        feed();
      });
      w.on('error', (e) => {
        onAbort();
        reject(e);
      });
      w.on('online', feed);
    });
  });
  return Promise.all(runs)
    .then(() => undefined)
    .finally(() => signal?.removeEventListener('abort', onAbort));
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
