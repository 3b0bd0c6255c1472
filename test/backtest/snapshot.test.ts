import { describe, expect, it } from 'vitest';
import { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { takeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import { loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';

describe('takeSnapshot', () => {
  it('records every pack x risk level pool of the simulator, the catalog and the account', async () => {
    const clock = new VirtualClock('2026-03-02T10:00:00Z');
    const market = new Market(loadWorld(), { clock, seed: 5 });
    const api = market.api('sk_sim_full');
    const snap = await takeSnapshot(api, { clock, source: 'test', categories: ['pokemon'] });
    expect(SnapshotFile.safeParse(snap).success).toBe(true);
    const list = await api.listPacks({ category: 'pokemon' });
    const expected = list.packs.flatMap((p) => p.risk_levels.map((r) => `${p.pack_type}/${r}`)).sort();
    expect(snap.pools.map((p) => `${p.pack_type}/${p.risk_level}`).sort()).toEqual(expected);
    expect(snap.account?.username).toBeTruthy();
    expect(snap.taken_at).toBe('2026-03-02T10:00:00.000Z');
  });

  it('stores a null account when the key cannot read it', async () => {
    const clock = new VirtualClock('2026-03-02T10:00:00Z');
    const market = new Market(loadWorld(), { clock, seed: 5 });
    const snap = await takeSnapshot(market.api('sk_sim_unlinked'), {
      clock,
      source: 'test',
      categories: ['pokemon'],
    });
    expect(snap.account).toBeNull();
    expect(snap.pools.length).toBeGreaterThan(0);
  });
});
