/**
 * Runs batches of (candidate, path range) jobs on worker threads (or in this thread with 0
 * workers). The workers start once per search, before the candidates are known, and keep their
 * engines across rungs (engine-cache.ts); the pool remembers which worker holds which engine and
 * how long each candidate's paths took, and lets BatchScheduler (scheduler.ts) place the jobs.
 * Each worker has two jobs in flight, so it starts the next while its last result travels back.
 * Results are stored by the caller by (candidate, path index), so nothing depends on which worker
 * ran what, or when.
 */
import { Worker } from 'node:worker_threads';
import { builtWorkerScript } from '../../config/package-root.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { EngineCache, type PathJob, type PathJobResult, type PoolSpec } from './engine-cache.js';
import { BatchScheduler } from './scheduler.js';

export type { PathJob, PathJobResult, PoolSpec } from './engine-cache.js';

/** Messages to a worker. */
export type ToWorker =
  | { type: 'strategies'; strategies: (Strategy | null)[] }
  | { type: 'retain'; cands: number[] }
  | { type: 'job'; job: PathJob };

const IN_FLIGHT = 2;

export interface PoolOptions {
  spec: PoolSpec;
  workers: number;
  signal?: AbortSignal;
}

/** A batch's jobs: `jobs` first, `filler` when a thread has nothing else (see BatchScheduler). */
export interface Batch {
  jobs: PathJob[];
  store: (r: PathJobResult) => void;
  filler?: { jobs: PathJob[]; store: (r: PathJobResult) => void };
}

/** Where a search's time went, for benchmarks (never part of a result). */
export interface PoolStats {
  /** Per batch (rung, out-of-sample check): wall time and each thread's time in jobs (ms). */
  batches: { jobs: number; wallMs: number; busyMs: number[] }[];
  /** Engines built, and the time spent building them (ms, all threads). */
  builds: number;
  buildMs: number;
}

interface Thread {
  worker: Worker;
  /** Jobs sent and not answered, in order (a worker answers in order). */
  inFlight: { job: PathJob; store: (r: PathJobResult) => void }[];
  holds: Set<number>;
}

export class EvalPool {
  private readonly threads: Thread[] = [];
  private readonly local: EngineCache | null;
  private readonly stopFlag: Int32Array;
  /** Per candidate: ms and paths run, for the scheduler's estimates. */
  private readonly cost = new Map<number, { ms: number; paths: number }>();
  readonly stats: PoolStats = { batches: [], builds: 0, buildMs: 0 };
  private onResult: ((t: number, r: PathJobResult) => void) | null = null;
  private failure: Error | null = null;
  private onFailure: ((e: Error) => void) | null = null;

  constructor(private readonly opts: PoolOptions) {
    const stop = new SharedArrayBuffer(4);
    this.stopFlag = new Int32Array(stop);
    this.local = opts.workers === 0 ? new EngineCache(opts.spec) : null;
    if (opts.workers > 0) {
      const script = builtWorkerScript('optimize', 'backtest', 'optimize', 'worker.js');
      for (let i = 0; i < opts.workers; i++) {
        const worker = new Worker(script, {
          workerData: { spec: opts.spec, stop },
          resourceLimits: { maxYoungGenerationSizeMb: 64 },
        });
        const thread: Thread = { worker, inFlight: [], holds: new Set() };
        worker.on('message', (r: PathJobResult) => this.onResult?.(i, r));
        worker.on('error', (e: Error) => {
          Atomics.store(this.stopFlag, 0, 1);
          this.failure ??= e;
          this.onFailure?.(e);
        });
        this.threads.push(thread);
      }
    }
    opts.signal?.addEventListener('abort', () => Atomics.store(this.stopFlag, 0, 1), { once: true });
  }

  /** The candidates' strategies (index = candidate id; null: skipped). Call once, before `run`. */
  setStrategies(strategies: (Strategy | null)[]): void {
    this.local?.setStrategies(strategies);
    for (const t of this.threads) this.send(t, { type: 'strategies', strategies });
  }

  /** Drops every engine but those of `cands` (the candidates still in the search). */
  retain(cands: Iterable<number>): void {
    const keep = new Set(cands);
    this.local?.retain(keep);
    for (const t of this.threads) {
      for (const c of [...t.holds]) if (!keep.has(c)) t.holds.delete(c);
      this.send(t, { type: 'retain', cands: [...keep] });
    }
  }

  private send(t: Thread, msg: ToWorker): void {
    t.worker.postMessage(msg);
  }

  private stopped(): boolean {
    return Atomics.load(this.stopFlag, 0) !== 0 || this.opts.signal?.aborted === true;
  }

  private record(r: PathJobResult): void {
    if (r.buildMs > 0) {
      this.stats.builds++;
      this.stats.buildMs += r.buildMs;
    }
    const c = this.cost.get(r.cand);
    if (c) {
      c.ms += r.ms;
      c.paths += r.count;
    } else this.cost.set(r.cand, { ms: r.ms, paths: r.count });
  }

  private scheduler(batch: Batch): BatchScheduler {
    return new BatchScheduler(batch.jobs, {
      threads: Math.max(1, this.threads.length),
      holds: (t, cand) => this.threads[t]?.holds.has(cand) ?? false,
      costPerPath: (cand) => {
        const c = this.cost.get(cand);
        return c && c.paths > 0 ? c.ms / c.paths : undefined;
      },
      ...(batch.filler ? { filler: batch.filler.jobs } : {}),
    });
  }

  /**
   * Runs the batch's jobs, calling their store with each result as it arrives; stops early on
   * abort. Returns the filler jobs not run.
   */
  async run(batch: Batch): Promise<PathJob[]> {
    if (this.failure) throw this.failure;
    const fillerStore = batch.filler?.store;
    if (this.local) {
      // One thread: no idle time to fill; the filler is left for later.
      for (const job of batch.jobs) {
        if (this.stopped()) break;
        const r = this.local.run(job, () => this.stopped());
        this.record(r);
        batch.store(r);
        await new Promise<void>((r) => setImmediate(r));
      }
      return batch.filler?.jobs ?? [];
    }
    const t0 = performance.now();
    const busyMs = this.threads.map(() => 0);
    const sched = this.scheduler(batch);
    const filler = new Set(batch.filler?.jobs ?? []);
    await new Promise<void>((resolve, reject) => {
      const idle = () => this.threads.every((t) => t.inFlight.length === 0);
      // Whether another thread still runs the batch's own jobs (filler only fills that wait).
      const othersBusy = (i: number) =>
        this.threads.some((t, k) => k !== i && t.inFlight.some((f) => !filler.has(f.job)));
      const pump = (t: Thread, i: number) => {
        while (t.inFlight.length < IN_FLIGHT && !this.stopped()) {
          const job = sched.next(i, t.inFlight.length === 0 && othersBusy(i));
          if (!job) break;
          t.inFlight.push({ job, store: filler.has(job) && fillerStore ? fillerStore : batch.store });
          t.holds.add(job.cand);
          this.send(t, { type: 'job', job });
        }
      };
      const finish = (e?: Error) => {
        this.onResult = null;
        this.onFailure = null;
        if (e) reject(e);
        else resolve();
      };
      this.onFailure = (e) => finish(e);
      this.onResult = (i, r) => {
        const t = this.threads[i]!;
        const sent = t.inFlight.shift()!;
        for (const c of r.evicted) t.holds.delete(c);
        busyMs[i]! += r.ms + r.buildMs;
        this.record(r);
        sent.store(r);
        pump(t, i);
        if (idle()) finish();
      };
      for (let i = 0; i < this.threads.length; i++) pump(this.threads[i]!, i);
      if (idle()) finish();
    });
    this.stats.batches.push({ jobs: batch.jobs.length, wallMs: performance.now() - t0, busyMs });
    return sched.leftoverFiller();
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.worker.terminate()));
  }
}
