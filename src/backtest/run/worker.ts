/**
 * Worker thread entry (run from the compiled `dist/src/backtest/run/worker.js`): builds the engine
 * from workerData once, then takes path ranges from the counter it shares with the other threads
 * (threads.ts) and posts each range's result, until none is left; a final null says it is done.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Engine, runChunk } from './engine.js';
import { isStopped, takeJob, type WorkerInit } from './threads.js';

const init = workerData as WorkerInit;
const engine = new Engine(init.spec);
const flags = new Int32Array(init.shared);
const stopped = () => isStopped(flags);

// One synchronous loop: nothing is sent to this thread once it runs (jobs come from the counter).
for (let job = takeJob(flags, init.jobs); job; job = takeJob(flags, init.jobs)) {
  const r = runChunk(engine, job.from, job.to, stopped, job.step);
  parentPort!.postMessage(r, [
    r.totals.buffer,
    r.equity.buffer,
    r.pools.buffer,
    r.maxDaily.buffer,
    r.cards.buffer,
    r.model.buffer,
    r.modelPools.buffer,
  ] as ArrayBuffer[]);
}
parentPort!.postMessage(null);
