/**
 * `runBacktest`: spreads paths over worker threads in small ranges, merges results by path index
 * (so the summary does not depend on how many workers ran them), and stops cleanly on abort,
 * marking the result partial.
 */

import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../config/package-root.js';
import { type ChunkResult, Engine, type EngineSpec, POOL_FIELDS, runChunk, TOTALS } from './engine.js';
import { type BacktestReport, buildReport, type Collected } from './report.js';

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
  /** Injected for tests; elapsed time is reported, never asserted. */
  now?: () => number;
}

/** The compiled worker script (workers cannot run TypeScript sources). */
export function workerScript(): string {
  const path = join(packageRoot(), 'dist', 'src', 'backtest', 'worker.js');
  if (!existsSync(path)) throw new Error(`backtest worker not built: ${path} is missing (run npm run build)`);
  return path;
}

export async function runBacktest(opts: BacktestOptions): Promise<BacktestReport> {
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
  const total = opts.paths;
  const col: Collected = {
    done: new Uint8Array(total),
    totals: new Float64Array(total * TOTALS),
    equity: new Float64Array(total * (opts.days + 1)),
    pools: new Float64Array(total * nPools * POOL_FIELDS),
    maxDaily: new Float64Array(total),
  };
  let finished = 0;
  const store = (r: ChunkResult) => {
    col.totals.set(r.totals, r.from * TOTALS);
    col.equity.set(r.equity, r.from * (opts.days + 1));
    col.pools.set(r.pools, r.from * nPools * POOL_FIELDS);
    col.maxDaily.set(r.maxDaily, r.from);
    col.done.fill(1, r.from, r.from + r.count);
    finished += r.count;
    opts.onProgress?.(finished, total);
  };
  const chunk = Math.max(1, opts.chunk ?? 25);
  const workers = Math.max(0, Math.min(opts.workers ?? availableParallelism(), Math.ceil(total / chunk)));
  if (workers === 0) await runHere(engine, total, chunk, store, opts.signal);
  else await runThreads(spec, workers, total, chunk, store, opts.signal);
  return buildReport({
    engine,
    collected: col,
    requested: total,
    partial: finished < total,
    strategyLabel: opts.strategyLabel ?? opts.strategy.name,
    snapshotLabel: opts.snapshotLabel ?? opts.snapshot.source,
    elapsedMs: Math.round(now() - t0),
  });
}

async function runHere(
  engine: Engine,
  total: number,
  chunk: number,
  store: (r: ChunkResult) => void,
  signal?: AbortSignal,
): Promise<void> {
  for (let from = 0; from < total; from += chunk) {
    if (signal?.aborted) return;
    store(runChunk(engine, from, Math.min(total, from + chunk), () => signal?.aborted ?? false));
    // Let signals and progress output through between ranges.
    await new Promise<void>((r) => setImmediate(r));
  }
}

function runThreads(
  spec: EngineSpec,
  count: number,
  total: number,
  chunk: number,
  store: (r: ChunkResult) => void,
  signal?: AbortSignal,
): Promise<void> {
  const script = workerScript();
  const stop = new SharedArrayBuffer(4);
  const stopFlag = new Int32Array(stop);
  let next = 0;
  const take = (): { from: number; to: number } | null => {
    if (next >= total || Atomics.load(stopFlag, 0) !== 0) return null;
    const from = next;
    next = Math.min(total, next + chunk);
    return { from, to: next };
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
