import { describe, expect, it } from 'vitest';
import { runPath } from '../../src/backtest/path/path.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { bindingCases, caseSnapshot, plain } from './binding-cases.js';

// A static path repeats an open decision, and skips the decision after a listing ends, where
// decideOpen provably gives the same answer (path.ts). Asking at every slot, as the bot does,
// must give the same path, field by field, whatever binds.

describe('static path: repeated decisions', () => {
  it.each(bindingCases)('gives the same path as deciding at every slot: $name', (c) => {
    const engine = new Engine({
      snapshot: caseSnapshot(c),
      strategy: c.strategy,
      days: 6,
      seed: 7,
      market: 'static',
    });
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
