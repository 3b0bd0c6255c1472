/**
 * Worker thread of `packbot optimize` (run from the compiled dist/src/backtest/optimize/worker.js):
 * gets the candidates' strategies once, then runs the (candidate, path range) jobs the main thread
 * sends, in order, keeping engines across jobs and rungs (engine-cache.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { EngineCache, type PoolSpec } from './engine-cache.js';
import type { ToWorker } from './pool.js';

interface Init {
  spec: PoolSpec;
  stop: SharedArrayBuffer;
}

const init = workerData as Init;
const cache = new EngineCache(init.spec);
const stopFlag = new Int32Array(init.stop);
const stopped = () => Atomics.load(stopFlag, 0) !== 0;

parentPort!.on('message', (msg: ToWorker) => {
  if (msg.type === 'strategies') cache.setStrategies(msg.strategies);
  else if (msg.type === 'retain') cache.retain(new Set(msg.cands));
  else {
    const r = cache.run(msg.job, stopped);
    parentPort!.postMessage(r, [r.totals.buffer as ArrayBuffer]);
  }
});
