/**
 * Model draws/s (the market's pricing-model draw with depletion: chase, renormalised band odds,
 * uniform card within the band, card removed and put back) as a ratio to a raw alias-sampling
 * loop over the same pool's cards, both measured in this run, in alternating slices.
 */

import { loadWorld } from '../src/config/world-file.js';
import { VirtualClock } from '../src/core/clock.js';
import { Rng } from '../src/core/prng.js';
import { drawPull, newDraw, undoDraw } from '../src/market/inventory.js';
import { AliasTable } from '../src/market/sampler.js';
import { buildState } from '../src/market/state.js';
import { type Benchmark, fmtRate, opsPerSecond } from './lib.js';

const bench: Benchmark = {
  name: 'market',
  async run() {
    const world = loadWorld();
    const now = new VirtualClock().now();
    const state = buildState(world, 1, now);
    const pool = state.inv.pools.find((p) => p.spec.pack_type === 'collector')!;
    // Baseline: alias table over every card of the pool, weighted by its band odds / band size.
    const weights: number[] = [];
    for (const b of pool.bands)
      for (let i = 0; i < b.bag.count; i++) weights.push(b.weights.standard / b.bag.count);
    const alias = new AliasTable(weights);
    const rng = new Rng(1);
    const BATCH = 10_000;
    let sink = 0;
    // Sums in locals: a captured variable past the small-integer range is a heap number that
    // every `+=` allocates anew (2x the raw loop's time, and GC-dependent).
    const rawLoop = () => {
      let s = 0;
      for (let i = 0; i < BATCH; i++) s += alias.draw(rng);
      sink += s;
      return BATCH;
    };
    // The draw with depletion, and the bench's own reset (the card put back): the reset is counted
    // as model time, so the ratio understates the draw alone.
    const modelLoop = () => {
      let s = 0;
      const d = newDraw();
      for (let i = 0; i < BATCH; i++) {
        if (!drawPull(state.inv, pool, 'standard', now, rng, d)) throw new Error('pool ran dry');
        s += d.slot;
        undoDraw(state.inv, pool, d);
      }
      sink += s;
      return BATCH;
    };
    // Baseline and model in alternating slices, the median of the slices' ratios: on a shared
    // machine a burst of load then hits one pair, not the whole of one side.
    const ratios: number[] = [];
    const raws: number[] = [];
    const models: number[] = [];
    for (let k = 0; k < 9; k++) {
      const r = opsPerSecond(rawLoop, 150);
      const m = opsPerSecond(modelLoop, 150);
      raws.push(r);
      models.push(m);
      ratios.push(m / r);
    }
    if (sink === -1) console.log(sink);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
    const raw = median(raws);
    const model = median(models);
    const ratio = median(ratios);
    return [
      { name: 'market raw alias draws', value: fmtRate(raw, 'draws') },
      {
        name: 'market model draws (depletion)',
        value: fmtRate(model, 'draws'),
        ratio,
        goal: '>= 0.10 of the raw alias draws',
        ok: ratio >= 0.1,
      },
    ];
  },
};
export default bench;
