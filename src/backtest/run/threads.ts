/**
 * The threads that run a backtest's path ranges: this thread and `threads − 1` workers. Every
 * thread takes the next range from one shared counter, so no thread waits for another to hand it
 * work (this one is busy with its own ranges while the workers run theirs), and a worker posts
 * each range's result as it finishes it; results are merged by path index (run.ts), so who ran
 * which range changes nothing.
 *
 * This thread runs paths too: on a machine with as many cores as threads, a thread here that only
 * waited would leave a core to a worker that must first load the modules and build the engine this
 * thread has already built (and, for a second run in one process, compile again code this thread
 * has compiled).
 */
import { Worker } from 'node:worker_threads';
import { builtWorkerScript } from '../../config/package-root.js';
import { type ChunkResult, type Engine, type EngineSpec, runChunk } from './engine.js';

/** A work unit: paths `from, from + step, …` below `to`. */
export interface Job {
  from: number;
  to: number;
  step: number;
}

/** Slots of the shared counters: set to stop every thread; the next job to take. */
const STOP = 0;
const NEXT = 1;

/** What a worker is started with (worker.ts). */
export interface WorkerInit {
  spec: EngineSpec;
  jobs: Job[];
  /** Int32 slots STOP and NEXT. */
  shared: SharedArrayBuffer;
}

/** The next job for any thread, or null once every job is taken or the run is stopped. */
export function takeJob(flags: Int32Array, jobs: Job[]): Job | null {
  if (Atomics.load(flags, STOP) !== 0) return null;
  const j = Atomics.add(flags, NEXT, 1);
  return j < jobs.length ? jobs[j]! : null;
}

export const isStopped = (flags: Int32Array): boolean => Atomics.load(flags, STOP) !== 0;

/**
 * A run's threads. Created before this thread builds its engine, so the workers' start (loading
 * the modules, building their engines) overlaps that build; `run` then runs jobs here until none
 * is left and waits for the workers' last results.
 */
export class PathThreads {
  private readonly flags: Int32Array;
  private readonly workers: Worker[] = [];
  /** Settles when every worker has posted its last result (or one failed). */
  private readonly finished: Promise<void>;
  /** Results that arrived before `run` was given a place to store them. */
  private early: ChunkResult[] = [];
  private store: ((r: ChunkResult) => void) | null = null;
  private cancelled = false;

  constructor(
    spec: EngineSpec,
    workerCount: number,
    private readonly jobs: Job[],
  ) {
    const shared = new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT);
    this.flags = new Int32Array(shared);
    const init: WorkerInit = { spec, jobs, shared };
    const script = workerCount > 0 ? builtWorkerScript('backtest', 'backtest', 'run', 'worker.js') : '';
    const ends: Promise<void>[] = [];
    for (let i = 0; i < workerCount; i++) {
      const w = new Worker(script, { workerData: init, resourceLimits: { maxYoungGenerationSizeMb: 64 } });
      this.workers.push(w);
      ends.push(
        new Promise<void>((resolve, reject) => {
          let done = false;
          w.on('message', (r: ChunkResult | null) => {
            if (r === null) {
              done = true;
              resolve();
            } else if (this.store) this.store(r);
            else this.early.push(r);
          });
          w.on('error', (e) => {
            this.stop();
            reject(e);
          });
          w.on('exit', (code) => {
            if (done || this.cancelled) resolve();
            else reject(new Error(`backtest worker stopped (exit code ${code}) before its last result`));
          });
        }),
      );
    }
    this.finished = Promise.all(ends).then(() => undefined);
    // A failure is reported by `run`; until then (or if it is never called) it must not be unhandled.
    this.finished.catch(() => {});
  }

  /** Every thread stops after its current path. */
  stop(): void {
    Atomics.store(this.flags, STOP, 1);
  }

  /** Ends the workers at once (the run failed before or while `run` ran). */
  cancel(): void {
    this.cancelled = true;
    this.stop();
    for (const w of this.workers) void w.terminate();
  }

  /** Runs jobs in this thread on `engine` until none is left, then waits for the workers' results. */
  async run(engine: Engine, store: (r: ChunkResult) => void, signal?: AbortSignal): Promise<void> {
    const onAbort = () => this.stop();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    this.store = store;
    for (const r of this.early) store(r);
    this.early = [];
    // A worker's failure stops this thread's loop too (after its current range).
    let failure: unknown = null;
    this.finished.catch((e: unknown) => {
      failure ??= e;
      this.stop();
    });
    try {
      const stopped = () => isStopped(this.flags);
      for (let job = takeJob(this.flags, this.jobs); job; job = takeJob(this.flags, this.jobs)) {
        store(runChunk(engine, job.from, job.to, stopped, job.step));
        // Let the workers' results, signals and progress output through between ranges.
        await new Promise<void>((r) => setImmediate(r));
      }
      await this.finished;
    } catch (e) {
      this.cancel();
      throw failure ?? e;
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    if (failure) throw failure;
  }
}
