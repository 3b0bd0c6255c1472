import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { Engine } from '../../src/backtest/engine.js';
import { runPath } from '../../src/backtest/path.js';
import type { PathResult } from '../../src/backtest/path-io.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import {
  chaseOnTop,
  consolationListed,
  consolationMidpoint,
  singleBand,
  truncated,
} from '../fixtures/pools.js';
import { account, snapshot, strategy } from './helpers.js';

// The static market's own loop (static-path.ts, what `Engine.runPath` runs for a static market)
// must give the general loop's path (path.ts `runPath` with a StaticMarket), field by field and
// bit for bit, whatever binds: limits, caps, reserve and ruin, stop-loss, cool-down, Kelly,
// listings (ties of their ends included), sealed packs held, several pools, a snapshot's account.

const pools = [chaseOnTop, { ...singleBand, price: 2.6 }];
const losing = [{ ...singleBand, price: 4 }];
const sealed = [consolationMidpoint, consolationListed, truncated];
type Case = { name: string; strategy: ReturnType<typeof strategy>; balance?: number; pools?: typeof pools };
const cases: Case[] = [
  { name: 'fixed, generous budget', strategy: strategy() },
  { name: 'listing pulls', strategy: strategy({ sell: { threshold_usd: 20 } }) },
  { name: 'listing everything', strategy: strategy({ sell: { threshold_usd: 0.5 } }) },
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
  { name: 'sealed packs held and listed', strategy: strategy({ sell: { threshold_usd: 6 } }), pools: sealed },
  {
    name: 'sealed packs, short listings',
    strategy: strategy({ sell: { threshold_usd: 3, list: { max_days: 1 } } }),
    pools: sealed,
  },
  { name: 'strategy kill switch', strategy: strategy({ budget: { kill_switch: true } }) },
];

function plain(r: PathResult) {
  return JSON.stringify(r, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v));
}

function same(engine: Engine, paths: number) {
  for (let i = 0; i < paths; i++) {
    const opts = { days: engine.spec.days, seed: engine.spec.seed, cards: engine.cards };
    const general = runPath(engine.model, engine.marketFor(i), i, opts);
    expect(plain(engine.runPath(i))).toBe(plain(general));
  }
}

describe('static path loop', () => {
  it.each(cases)("gives the general loop's path: $name", (c) => {
    const snap = snapshot(
      c.pools ?? pools,
      account({ max_packs_per_day: 60, packs_left_today: 60 }, c.balance ?? 100_000),
    );
    same(new Engine({ snapshot: snap, strategy: c.strategy, days: 6, seed: 7, market: 'static' }), 12);
  });

  it("gives the general loop's path on the sim snapshot with the shipped strategies", () => {
    const snap = JSON.parse(
      readFileSync(new URL('../fixtures/sim-pokemon-snapshot.json', import.meta.url), 'utf8'),
    ) as SnapshotFile;
    for (const name of ['balanced', 'chase', 'conservative', 'shop-sniper']) {
      const strat = StrategyFile.parse(
        parseYaml(readFileSync(new URL(`../../strategies/${name}.yaml`, import.meta.url), 'utf8')),
      );
      same(new Engine({ snapshot: snap, strategy: strat, days: 20, seed: 3, market: 'static' }), 4);
    }
  });

  it("gives the general loop's path with no account (default limits) and the bench's strategy", () => {
    const snap = snapshot(pools, null);
    same(
      new Engine({
        snapshot: snap,
        strategy: strategy({ sell: { threshold_usd: 25 } }),
        days: 30,
        seed: 1,
        market: 'static',
      }),
      6,
    );
  });
});
