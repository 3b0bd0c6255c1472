/**
 * Calibration against a simulator whose dynamics the tool is not told (issue #14): three days of
 * hourly snapshots, the simulator's clock advanced an hour at a time, give the openings rate and
 * the value volatility within 15% of the truth and the restock share within 50%.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Calibration, calibrate } from '../../../src/backtest/calibrate/calibrate.js';
import { DynamicsSpec } from '../../../src/market/world-schema.js';
import { simulatedSeries, TRUTH } from './helpers.js';

let result: Calibration;
beforeAll(async () => {
  const { series, report } = await simulatedSeries(72);
  result = calibrate({
    series,
    report,
    ownUserIds: new Set(),
    listings: [],
    defaults: DynamicsSpec.parse({}),
  });
});

describe('calibrate against packbot sim (72 hourly snapshots)', () => {
  const within = (got: number, truth: number, share: number) =>
    expect(Math.abs(got / truth - 1)).toBeLessThanOrEqual(share);
  it('others_pack_openings_per_hour within 15%', () => {
    within(result.dynamics.others_pack_openings_per_hour, TRUTH.others_pack_openings_per_hour, 0.15);
  });
  it('value_daily_volatility within 15%', () => {
    within(result.dynamics.value_daily_volatility, TRUTH.value_daily_volatility, 0.15);
  });
  it('restock_fraction_per_hour within 50%', () => {
    within(result.dynamics.restock_fraction_per_hour, TRUTH.restock_fraction_per_hour, 0.5);
  });
  it('says which fields kept their defaults, and holds a held-out check', () => {
    expect(result.defaulted.listing_fills_per_day_at_value).toMatch(/too few listings/);
    expect(result.held_out?.openings.length).toBeGreaterThan(0);
    expect(result.held_out?.price_moves.length).toBe(5);
  });
});
