import { describe, expect, it } from 'vitest';
import { LATE_RATE, VALUE_LOCK_MS } from '../../src/api/rules.js';
import { DAY_MS, HOUR_MS } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { decideListing, type ListingView } from '../../src/strategy/decide-listing.js';
import { listingCurve } from '../../src/strategy/listing-curve.js';
import { hazardPerDay, listingLife } from '../../src/strategy/listing-life.js';
import { fillProbability, fillRatePerDay } from '../../src/strategy/market-laws.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { strategy } from '../strategy-builder.js';
import { flatLife } from './helpers.js';

const hazard = (fills: number, sensitivity: number) => ({
  model: 'hazard' as const,
  fills_per_day_at_value: fills,
  price_sensitivity: sensitivity,
});

/** One price for 3 days, no drift: sold at 1.3 × 0.95 or sold back at 0.8 after 3 days. */
const flat = strategy({
  sell: { list: { ...flatLife, markup: 1.3, max_days: 3, seller_fee_rate: 0.05, fill: hazard(1, 4) } },
});

describe('listingCurve: the model of a listing still running', () => {
  it("has the life's mean and, without drift, the Bernoulli variance of sale against fallback", () => {
    const life = listingLife(flat);
    const c = listingCurve(flat);
    const sale = 1.3 * 0.95;
    expect(c.mean).toBeCloseTo(life.expectedYield, 9);
    expect(c.variance).toBeCloseTo(life.fill * (1 - life.fill) * (sale - LATE_RATE) ** 2, 9);
  });

  // Fills on the ticks at 0.5 h, 1.5 h, …, each with the same probability q, until 72 h.
  it.each([0, 10, 36, 71])('at %d h: alive and mark follow the tick-by-tick survival', (hours) => {
    const age = hours * HOUR_MS;
    const q = fillProbability(fillRatePerDay(1.3, 1, 1, 4), HOUR_MS / DAY_MS);
    const ticks = Math.max(0, Math.floor(age / HOUR_MS - 0.5) + 1);
    const deadlineTicks = 72; // ticks before the 3-day deadline (0.5 h … 71.5 h)
    const alive = (1 - q) ** ticks;
    // Given alive after `ticks`, it sells on one of the remaining ticks, else falls back.
    const sellLater = 1 - (1 - q) ** (deadlineTicks - ticks);
    const mark = sellLater * 1.3 * 0.95 + (1 - sellLater) * LATE_RATE;
    const m = listingCurve(flat).markAt(age);
    expect(m.alive).toBeCloseTo(alive, 9);
    expect(m.mark).toBeCloseTo(mark, 9);
  });

  it('starts at the mean with no variance, ends at the fallback with the whole variance', () => {
    const c = listingCurve(flat);
    expect(c.markAt(0)).toEqual({
      alive: 1,
      mark: expect.closeTo(c.mean, 12),
      variance: expect.closeTo(0, 12),
    });
    const after = c.markAt(4 * DAY_MS);
    expect(after.alive).toBe(0);
    expect(after.mark).toBeCloseTo(LATE_RATE, 9);
    expect(after.variance).toBeCloseTo(c.variance, 9);
    // The mark only falls with age (a hazard at one price), the variance only grows.
    let last = c.markAt(0);
    for (let h = 1; h < 72; h++) {
      const m = c.markAt(h * HOUR_MS);
      expect(m.mark).toBeLessThanOrEqual(last.mark + 1e-12);
      expect(m.variance).toBeGreaterThanOrEqual(last.variance - 1e-12);
      last = m;
    }
  });

  it('is the mean outcome of the listings still alive at that age (simulated with drift and repricing)', () => {
    // Balanced-like: stepping markup, value drift, the lock extending listings above the basis.
    const s = strategy({
      sell: {
        list: {
          markup: 1.3,
          markup_step: 0.1,
          min_markup: 1.1,
          max_days: 3,
          seller_fee_rate: 0.05,
          fill: hazard(1, 4),
          value_drift: { daily_volatility: 0.03 },
        },
      },
    });
    const c = listingCurve(s);
    const rng = new Rng(7);
    const n = 6000;
    const runs = Array.from({ length: n }, () => simulate(rng, s));
    const meanSe = (xs: number[]) => {
      const m = xs.reduce((a, b) => a + b, 0) / xs.length;
      const sd = Math.sqrt(xs.reduce((a, b) => a + (b - m) ** 2, 0) / (xs.length - 1));
      return { m, se: sd / Math.sqrt(xs.length) };
    };
    const all = meanSe(runs.map((r) => r.outcome));
    expect(Math.abs(all.m - c.mean)).toBeLessThan(4 * all.se + 0.005);
    for (const hours of [12, 36, 60, 80]) {
      const alive = runs.filter((r) => r.endedAt > hours * HOUR_MS);
      const m = c.markAt(hours * HOUR_MS);
      const share = alive.length / n;
      expect(Math.abs(share - m.alive), `alive at ${hours} h`).toBeLessThan(
        4 * Math.sqrt((m.alive * (1 - m.alive)) / n) + 0.005,
      );
      const given = meanSe(alive.map((r) => r.outcome));
      expect(Math.abs(given.m - m.mark), `mark at ${hours} h`).toBeLessThan(4 * given.se + 0.005);
    }
  });

  it('an unsold listing two days old is worth well below a fresh one', () => {
    const c = listingCurve(flat);
    expect(c.markAt(48 * HOUR_MS).mark).toBeLessThan(c.mean - 0.1);
  });
});

/**
 * A listing of a card worth 1000.00 replayed as listing-life.test.ts replays it: the value moves
 * log-normally each hour, a buyer comes at the tick with the fill model's probability, and
 * decideListing is asked after every tick; returns what it paid (× value) and when it ended.
 */
function simulate(rng: Rng, s: Strategy): { outcome: number; endedAt: number } {
  const list = s.sell.list;
  const basis = 100_000;
  const dt = HOUR_MS / DAY_MS;
  const vol = list.value_drift.daily_volatility;
  let x = 0;
  const view: ListingView = {
    priceCents: Math.round(basis * list.markup),
    listedAt: 0,
    pricedAt: 0,
    marketValueCents: basis,
    basisValueCents: basis,
    lockedValueUntil: VALUE_LOCK_MS,
  };
  for (let t = HOUR_MS / 2; ; t += HOUR_MS) {
    x += -(vol * vol * dt) / 2 + vol * Math.sqrt(dt) * rng.normal();
    view.marketValueCents = Math.round(basis * Math.exp(x));
    const rate = hazardPerDay(list.fill, view.priceCents / view.marketValueCents, list.max_days);
    if (rng.next() < 1 - Math.exp(-rate * dt))
      return { outcome: (view.priceCents * (1 - list.seller_fee_rate)) / basis, endedAt: t };
    for (const at of [t, ...[1, 2, 3, 7].map((d) => d * DAY_MS).filter((d) => d > t && d < t + HOUR_MS)]) {
      let d = decideListing(view, s, at);
      if (d.action === 'reprice') {
        view.priceCents = d.priceCents;
        view.pricedAt = at;
        d = decideListing(view, s, at);
      }
      if (d.action === 'delist_and_sell_back')
        return {
          outcome: (LATE_RATE * (at <= VALUE_LOCK_MS ? basis : view.marketValueCents)) / basis,
          endedAt: at,
        };
    }
  }
}
