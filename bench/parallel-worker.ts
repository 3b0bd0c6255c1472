/**
 * Worker of bench/parallel.ts: builds an engine, warms it, then on "go" runs its paths and posts
 * the time they took. Started through the compiled dist/bench/parallel-worker.js.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Engine, type EngineSpec, runChunk } from '../src/backtest/run/engine.js';

const { spec, paths } = workerData as { spec: EngineSpec; paths: number };
const engine = new Engine(spec);
runChunk(engine, 0, paths); // warm-up as long as the measure
parentPort!.postMessage({ ready: true });
parentPort!.once('message', () => {
  const t0 = performance.now();
  runChunk(engine, paths, 2 * paths);
  parentPort!.postMessage({ ms: performance.now() - t0 });
});
