import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/backtest/engine.js';
import { runPath } from '../../src/backtest/path.js';
import type { PathResult } from '../../src/backtest/path-io.js';
import { chaseOnTop, singleBand } from '../fixtures/pools.js';
import { account, snapshot, strategy } from './helpers.js';

// A static path repeats an open decision, and skips the decision after a listing ends, where
// decideOpen provably gives the same answer (path.ts). Asking at every slot, as the bot does,
// must give the same path, field by field, whatever binds: the day's packs, the rate limit, the
// cool-down, the daily and total caps, the balance reserve, the stop-loss, Kelly sizing.

const pools = [chaseOnTop, { ...singleBand, price: 2.6 }];
const losing = [{ ...singleBand, price: 4 }];
const cases: {
  name: string;
  strategy: ReturnType<typeof strategy>;
  balance?: number;
  pools?: typeof pools;
}[] = [
  { name: 'fixed, generous budget', strategy: strategy() },
  { name: 'listing pulls', strategy: strategy({ sell: { threshold_usd: 20 } }) },
  {
    name: 'daily cap binds the quantity',
    strategy: strategy({ budget: { max_daily_spend_usd: 100 }, sell: { threshold_usd: 20 } }),
  },
  { name: 'total cap', strategy: strategy({ budget: { max_total_spend_usd: 700 } }) },
  {
    name: 'balance reserve and ruin',
    strategy: strategy({ budget: { min_balance_usd: 400 }, sell: { threshold_usd: 30 } }),
    balance: 700,
  },
  {
    name: 'a losing pack: reserve and ruin',
    strategy: strategy({ budget: { min_balance_usd: 100 } }),
    balance: 300,
    pools: losing,
  },
  {
    name: 'a losing pack: stop-loss',
    strategy: strategy({ budget: { stop_loss_usd: 40 } }),
    balance: 1000,
    pools: losing,
  },
  {
    name: 'stop-loss',
    strategy: strategy({ budget: { stop_loss_usd: 150 }, sell: { threshold_usd: 25 } }),
    balance: 2000,
  },
  {
    name: 'cool-down and small quantity',
    strategy: strategy({ open: { cooldown_seconds: 150, max_quantity: 3 }, sell: { threshold_usd: 20 } }),
  },
  {
    name: 'Kelly sizing',
    strategy: strategy({ open: { sizing: 'kelly', kelly_fraction: 1 }, sell: { threshold_usd: 20 } }),
    balance: 3000,
  },
];

function plain(r: PathResult) {
  return JSON.stringify(r, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v));
}

describe('static path: repeated decisions', () => {
  it.each(cases)('gives the same path as deciding at every slot: $name', (c) => {
    const snap = snapshot(
      c.pools ?? pools,
      account({ max_packs_per_day: 60, packs_left_today: 60 }, c.balance ?? 100_000),
    );
    const engine = new Engine({ snapshot: snap, strategy: c.strategy, days: 6, seed: 7, market: 'static' });
    const skipped = { repeated: 0, waits: 0 };
    for (let i = 0; i < 12; i++) {
      const opts = { days: engine.spec.days, seed: engine.spec.seed, cards: engine.cards };
      const fast = runPath(engine.model, engine.marketFor(i), i, { ...opts, skipped });
      const slow = runPath(engine.model, engine.marketFor(i), i, { ...opts, decideEverySlot: true });
      expect(plain(fast)).toBe(plain(slow));
    }
    // The skipping path did skip (the test would otherwise compare a path with itself).
    expect(skipped.repeated).toBeGreaterThan(0);
  });
});
