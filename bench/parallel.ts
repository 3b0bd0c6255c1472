/**
 * What two threads get from this machine: the same warmed dynamic paths run on one worker thread
 * alone, then on two at once. On a VM whose two vCPUs share a physical core, or a host that is
 * busy, each of two threads runs slower than one alone, and every "2 workers" figure with it.
 */
import { Worker } from 'node:worker_threads';
import type { EngineSpec } from '../src/backtest/run/engine.js';

interface Posted {
  ready?: boolean;
  ms?: number;
}

/** Per-path time (ms) of each of `threads` workers running `paths` paths of `spec` at once. */
async function runTogether(spec: EngineSpec, paths: number, threads: number): Promise<number[]> {
  const workers = Array.from(
    { length: threads },
    () => new Worker(new URL('./parallel-worker.js', import.meta.url), { workerData: { spec, paths } }),
  );
  const next = (w: Worker) =>
    new Promise<Posted>((resolve, reject) => {
      w.once('message', resolve);
      w.once('error', reject);
    });
  try {
    await Promise.all(workers.map(next)); // every engine built and warmed
    const done = workers.map(next);
    for (const w of workers) w.postMessage('go');
    return (await Promise.all(done)).map((m) => m.ms! / paths);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** One thread's per-path time, and each of two threads' at once over it (1: two full cores). */
export async function parallelSlowdown(
  spec: EngineSpec,
  paths: number,
): Promise<{ aloneMs: number; slowdown: number }> {
  const [aloneMs] = await runTogether(spec, paths, 1);
  const two = await runTogether(spec, paths, 2);
  const mean = two.reduce((s, x) => s + x, 0) / two.length;
  return { aloneMs: aloneMs!, slowdown: mean / aloneMs! };
}
