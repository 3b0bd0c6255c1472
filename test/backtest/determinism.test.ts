import { describe, expect, it } from 'vitest';
import { Engine } from '../../src/backtest/run/engine.js';
import { runBacktest } from '../../src/backtest/run/run.js';
import { chaseOnTop, singleBand } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { account, snapshot } from './helpers.js';

const snap = snapshot([chaseOnTop, { ...singleBand, price: 2.6 }]);

describe('determinism and limits', () => {
  it('the same seed gives the same summary whatever the number of threads', async () => {
    const base = {
      snapshot: snap,
      strategy: strategy({}, { base: 'backtest' }),
      days: 3,
      paths: 60,
      seed: 42,
      market: 'static' as const,
      chunk: 7,
    };
    const a = await runBacktest({ ...base, workers: 1 });
    const b = await runBacktest({ ...base, workers: 2 });
    const c = await runBacktest({ ...base, workers: 0 });
    // This thread and two workers, taking ranges from one counter.
    const e = await runBacktest({ ...base, workers: 3 });
    const strip = (r: typeof a) => JSON.stringify({ ...r, elapsed_ms: 0 });
    expect(strip(a)).toBe(strip(b));
    expect(strip(a)).toBe(strip(c));
    expect(strip(a)).toBe(strip(e));
    const d = await runBacktest({ ...base, workers: 0, seed: 43 });
    expect(d.summary.net_pnl_usd.mean).not.toBe(a.summary.net_pnl_usd.mean);
  });

  it('honours a small daily ceiling and the purchase interval exactly', async () => {
    const s = snapshot([chaseOnTop], account({ max_packs_per_day: 7, packs_left_today: 3, packs_today: 4 }));
    const r = await runBacktest({
      snapshot: s,
      strategy: strategy({}, { base: 'backtest' }),
      days: 5,
      paths: 20,
      seed: 1,
      market: 'static',
      workers: 0,
    });
    // 3 left on the first UTC day, then 7 on each of the next five (the horizon ends at 10:30 on day 6).
    expect(r.summary.packs_opened.mean).toBe(3 + 7 * 5);
    expect(r.summary.max_packs_per_utc_day).toBe(7);
  });

  it('a dynamic pool that empties makes its pack unavailable, never an error', () => {
    const tiny = { ...singleBand, price: 0.5 }; // 4 cards, everything opened at once
    const engine = new Engine({
      snapshot: snapshot([tiny]),
      strategy: strategy({ open: { max_quantity: 1 } }, { base: 'backtest' }),
      days: 2,
      seed: 3,
      market: 'dynamic',
      dynamics: {
        others_pack_openings_per_hour: 0,
        restock_cards_per_hour_per_pack: 0,
        restock_fraction_per_hour: 0,
      },
    });
    const r = engine.runPath(0);
    expect(r.packs).toBe(4);
    expect(r.payoutCents).toBe(90 + 180 + 270 + 360);
  });
});
