/**
 * Runs path ranges of many candidates on worker threads (or in this thread with 0 workers). The
 * workers start once per search with the snapshot and every candidate's strategy; each keeps the
 * engines of the candidates it ran last. Results come back per range and are stored by the
 * caller by (candidate, path index), so nothing depends on which worker ran what.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../../config/package-root.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { Engine, type EngineSpec, runChunk } from '../engine.js';

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
}

/** Engines by candidate, the last few kept (jobs come grouped by candidate). */
export class EngineCache {
  private readonly engines = new Map<number, Engine>();
  constructor(
    private readonly spec: PoolSpec,
    private readonly strategies: readonly (Strategy | null)[],
    private readonly keep = 6,
  ) {}

  get(cand: number): Engine {
    let e = this.engines.get(cand);
    if (e) return e;
    const strategy = this.strategies[cand];
    if (!strategy) throw new Error(`candidate ${cand} has no strategy`);
    e = new Engine({ ...this.spec, strategy });
    if (this.engines.size >= this.keep) this.engines.delete(this.engines.keys().next().value!);
    this.engines.set(cand, e);
    return e;
  }

  run(job: PathJob, stop?: () => boolean): PathJobResult {
    const r = runChunk(this.get(job.cand), job.from, job.to, stop);
    return { cand: job.cand, from: job.from, count: r.count, totals: r.totals };
  }
}

function optimizeWorkerScript(): string {
  const path = join(packageRoot(), 'dist', 'src', 'backtest', 'optimize', 'worker.js');
  if (!existsSync(path)) throw new Error(`optimize worker not built: ${path} is missing (run npm run build)`);
  return path;
}

export interface PoolOptions {
  spec: PoolSpec;
  strategies: readonly (Strategy | null)[];
  workers: number;
  signal?: AbortSignal;
}

export class EvalPool {
  private readonly threads: Worker[] = [];
  private readonly local: EngineCache | null;
  private readonly stopFlag: Int32Array;
  private readonly stop: SharedArrayBuffer;

  constructor(private readonly opts: PoolOptions) {
    this.stop = new SharedArrayBuffer(4);
    this.stopFlag = new Int32Array(this.stop);
    this.local = opts.workers === 0 ? new EngineCache(opts.spec, opts.strategies) : null;
    if (opts.workers > 0) {
      const script = optimizeWorkerScript();
      for (let i = 0; i < opts.workers; i++)
        this.threads.push(
          new Worker(script, {
            workerData: { spec: opts.spec, strategies: opts.strategies, stop: this.stop },
            resourceLimits: { maxYoungGenerationSizeMb: 64 },
          }),
        );
    }
    opts.signal?.addEventListener('abort', () => Atomics.store(this.stopFlag, 0, 1), { once: true });
  }

  private stopped(): boolean {
    return Atomics.load(this.stopFlag, 0) !== 0 || this.opts.signal?.aborted === true;
  }

  /** Runs the jobs, calling `store` with each result as it arrives; stops early on abort. */
  async run(jobs: PathJob[], store: (r: PathJobResult) => void): Promise<void> {
    let next = 0;
    const take = () => (next < jobs.length && !this.stopped() ? jobs[next++]! : null);
    if (this.local) {
      for (let job = take(); job; job = take()) {
        store(this.local.run(job, () => this.stopped()));
        await new Promise<void>((r) => setImmediate(r));
      }
      return;
    }
    await Promise.all(
      this.threads.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const feed = () => {
              const job = take();
              if (job === null) {
                cleanup();
                resolve();
              } else w.postMessage(job);
            };
            const onMessage = (r: PathJobResult) => {
              store(r);
              feed();
            };
            const onError = (e: Error) => {
              Atomics.store(this.stopFlag, 0, 1);
              cleanup();
              reject(e);
            };
            const cleanup = () => {
              w.off('message', onMessage);
              w.off('error', onError);
            };
            w.on('message', onMessage);
            w.on('error', onError);
            feed();
          }),
      ),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((w) => w.terminate()));
  }
}
