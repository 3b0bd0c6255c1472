import { describe, expect, it } from 'vitest';
import { LATE_RATE, VALUE_LOCK_MS } from '../../src/api/rules.js';
import { DAY_MS, HOUR_MS } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { decideListing, type ListingView } from '../../src/strategy/decide-listing.js';
import { hazardPerDay, listingLife } from '../../src/strategy/listing-life.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { strategy } from '../strategy-builder.js';
import { flatLife, linearFill } from './helpers.js';

const hazard = (fills: number, sensitivity: number) => ({
  model: 'hazard' as const,
  fills_per_day_at_value: fills,
  price_sensitivity: sensitivity,
});

describe('listingLife: lives that can be priced by hand', () => {
  it.each([
    // One price for max_days, no drift: the fill model's own probability within max_days.
    [
      'hazard, 3 days at 1.3',
      { markup: 1.3, max_days: 3, fill: hazard(1, 4) },
      1 - Math.exp(-3 * Math.exp(-1.2)),
    ],
    ['piecewise 0.4 at 1.5', { markup: 1.5, max_days: 3, fill: linearFill }, 0.4],
    [
      'hazard, 6 hours',
      { markup: 1.2, max_days: 0.25, fill: hazard(8, 4) },
      1 - Math.exp(-2 * Math.exp(-0.8)),
    ],
  ])('%s', (_name, list, fill) => {
    const life = listingLife(strategy({ sell: { list: { ...flatLife, seller_fee_rate: 0.05, ...list } } }));
    expect(life.fill).toBeCloseTo(fill, 9);
    expect(life.saleYield).toBeCloseTo(list.markup * 0.95, 6);
    expect(life.fallbackYield).toBeCloseTo(LATE_RATE, 9);
    expect(life.expectedYield).toBeCloseTo(fill * list.markup * 0.95 + (1 - fill) * LATE_RATE, 6);
  });

  it('steps the markup down once a repricing period has passed', () => {
    // 1.3 for a day, 1.2 for a day, 1.1 for a day: survival e^(−Σ rate_i), each sale at its price.
    const list = { markup: 1.3, markup_step: 0.1, min_markup: 1.1, max_days: 3, fill: hazard(1, 4) };
    const life = listingLife(strategy({ sell: { list: { ...list, value_drift: { daily_volatility: 0 } } } }));
    const rates = [1.3, 1.2, 1.1].map((m) => Math.exp(-4 * (m - 1)));
    let alive = 1;
    let sale = 0;
    rates.forEach((r, i) => {
      const sold = alive * (1 - Math.exp(-r));
      sale += sold * [1.3, 1.2, 1.1][i]!;
      alive -= sold;
    });
    expect(life.fill).toBeCloseTo(1 - alive, 9);
    expect(life.saleYield * life.fill).toBeCloseTo(sale, 6);
  });

  it('reads a logistic or piecewise model as a constant hazard over max_days', () => {
    expect(hazardPerDay(linearFill, 1.5, 2)).toBeCloseTo(-Math.log(0.6) / 2, 12);
    expect(hazardPerDay(hazard(2, 3), 1.5, 2)).toBeCloseTo(2 * Math.exp(-1.5), 12);
    expect(hazardPerDay(linearFill, 2.5, 2)).toBe(0);
  });
});

describe('listingLife: value drift against the lock', () => {
  const drifting = (vol: number) =>
    strategy({
      sell: {
        list: { markup: 1.3, max_days: 3, fill: hazard(1, 4), value_drift: { daily_volatility: vol } },
      },
    });

  it('a listing above the locked value stays up until the lock ends: drift sells more, and never for less', () => {
    const still = listingLife(drifting(0));
    const moving = listingLife(drifting(0.02));
    expect(moving.fill).toBeGreaterThan(still.fill + 0.05);
    expect(moving.meanDays).toBeGreaterThan(still.meanDays);
    expect(moving.meanDays).toBeLessThanOrEqual(VALUE_LOCK_MS / DAY_MS + 1);
    // Sold back at the locked value below it, at the market's above it after the lock: ≥ 0.8.
    expect(moving.fallbackYield).toBeGreaterThanOrEqual(LATE_RATE - 1e-9);
    expect(moving.expectedYield).toBeGreaterThan(still.expectedYield);
  });

  it.each([
    ['the default band', drifting(0.03)],
    [
      'a wide band, markup steps inside it, a trend',
      strategy({
        sell: {
          list: {
            markup: 1.4,
            markup_step: 0.05,
            min_markup: 1.1,
            max_days: 3,
            reprice_band: 0.12,
            fill: hazard(1, 4),
            value_drift: { daily_volatility: 0.05, daily_trend: 0.01 },
          },
        },
      }),
    ],
  ])('matches a direct simulation of decideListing on hourly ticks: %s', (_name, s) => {
    const life = listingLife(s);
    const mc = simulate(s, 6000, new Rng(3));
    expect(Math.abs(life.fill - mc.fill)).toBeLessThan(4 * mc.fillSe + 0.005);
    expect(Math.abs(life.expectedYield - mc.mean)).toBeLessThan(4 * mc.meanSe + 0.005);
  });
});

/**
 * Listings of a card worth 1000.00 replayed one by one: the value moves log-normally each hour,
 * a buyer comes at the tick with the fill model's probability, and decideListing is asked after
 * every tick and at each daily step (repricing to its target, or delisting at 0.8 of the locked or
 * the market value).
 */
function simulate(s: Strategy, n: number, rng: Rng) {
  const list = s.sell.list;
  const basis = 100_000;
  const dt = HOUR_MS / DAY_MS;
  const vol = list.value_drift.daily_volatility;
  const trend = list.value_drift.daily_trend;
  const out: number[] = [];
  let sold = 0;
  for (let i = 0; i < n; i++) {
    let x = 0;
    const view: ListingView = {
      priceCents: Math.round(basis * list.markup),
      listedAt: 0,
      pricedAt: 0,
      marketValueCents: basis,
      basisValueCents: basis,
      lockedValueUntil: VALUE_LOCK_MS,
    };
    let paid = Number.NaN;
    for (let t = HOUR_MS / 2; Number.isNaN(paid); t += HOUR_MS) {
      x += (trend - (vol * vol) / 2) * dt + vol * Math.sqrt(dt) * rng.normal();
      view.marketValueCents = Math.round(basis * Math.exp(x));
      const rate = hazardPerDay(list.fill, view.priceCents / view.marketValueCents, list.max_days);
      if (rng.next() < 1 - Math.exp(-rate * dt)) {
        paid = view.priceCents * (1 - list.seller_fee_rate);
        sold++;
        break;
      }
      for (const at of [t, ...[1, 2, 3, 7].map((d) => d * DAY_MS).filter((d) => d > t && d < t + HOUR_MS)]) {
        let d = decideListing(view, s, at);
        if (d.action === 'reprice') {
          view.priceCents = d.priceCents;
          view.pricedAt = at;
          d = decideListing(view, s, at);
        }
        if (d.action === 'delist_and_sell_back') {
          paid = LATE_RATE * (at <= VALUE_LOCK_MS ? basis : view.marketValueCents);
          break;
        }
      }
    }
    out.push(paid / basis);
  }
  const mean = out.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(out.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
  const fill = sold / n;
  return { mean, meanSe: sd / Math.sqrt(n), fill, fillSe: Math.sqrt((fill * (1 - fill)) / n) };
}
