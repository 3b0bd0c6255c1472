/**
 * The scorer agrees with the dynamic backtest (issue #14): for the shipped strategies on the
 * default world's snapshot, the realized EV the scorer gave each order (the row it was opened
 * on) and the value the backtest's world paid for those packs agree per pack within 2%, or four
 * standard errors of their difference when that is wider. docs/strategy.md has the same
 * comparison on 2,000 paths; this runs fewer.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { runBacktest } from '../../src/backtest/run/run.js';
import { takeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import { loadStrategy } from '../../src/config/strategy-file.js';
import { loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';

const ROOT = join(import.meta.dirname, '..', '..');
const PATHS = 300;
const DAYS = 30;

let snapshot: SnapshotFile;
beforeAll(async () => {
  // The default world (config/sim.yaml) at the default seed, as `packbot snapshot` records it.
  const clock = new VirtualClock('2026-03-02T10:30:00Z');
  const market = new Market(loadWorld(), { clock, seed: 1 });
  snapshot = await takeSnapshot(market.api('sk_sim_full'), { clock, source: 'default world' });
});

describe('scorer realized EV vs dynamic backtest value per pack (default world)', () => {
  it.each(['balanced', 'chase', 'conservative'])('%s', async (name) => {
    const strategy = loadStrategy(join(ROOT, 'strategies', `${name}.yaml`));
    const r = await runBacktest({
      snapshot,
      strategy,
      days: DAYS,
      paths: PATHS,
      seed: 11,
      market: 'dynamic',
      workers: 0,
    });
    const a = r.analytic;
    const expected = a.realized_ev_per_pack!;
    const gap = a.scorer_gap_per_pack!;
    const se = a.scorer_gap_per_pack_stderr!;
    expect(r.summary.packs_opened.mean).toBeGreaterThan(0);
    expect(se).toBeGreaterThan(0);
    expect(a.backtest_value_per_pack! - expected).toBeCloseTo(gap, 4);
    expect(Math.abs(gap)).toBeLessThanOrEqual(Math.max(0.02 * expected, 4 * se));
  });
});
