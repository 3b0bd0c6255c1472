/**
 * Optimisation speed: `packbot optimize` of 100 candidates x up to 2,000 paths x 30 days on the
 * default world's snapshot (dynamic market, examples/space-example.yaml around `balanced`) on two
 * workers, end to end (candidates, rungs, out-of-sample check). The baseline, measured in the
 * same run: the base strategy's warmed time per path on one worker thread; the ratio is the search's wall time
 * over (paths it ran x that time / 2 workers): what the mix of candidates and the scheduling
 * cost over an ideal split of base-strategy paths. It splits into the workers' time in jobs over
 * the same ideal (what the candidates cost per path, engines built included) divided by the
 * share of the wall time the workers were busy (what scheduling loses: start-up, rung ends).
 * Beside it, what the machine gives two threads in the same run (bench/parallel.ts): each of two
 * workers running the base's warmed paths at once, over one worker alone.
 * Heavy (minutes): `npm run bench -- optimize`; PACKBOT_BENCH_TRIALS / PACKBOT_BENCH_PATHS scale it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PoolStats } from '../src/backtest/optimize/pool.js';
import { runOptimize } from '../src/backtest/optimize/search.js';
import { takeSnapshot } from '../src/backtest/snapshot.js';
import { loadFile } from '../src/config/load.js';
import { SpaceFile } from '../src/config/space-file.js';
import { loadStrategy } from '../src/config/strategy-file.js';
import { loadWorld } from '../src/config/world-file.js';
import { VirtualClock } from '../src/core/clock.js';
import { Market } from '../src/market/market.js';
import type { Benchmark } from './lib.js';
import { parallelSlowdown } from './parallel.js';

const TRIALS = Number(process.env.PACKBOT_BENCH_TRIALS ?? 100);
const PATHS = Number(process.env.PACKBOT_BENCH_PATHS ?? 2000);

const bench: Benchmark = {
  name: 'optimize',
  async run() {
    const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
    const clock = new VirtualClock('2026-03-02T10:00:00Z');
    const market = new Market(loadWorld(), { clock, seed: 1 });
    const snapshot = await takeSnapshot(market.api('sk_sim_full'), { clock, source: 'default world' });
    const base = loadStrategy(join(root, 'strategies', 'balanced.yaml'));
    const space = loadFile(join(root, 'examples', 'space-example.yaml'), SpaceFile);

    // The baseline: the base strategy's warmed time per path on one worker thread (a warm-up as
    // long as the measure: after 10 paths the JIT is still compiling, and a path read ~1.5x its
    // warmed time); and beside it what the machine's second core gives, the same paths on two.
    const par = await parallelSlowdown(
      { snapshot, strategy: base, days: 30, seed: 1, market: 'dynamic' },
      100,
    );
    const perPathMs = par.aloneMs;

    let stats: PoolStats | undefined;
    const t1 = performance.now();
    const r = await runOptimize({
      snapshot,
      base,
      space,
      trials: TRIALS,
      paths: PATHS,
      days: 30,
      seed: 1,
      market: 'dynamic',
      workers: 2,
      onStats: (st) => {
        stats = st;
      },
    });
    const wallS = (performance.now() - t1) / 1000;
    const idealS = (r.evaluated_paths * perPathMs) / 2 / 1000;
    const o = r.out_of_sample;
    const busyS = (stats?.batches ?? []).reduce((s, b) => s + b.busyMs.reduce((x, y) => x + y, 0), 0) / 1000;
    return [
      { name: 'optimize baseline: balanced path, 1 thread', value: `${perPathMs.toFixed(2)} ms/path` },
      {
        name: `optimize ${TRIALS} x ${PATHS} x 30 d, 2 workers`,
        value: `${wallS.toFixed(1)} s, ${r.evaluated_paths} paths`,
        ratio: wallS / idealS,
        goal: '< 30 s (ratio: info)',
        ok: wallS < 30,
      },
      {
        name: 'optimize: workers in jobs ÷ ideal, busy share',
        value: `${(busyS / 2 / idealS).toFixed(3)}, ${(busyS / 2 / wallS).toFixed(3)}`,
      },
      {
        // 1.00: two threads run as fast as one each; above it, the VM's second vCPU gives less.
        name: 'optimize: each of 2 threads ÷ 1 alone (base paths)',
        value: par.slowdown.toFixed(2),
      },
      {
        name: 'optimize: engines built',
        value: `${stats?.builds ?? 0} (${((stats?.buildMs ?? 0) / 1000).toFixed(1)} s)`,
      },
      {
        name: 'optimize rungs',
        value: r.rungs.map((g) => `${g.candidates.length}x${g.paths}`).join(' '),
      },
      {
        name: 'optimize result',
        value: `chose ${r.chosen}; oos ${o.winner.objective.toFixed(0)} vs base ${o.base.objective.toFixed(0)} (diff ${o.difference.toFixed(0)} ± ${o.difference_stderr.toFixed(0)})`,
      },
    ];
  },
};
export default bench;
