/** A simulator run with dynamics far from the defaults, recorded hour by hour (issue #14's check). */
import type { PurchaseReportRow } from '../../../src/api/schemas.js';
import type { SnapshotFile } from '../../../src/api/snapshot-schema.js';
import { takeSnapshot } from '../../../src/backtest/snapshot/snapshot.js';
import { loadWorld } from '../../../src/config/world-file.js';
import { HOUR_MS, iso, VirtualClock } from '../../../src/core/clock.js';
import { Market } from '../../../src/market/market.js';
import { WorldFile } from '../../../src/market/world-schema.js';

/** The world's truth, far from the defaults (30 openings/h, 0.02 a day, 0.3/h, 3 cards/h). */
export const TRUTH = {
  others_pack_openings_per_hour: 55,
  value_daily_volatility: 0.05,
  restock_fraction_per_hour: 0.12,
  restock_cards_per_hour_per_pack: 1.5,
};

/** Hourly snapshots of the default world run with TRUTH, and the purchase report over them. */
export async function simulatedSeries(
  hours: number,
): Promise<{ series: SnapshotFile[]; report: PurchaseReportRow[] }> {
  const world = truthWorld();
  const clock = new VirtualClock('2026-03-02T00:00:00Z');
  const market = new Market(world, { clock, seed: 7 });
  const api = market.api('sk_sim_full');
  const series: SnapshotFile[] = [];
  for (let h = 0; h <= hours; h++) {
    if (h > 0) await clock.advance(HOUR_MS);
    series.push(await takeSnapshot(api, { clock, source: 'sim', serverNow: () => clock.now() }));
  }
  const report: PurchaseReportRow[] = [];
  for (let page = 1; ; page++) {
    const r = await api.getPurchaseReport({
      since: series[0]!.taken_at,
      until: iso(clock.now()),
      page,
      per_page: 1000,
    });
    report.push(...r.pulls);
    if (page * 1000 >= r.total) break;
  }
  return { series, report };
}

/** The default world with TRUTH's dynamics. */
export function truthWorld() {
  const base = loadWorld();
  return WorldFile.parse({ ...base, dynamics: { ...base.dynamics, ...TRUTH } });
}
