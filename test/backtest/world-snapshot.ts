import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { takeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import { loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';

let cached: Promise<SnapshotFile> | undefined;

/** The default world's snapshot (every category), as `packbot snapshot` records it at seed 1. */
export function worldSnapshot(): Promise<SnapshotFile> {
  cached ??= (async () => {
    const clock = new VirtualClock('2026-03-02T10:00:00Z');
    const market = new Market(loadWorld(), { clock, seed: 1 });
    return takeSnapshot(market.api('sk_sim_full'), { clock, source: 'default world, seed 1' });
  })();
  return cached;
}
