/**
 * The raw alias-sampling loop, the machine's yardstick: draws per second of an alias table over a
 * 200-card, two-band pool, each draw's value summed. Benchmarks report their times beside it (or
 * normalised by it), measured in the same run, so figures compare across machines and minutes.
 */
import type { PackPool } from '../src/api/schemas.js';
import { roundHalfAway } from '../src/core/money.js';
import { Rng } from '../src/core/prng.js';
import { AliasTable } from '../src/market/sampler.js';
import { pullDistribution } from '../src/strategy/distribution.js';
import { opsPerSecond } from './lib.js';

const cards = Array.from({ length: 200 }, (_, i) => ({
  id: `c${i}`,
  name: `Card ${i}`,
  market_value: i < 20 ? 60 + i * 5 : 2 + (i % 30),
  bucket_id: i < 20 ? 'high' : 'low',
}));

export const BENCH_POOL: PackPool = {
  pack_type: 'bench',
  name: 'Bench pack',
  category: 'pokemon',
  risk_level: 'standard',
  price: 12,
  available: true,
  expected_value: 0,
  chase: null,
  total_cards: cards.length,
  bands: [
    {
      bucket_id: 'low',
      label: 'low',
      min_value: 2,
      max_value: 31,
      odds: 0.85,
      is_consolation: false,
      hittable_cards: 180,
    },
    {
      bucket_id: 'high',
      label: 'high',
      min_value: 60,
      max_value: 155,
      odds: 0.15,
      is_consolation: false,
      hittable_cards: 20,
    },
  ],
  cards,
};
// The server's figure, as a real pool carries it (a pool far from it is refused as a price lie).
BENCH_POOL.expected_value = roundHalfAway(pullDistribution(BENCH_POOL).evCents) / 100;

/** Raw alias draws per second over BENCH_POOL, measured for about `ms` of wall time. */
export function rawAliasRate(ms = 1000): number {
  const dist = pullDistribution(BENCH_POOL);
  const alias = new AliasTable(dist.prob);
  const rng = new Rng(1);
  let sink = 0;
  // The sum stays in a local: a captured variable holding a double is a heap number that
  // every `+=` allocates anew, which made this loop 2-3x slower and its speed depend on GC.
  const rate = opsPerSecond(() => {
    let s = 0;
    for (let i = 0; i < 100_000; i++) s += dist.value[alias.draw(rng)]!;
    sink += s;
    return 100_000;
  }, ms);
  if (sink === -1) console.log(sink);
  return rate;
}

/**
 * The raw loop as issue #39 measured it: each draw's value added to a variable the measuring
 * closure captures. Past the small-integer range that sum is a heap number allocated anew at every
 * `+=`, so this loop runs 2-3x slower than `rawAliasRate` and with the collector's state. It is
 * kept only as the yardstick the "normalised" goals were stated against (yardstick.ts).
 */
export function capturedSumRate(ms = 1000): number {
  const dist = pullDistribution(BENCH_POOL);
  const alias = new AliasTable(dist.prob);
  const rng = new Rng(1);
  let sink = 0;
  const rate = opsPerSecond(() => {
    for (let i = 0; i < 100_000; i++) sink += dist.value[alias.draw(rng)]!;
    return 100_000;
  }, ms);
  if (sink === -1) console.log(sink);
  return rate;
}
