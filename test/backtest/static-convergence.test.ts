import { describe, expect, it } from 'vitest';
import type { PackPool } from '../../src/api/schemas.js';
import { runBacktest } from '../../src/backtest/run/run.js';
import { scorePool } from '../../src/strategy/score.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { chaseOnTop, consolationListed, singleBand, truncated } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { snapshot } from './helpers.js';

async function staticRun(pool: PackPool, s: Strategy, paths = 400, days = 3) {
  return runBacktest({
    snapshot: snapshot([pool]),
    strategy: s,
    days,
    paths,
    seed: 7,
    market: 'static',
    workers: 0,
  });
}

describe('static market converges to the scorer', () => {
  const cases: [string, PackPool, Strategy, number][] = [
    // Sell everything back at 0.9: 0.9 x 13.316 = 11.9844 per pack (hand-computed EV in fixtures).
    ['chase on top, all sold back', chaseOnTop, strategy({}, { base: 'backtest' }), 0.9 * 13.316],
    // Cards 1..4 at 0.9: 0.9 x 2.5 = 2.25.
    ['single band', singleBand, strategy({}, { base: 'backtest' }), 2.25],
    // Card 8 sold back (7.20) half the time, sealed packs 1 and 4 held at half their value: 0.5 x 7.2 + 0.5 x 1.25.
    [
      'sealed packs at the strategy fraction',
      consolationListed,
      strategy({}, { base: 'backtest' }),
      0.5 * 7.2 + 0.5 * 1.25,
    ],
  ];
  for (const [name, pool, s, hand] of cases)
    it(name, async () => {
      const r = await staticRun(pool, s);
      const row = scorePool(pool, s);
      expect(Math.abs(row.realized_ev - hand)).toBeLessThan(0.006);
      const got = r.analytic.backtest_value_per_pack!;
      const se = r.analytic.backtest_value_per_pack_stderr!;
      expect(se).toBeGreaterThan(0);
      expect(Math.abs(got - hand)).toBeLessThan(4 * se + 0.005);
      expect(r.analytic.realized_ev_per_pack).toBeCloseTo(row.realized_ev, 6);
      // From 10:30 on day 1 to 10:30 on day 4: four UTC days at the 100-pack ceiling.
      expect(r.summary.packs_opened.mean).toBe(400);
      expect(r.summary.max_packs_per_utc_day).toBe(100);
    });

  it('listing outcomes follow the strategy fill model (truncated pool, estimated)', async () => {
    const s = strategy(
      {
        sell: {
          threshold_usd: 12,
          list: {
            markup: 1.2,
            max_days: 0.25,
            markup_step: 0,
            fill: { model: 'hazard', fills_per_day_at_value: 8, price_sensitivity: 4 },
          },
        },
      },
      { base: 'backtest' },
    );
    const row = scorePool(truncated, s);
    expect(row.share_sold_back).toBeLessThan(1);
    // Listings still open at the end are marked at their sell-back value: a short max_days keeps that tail small.
    const r = await staticRun(truncated, s, 200, 20);
    const got = r.analytic.backtest_value_per_pack!;
    const se = r.analytic.backtest_value_per_pack_stderr!;
    expect(r.summary.listing_proceeds_usd.mean).toBeGreaterThan(0);
    expect(Math.abs(got - row.realized_ev)).toBeLessThan(4 * se + 0.05);
  });
});
