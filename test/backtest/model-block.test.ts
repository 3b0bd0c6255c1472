/**
 * The backtest's `model` block (issue #27): expected vs realized over every path's orders, the
 * block `packbot report --json` has. On the backtest's own world the gap is within its error,
 * overall and per part; with listings filling twenty times slower (`--dynamics`) the listing part
 * shows it. (Shards merge into the unsharded run's block: test/backtest/shard.test.ts compares the
 * whole reports.)
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { terminalSummary } from '../../src/backtest/report/terminal.js';
import { runBacktest } from '../../src/backtest/run/run.js';
import { takeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import { loadStrategy } from '../../src/config/strategy-file.js';
import { loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { MODEL_PARTS } from '../../src/strategy/model-gap.js';

const ROOT = join(import.meta.dirname, '..', '..');
let snapshot: SnapshotFile;
beforeAll(async () => {
  const clock = new VirtualClock('2026-03-02T10:30:00Z');
  const market = new Market(loadWorld(), { clock, seed: 1 });
  snapshot = await takeSnapshot(market.api('sk_sim_full'), { clock, source: 'default world' });
});

const line = (m: Awaited<ReturnType<typeof runBacktest>>['model']) =>
  `${m.packs} packs (${m.open_pulls} open), z ${m.z}; ` +
  MODEL_PARTS.map((p) => `${p} ${m.parts[p].z} (${m.parts[p].pulls} pulls)`).join(', ');

describe('backtest model block', () => {
  const balanced = () => loadStrategy(join(ROOT, 'strategies', 'balanced.yaml'));

  it.each(['dynamic', 'static'] as const)(
    'balanced, %s market: |z| < 3 on its own world',
    async (market) => {
      const r = await runBacktest({
        snapshot,
        strategy: balanced(),
        days: 14,
        paths: 200,
        seed: 3,
        market,
        workers: 0,
      });
      console.log(`balanced ${market}, 200 paths x 14 days: ${line(r.model)}`);
      // Every order of every path is in the block, against the row it was opened on (the summary's
      // mean is rounded to 2 decimals: 200 × 0.005 = one pack either way).
      expect(Math.abs(r.model.packs - r.summary.packs_opened.mean * 200)).toBeLessThanOrEqual(1 + 1e-9);
      // Spend per pack over the block's own count (the rounded mean count is off by up to 1/200).
      expect(r.model.expected_net_usd).toBeCloseTo(
        (r.analytic.realized_ev_per_pack! - (r.summary.spend_usd.mean * 200) / r.model.packs) * r.model.packs,
        -1,
      );
      expect(r.model.parts.listing.pulls).toBeGreaterThan(1000);
      expect(Math.abs(r.model.z!)).toBeLessThan(3);
      for (const p of MODEL_PARTS) expect(Math.abs(r.model.parts[p].z ?? 0), p).toBeLessThan(3);
      expect(r.model.by_strategy).toEqual([expect.objectContaining({ strategy: 'balanced', z: r.model.z })]);
      expect(r.model.by_pack.reduce((n, p) => n + p.packs, 0)).toBe(r.model.packs);
      expect(terminalSummary(r)).toMatch(/^ {2}model: gap -?\$[\d.]+ ± \$[\d.]+ over \d+ packs, z [+-]\d/m);
    },
    120_000,
  );

  it('conservative assumes slower fills than the world has: its listing part says so, the rest holds', async () => {
    // Its piecewise law: 35% sold within 2 days at 1.2x (0.22 buyers a day); the world's hazard at
    // 1.2x is exp(-4 x 0.2) = 0.45 a day. Its packs (chill, standard) also pull sealed packs.
    const strategy = loadStrategy(join(ROOT, 'strategies', 'conservative.yaml'));
    const r = await runBacktest({
      snapshot,
      strategy,
      days: 14,
      paths: 200,
      seed: 3,
      market: 'dynamic',
      workers: 0,
    });
    console.log(`conservative dynamic, 200 paths x 14 days: ${line(r.model)}`);
    expect(r.model.parts.listing.z!).toBeGreaterThan(3);
    expect(r.model.parts.held.pulls).toBeGreaterThan(100);
    for (const z of [r.model.z, r.model.parts.sell_back.z, r.model.parts.held.z])
      expect(Math.abs(z!)).toBeLessThan(3);
  }, 120_000);

  it('the same strategy in a world whose listings fill 20x slower: the listing part shows it', async () => {
    const r = await runBacktest({
      snapshot,
      strategy: balanced(),
      days: 14,
      paths: 50,
      seed: 3,
      market: 'dynamic',
      workers: 0,
      dynamics: { listing_fills_per_day_at_value: 0.05 },
    });
    console.log(`balanced, listings 20x slower, 50 paths x 14 days: ${line(r.model)}`);
    expect(r.model.parts.listing.z!).toBeLessThan(-3);
    expect(Math.abs(r.model.parts.sell_back.z!)).toBeLessThan(3);
    // The orders resolved in full: those with a listing still running at a path's end left out.
    const res = r.model.resolved;
    expect(res.open_pulls).toBe(0);
    expect(res.orders).toBeLessThan(r.model.orders);
    expect(res.resolved_packs).toBeLessThanOrEqual(r.model.resolved_packs);
    expect(res.parts.listing.pulls).toBeLessThan(r.model.parts.listing.pulls);
  }, 120_000);
});
