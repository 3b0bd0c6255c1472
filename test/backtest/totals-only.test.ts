import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runPath } from '../../src/backtest/path/path.js';
import type { MarketKind, PathResult } from '../../src/backtest/path/path-io.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import { worldSnapshot } from './world-snapshot.js';

// The optimizer's paths skip the model's sums (`totalsOnly`): nothing a path decides may read
// them, so every figure but the model's and the pools' value must be the full path's.

const kept = (r: PathResult) => {
  const { model: _m, modelPools: _p, poolValue: _v, ...rest } = r;
  return JSON.stringify(rest, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as Float64Array) : v));
};

describe('paths that keep their totals alone', () => {
  it.each([
    ['balanced', 'dynamic'],
    ['chase', 'dynamic'],
    ['balanced', 'static'],
  ] as const)('are the full paths but for the model: %s, %s', async (name, market: MarketKind) => {
    const strategy = StrategyFile.parse(parse(readFileSync(`strategies/${name}.yaml`, 'utf8')));
    const spec = { snapshot: await worldSnapshot(), strategy, days: 10, seed: 3, market };
    const full = new Engine(spec);
    const lean = new Engine({ ...spec, totalsOnly: true });
    const opts = { days: spec.days, seed: spec.seed, cards: full.cards };
    for (const i of [0, 1, 2, 5]) {
      const a = runPath(full.model, full.marketFor(i), i, opts);
      const b = lean.runPathShared(i);
      expect(kept(b)).toBe(kept(a));
      expect(a.packs).toBeGreaterThan(0);
      expect(b.model.every((x) => x === 0)).toBe(true);
    }
  });
});
