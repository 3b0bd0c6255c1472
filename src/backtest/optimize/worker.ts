/**
 * Worker thread of `packbot optimize` (run from the compiled dist/src/backtest/optimize/worker.js):
 * runs the (candidate, path range) jobs the main thread sends, keeping recent engines.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { EngineCache, type PathJob, type PoolSpec } from './pool.js';

interface Init {
  spec: PoolSpec;
  strategies: (Strategy | null)[];
  stop: SharedArrayBuffer;
}

const init = workerData as Init;
const cache = new EngineCache(init.spec, init.strategies);
const stopFlag = new Int32Array(init.stop);
const stopped = () => Atomics.load(stopFlag, 0) !== 0;

parentPort!.on('message', (job: PathJob) => {
  const r = cache.run(job, stopped);
  parentPort!.postMessage(r, [r.totals.buffer as ArrayBuffer]);
});
