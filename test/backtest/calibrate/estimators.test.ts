import { describe, expect, it } from 'vitest';
import { estimateFills, type ListingHistory, segmentsOf } from '../../../src/backtest/calibrate/fills.js';
import { estimateOpenings } from '../../../src/backtest/calibrate/openings.js';
import { type BandStep, estimateRestock } from '../../../src/backtest/calibrate/restock.js';
import { estimateDrift, type IndexMove } from '../../../src/backtest/calibrate/values.js';
import { Rng } from '../../../src/core/prng.js';

const H = 3_600_000;
const row = (h: number, user: string, pack = 'starter') => ({
  user_id: user,
  created_at: new Date(h * H).toISOString(),
  amount: 10,
  source: 'pokemon',
  pack_type: pack,
});

describe('estimateOpenings', () => {
  it('counts others only, scales for the unseen free and internal openings, and gives shares', () => {
    const rows = [row(1, 'a'), row(2, 'b', 'vault'), row(3, 'me'), row(4, 'a'), row(11, 'a')];
    const e = estimateOpenings({
      rows,
      sinceMs: 0,
      untilMs: 10 * H,
      ownUserIds: new Set(['me']),
      freeFraction: 0.2,
      internalFraction: 0.5,
    });
    expect([e.rows, e.own, e.hours]).toEqual([3, 1, 10]);
    expect(e.perHour).toBeCloseTo(3 / 10 / (0.8 * 0.5), 12);
    expect(e.stderr).toBeCloseTo(Math.sqrt(3) / 10 / 0.4, 12);
    expect(e.shares).toEqual([
      { pack: 'pokemon/starter', rows: 2, share: 2 / 3 },
      { pack: 'pokemon/vault', rows: 1, share: 1 / 3 },
    ]);
  });
});

describe('estimateDrift', () => {
  it('recovers the volatility and trend of simulated log-normal moves', () => {
    const rng = new Rng(5);
    const sigma = 0.05;
    const dt = 1 / 24;
    const moves: IndexMove[] = [];
    for (let k = 0; k < 4000; k++)
      moves.push({
        category: k % 2 ? 'a' : 'b',
        logMove: (0.01 - sigma ** 2 / 2) * dt + sigma * Math.sqrt(dt) * rng.normal(),
        days: dt,
        cards: 10,
      });
    const e = estimateDrift(moves);
    expect(Math.abs(e.volatility / sigma - 1)).toBeLessThan(4 * (e.volatilityStderr / sigma));
    expect(e.volatilityStderr / sigma).toBeCloseTo(1 / Math.sqrt(2 * 3999), 3);
    expect(e.perCategory.map((c) => c.moves)).toEqual([2000, 2000]);
  });
});

describe('estimateRestock', () => {
  it('recovers the refill share and the trickle from exact arrivals', () => {
    const phi = 1 - Math.exp(-0.2);
    const steps: BandStep[] = [];
    for (let g = 1; g <= 30; g++)
      for (const share of [0, 0.3, 0.7])
        steps.push({
          pack: 'p',
          band: `b${g}`,
          hours: 1,
          before: 0,
          taken: 0,
          size: g,
          gap: g,
          trickle: share,
          arrived: phi * g + 2 * share,
        });
    const e = estimateRestock(steps);
    expect(e.fractionPerHour).toBeCloseTo(0.2, 9);
    expect(e.cardsPerHourPerPack).toBeCloseTo(2, 9);
    expect(e.samples).toBe(90);
  });

  it('gives nothing (NaN) without a band that had a gap', () => {
    expect(estimateRestock([]).fractionPerHour).toBeNaN();
  });
});

describe('estimateFills', () => {
  it('recovers the hazard by maximum likelihood, sales and censored delistings together', () => {
    const rng = new Rng(9);
    const base = 1.5;
    const sensitivity = 3;
    const listings: ListingHistory[] = [];
    for (let i = 0; i < 3000; i++) {
      const ratio = 1 + 0.8 * rng.next();
      const rate = base * Math.exp(-sensitivity * (ratio - 1));
      const t = rng.exponential(rate);
      const sold = t < 3;
      listings.push({ segments: [{ ratio, days: Math.min(t, 3) }], sold });
    }
    const e = estimateFills(listings)!;
    expect(Math.abs(e.fillsPerDayAtValue - base)).toBeLessThan(4 * e.fillsStderr);
    expect(Math.abs(e.sensitivity - sensitivity)).toBeLessThan(4 * e.sensitivityStderr);
  });

  it('needs a few listings and sales', () => {
    expect(estimateFills([{ segments: [{ ratio: 1, days: 1 }], sold: true }])).toBeNull();
  });

  it('turns a listing history into price segments', () => {
    const day = 86_400_000;
    expect(
      segmentsOf(
        1000,
        [
          { priceCents: 1300, at: 0 },
          { priceCents: 1200, at: day },
        ],
        3 * day,
      ),
    ).toEqual([
      { ratio: 1.3, days: 1 },
      { ratio: 1.2, days: 2 },
    ]);
  });
});
