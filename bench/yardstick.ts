/**
 * The yardstick of issue #39's "normalised" goals: a time scaled to a machine whose raw alias loop
 * draws 60M a second, the raw loop being the one the issue measured (its sum captured by the
 * closure, raw-alias.ts `capturedSumRate`). The loop measured today (`rawAliasRate`, its sum in a
 * local) runs 2-3x faster on the same machine, so scaling by it would state every goal 2-3x
 * tighter than the issue did; it is reported beside, as information.
 *
 * Both loops run in a fresh worker thread (a clean heap: the captured loop's speed follows the
 * collector's state), three times, around the measure they normalise; the median is used.
 */
import { Worker } from 'node:worker_threads';

/** The reference machine: its raw loop (the captured-sum one) draws 60M a second. */
const REFERENCE_DRAWS = 60e6;

interface Rates {
  /** The loop (captured sum), draws/s. */
  captured: number;
  /** Today's loop (local sum), draws/s. */
  local: number;
}

function measureOnce(): Promise<Rates> {
  const w = new Worker(new URL('./yardstick-worker.js', import.meta.url));
  return new Promise<Rates>((resolve, reject) => {
    w.once('message', resolve);
    w.once('error', reject);
  }).finally(() => w.terminate());
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Both loops' rates on this machine now: the median of three fresh-heap measures. */
export async function yardstick(): Promise<Rates> {
  const runs: Rates[] = [];
  for (let i = 0; i < 3; i++) runs.push(await measureOnce());
  return { captured: median(runs.map((r) => r.captured)), local: median(runs.map((r) => r.local)) };
}

/** A measure taken here, in the normalised units: `value` × captured rate ÷ 60M. */
export function normalised(value: number, rates: Rates): number {
  return (value * rates.captured) / REFERENCE_DRAWS;
}

/** The rates as a bench row's value. */
export function describeRates(r: Rates): string {
  return `${(r.captured / 1e6).toFixed(1)}M draws/s (today's loop ${(r.local / 1e6).toFixed(1)}M)`;
}
