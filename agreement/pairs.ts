/**
 * A row's two backtests (static and dynamic, on the row's world) and a pool of threads that runs
 * rows side by side. The engine's own workers split one backtest's paths, but start afresh for
 * every backtest; a row's backtests are small (a few hundred paths), and a thread's start-up costs
 * as much as one of them, so the harness spreads whole rows over threads that live for the run
 * instead, each running its backtests in its own thread (`workers: 0`).
 */
import { Worker } from 'node:worker_threads';
import type { BacktestReport } from '../src/backtest/report/backtest-report.js';
import { runBacktestPaths } from '../src/backtest/run/run.js';
import { parseSource, validateSource } from '../src/config/load.js';
import { StrategyFile } from '../src/strategy/strategy-schema.js';
import type { AgreementWorld, WorldName } from './worlds.js';

export interface PairJob {
  id: string;
  /** The strategy file's text (a thread reads it as `packbot backtest` would). */
  yaml: string;
  world: WorldName;
  days: number;
  paths: number;
  seed: number;
}

export interface Pair {
  static: BacktestReport;
  dynamic: BacktestReport;
}

export async function runPair(job: PairJob, worlds: readonly AgreementWorld[]): Promise<Pair> {
  const w = worlds.find((x) => x.name === job.world)!;
  const base = {
    snapshot: w.snapshot,
    strategy: validateSource(parseSource(job.yaml, `${job.id}.yaml`), StrategyFile),
    days: job.days,
    paths: job.paths,
    seed: job.seed,
    workers: 0,
  } as const;
  return {
    static: (await runBacktestPaths({ ...base, market: 'static' })).report,
    dynamic: (await runBacktestPaths({ ...base, market: 'dynamic', dynamics: w.dynamics })).report,
  };
}

/** What a pair thread answers: the pair, or why it could not. */
export type PairAnswer = { seq: number; pair: Pair } | { seq: number; error: string };

/** Threads running `runPair` (pair-worker.ts, compiled: run from dist/ only). */
export class PairPool {
  private readonly threads: Worker[] = [];
  private readonly idle: Worker[] = [];
  private readonly queue: { seq: number; job: PairJob }[] = [];
  private readonly waiting = new Map<number, { resolve: (p: Pair) => void; reject: (e: Error) => void }>();
  private seq = 0;

  constructor(count: number) {
    const script = new URL('./pair-worker.js', import.meta.url);
    for (let i = 0; i < count; i++) {
      const t = new Worker(script);
      t.on('message', (a: PairAnswer) => {
        const w = this.waiting.get(a.seq)!;
        this.waiting.delete(a.seq);
        if ('pair' in a) w.resolve(a.pair);
        else w.reject(new Error(a.error));
        this.idle.push(t);
        this.feed();
      });
      // A thread that dies takes its row with it: every row still waiting fails rather than hangs.
      t.on('error', (e) => {
        for (const w of this.waiting.values()) w.reject(e);
        this.waiting.clear();
      });
      this.threads.push(t);
      this.idle.push(t);
    }
  }

  run(job: PairJob): Promise<Pair> {
    const seq = this.seq++;
    const p = new Promise<Pair>((resolve, reject) => this.waiting.set(seq, { resolve, reject }));
    this.queue.push({ seq, job });
    this.feed();
    return p;
  }

  private feed(): void {
    while (this.idle.length > 0 && this.queue.length > 0) this.idle.pop()!.postMessage(this.queue.shift()!);
  }

  async close(): Promise<void> {
    await Promise.all(this.threads.map((t) => t.terminate()));
  }
}
