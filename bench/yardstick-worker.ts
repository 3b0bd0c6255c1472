/**
 * Worker of bench/yardstick.ts: measures the raw loops on a fresh heap and posts their rates.
 * Started through the compiled dist/bench/yardstick-worker.js.
 */
import { parentPort } from 'node:worker_threads';
import { capturedSumRate, rawAliasRate } from './raw-alias.js';

parentPort!.postMessage({ captured: capturedSumRate(1000), local: rawAliasRate(1000) });
