/**
 * Worker thread entry (run from the compiled `dist/src/backtest/run/worker.js`): builds the engine
 * from workerData once, then runs the path ranges the main thread sends, until told to exit.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { Engine, type EngineSpec, runChunk } from './engine.js';

interface Init {
  spec: EngineSpec;
  stop: SharedArrayBuffer;
}

const init = workerData as Init;
const engine = new Engine(init.spec);
const stopFlag = new Int32Array(init.stop);
const stopped = () => Atomics.load(stopFlag, 0) !== 0;

parentPort!.on('message', (msg: { from: number; to: number; step: number } | null) => {
  if (msg === null) {
    parentPort!.close();
    return;
  }
  const r = runChunk(engine, msg.from, msg.to, stopped, msg.step);
  parentPort!.postMessage(r, [
    r.totals.buffer,
    r.equity.buffer,
    r.pools.buffer,
    r.maxDaily.buffer,
    r.cards.buffer,
  ] as ArrayBuffer[]);
});
