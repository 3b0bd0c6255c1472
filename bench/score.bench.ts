/**
 * Scoring a 10,000-card pool (distribution + realized stats + decision) must take under 5 ms.
 * The baseline is a bare loop summing the same cards' values, to compare across machines.
 */
import type { PackPool, PoolCard } from '../src/api/schemas.js';
import { Rng } from '../src/core/prng.js';
import { scorePool } from '../src/strategy/score.js';
import { STRATEGY_FORMAT, StrategyFile } from '../src/strategy/strategy-schema.js';
import type { Benchmark } from './lib.js';
import { opsPerSecond } from './lib.js';

function bigPool(n: number): PackPool {
  const rng = new Rng(1);
  const bands = [
    {
      bucket_id: 'c',
      label: '',
      min_value: 0.5,
      max_value: 10,
      odds: 0.6,
      is_consolation: false,
      hittable_cards: 0,
    },
    {
      bucket_id: 'u',
      label: '',
      min_value: 10,
      max_value: 50,
      odds: 0.3,
      is_consolation: false,
      hittable_cards: 0,
    },
    {
      bucket_id: 'r',
      label: '',
      min_value: 50,
      max_value: 500,
      odds: 0.09,
      is_consolation: false,
      hittable_cards: 0,
    },
    {
      bucket_id: 's',
      label: '',
      min_value: 2,
      max_value: 6,
      odds: 0.01,
      is_consolation: true,
      hittable_cards: 0,
    },
  ];
  const cards: PoolCard[] = [];
  for (let i = 0; i < n; i++) {
    const b = bands[i % 4]!;
    b.hittable_cards++;
    const v = b.min_value + rng.next() * (b.max_value - b.min_value);
    cards.push({
      id: `card-${i}`,
      name: `Card ${i}`,
      market_value: Math.round(v * 100) / 100,
      bucket_id: b.bucket_id,
    });
  }
  return {
    pack_type: 'bench',
    name: 'Bench',
    category: 'pokemon',
    risk_level: 'standard',
    price: 20,
    available: true,
    expected_value: 19,
    bands,
    chase: null,
    total_cards: n,
    cards,
  };
}

const bench: Benchmark = {
  name: 'score',
  async run() {
    const pool = bigPool(10_000);
    const strategy = StrategyFile.parse({ format: STRATEGY_FORMAT });
    const ctx = { balanceCents: 1_000_000 };
    let sink = 0;
    const scoresPerSec = opsPerSecond(() => {
      sink += scorePool(pool, strategy, ctx).ev;
      return 1;
    });
    const loopsPerSec = opsPerSecond(() => {
      let s = 0;
      for (const c of pool.cards) s += c.market_value;
      sink += s;
      return 1;
    });
    if (sink === Number.NEGATIVE_INFINITY) console.log(sink);
    const ms = 1000 / scoresPerSec;
    return [
      {
        name: 'score: 10k-card pool',
        value: `${ms.toFixed(3)} ms/pool`,
        ratio: loopsPerSec / scoresPerSec,
        goal: '< 5 ms per pool (ratio: score time / bare sum loop)',
        ok: ms < 5,
      },
    ];
  },
};

export default bench;
