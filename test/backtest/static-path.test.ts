import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { Engine } from '../../src/backtest/engine.js';
import { runPath } from '../../src/backtest/path.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import { consolationListed, consolationMidpoint, truncated } from '../fixtures/pools.js';
import { type BindingCase, bindingCases, caseSnapshot, plain, pools } from './binding-cases.js';
import { snapshot, strategy } from './helpers.js';

// The static market's own loop (static-path.ts, what `Engine.runPath` runs for a static market)
// must give the general loop's path (path.ts `runPath` with a StaticMarket), field by field and
// bit for bit, whatever binds: limits, caps, reserve and ruin, stop-loss, cool-down, Kelly,
// listings (ties of their ends included), sealed packs held, several pools, a snapshot's account.

const sealed = [consolationMidpoint, consolationListed, truncated];
const cases: BindingCase[] = [
  ...bindingCases,
  { name: 'listing everything', strategy: strategy({ sell: { threshold_usd: 0.5 } }) },
  { name: 'sealed packs held and listed', strategy: strategy({ sell: { threshold_usd: 6 } }), pools: sealed },
  {
    name: 'sealed packs, short listings',
    strategy: strategy({ sell: { threshold_usd: 3, list: { max_days: 1 } } }),
    pools: sealed,
  },
  { name: 'strategy kill switch', strategy: strategy({ budget: { kill_switch: true } }) },
];

function same(engine: Engine, paths: number) {
  for (let i = 0; i < paths; i++) {
    const opts = { days: engine.spec.days, seed: engine.spec.seed, cards: engine.cards };
    const general = runPath(engine.model, engine.marketFor(i), i, opts);
    expect(plain(engine.runPath(i))).toBe(plain(general));
  }
}

describe('static path loop', () => {
  it.each(cases)("gives the general loop's path: $name", (c) => {
    same(
      new Engine({ snapshot: caseSnapshot(c), strategy: c.strategy, days: 6, seed: 7, market: 'static' }),
      12,
    );
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
