import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { runPath } from '../../src/backtest/path/path.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import { plain } from './binding-cases.js';
import { worldSnapshot } from './world-snapshot.js';

// The engine's shared paths restart the previous path's world (WorldPools.restart) instead of
// making one: each path must be the one a fresh world gives, whatever ran before it.

describe('dynamic market: a restarted world', () => {
  it.each(['balanced', 'chase'])('gives the paths of fresh worlds: %s', async (name) => {
    const strategy = StrategyFile.parse(parse(readFileSync(`strategies/${name}.yaml`, 'utf8')));
    const engine = new Engine({
      snapshot: await worldSnapshot(),
      strategy,
      days: 10,
      seed: 5,
      market: 'dynamic',
    });
    const opts = { days: engine.spec.days, seed: engine.spec.seed, cards: engine.cards };
    // Out of order and repeated: a restart must not depend on which path ran last.
    for (const i of [0, 1, 7, 1, 2]) {
      const shared = plain(engine.runPathShared(i));
      expect(shared).toBe(plain(runPath(engine.model, engine.marketFor(i), i, opts)));
    }
  });
});
