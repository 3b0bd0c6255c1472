/**
 * Thread entry of the harness's pair pool (pairs.ts): builds the two worlds' snapshots once (the
 * same as the main thread's: fixed instant and seed), then runs each row's backtests it is sent.
 */
import { parentPort } from 'node:worker_threads';
import { type PairAnswer, type PairJob, runPair } from './pairs.js';
import { agreementWorlds } from './worlds.js';

const worlds = agreementWorlds();

parentPort!.on('message', async (msg: { seq: number; job: PairJob }) => {
  let answer: PairAnswer;
  try {
    answer = { seq: msg.seq, pair: await runPair(msg.job, await worlds) };
  } catch (e) {
    answer = { seq: msg.seq, error: e instanceof Error ? (e.stack ?? e.message) : String(e) };
  }
  parentPort!.postMessage(answer);
});
