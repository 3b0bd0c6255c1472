import { describe, expect, it } from 'vitest';
import { pullDistribution } from '../../src/strategy/distribution.js';
import { orderPromise, partMoments } from '../../src/strategy/model-promise.js';
import { realizedStats, scorePool } from '../../src/strategy/score.js';
import { shortDigest, strategyDigest } from '../../src/strategy/strategy-digest.js';
import { band, card, chaseOnTop, consolationMidpoint, pool } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { flatLife, linearFill } from './helpers.js';

const handStrategy = strategy({
  sell: { threshold_usd: 50, list: { ...flatLife, markup: 1.5, fill: linearFill } },
});

/** Sealed (0.2, worth 10 → 5 at fraction 0.5), low 2 and 4 (0.5), a 100 card listed (0.3). */
const threeWays = pool({
  price: 20,
  bands: [band('sealed', 0.2, 10, 10, 1, true), band('low', 0.5, 1, 5, 2), band('high', 0.3, 60, 200, 1)],
  cards: [card('s', 'sealed', 10), card('c2', 'low', 2), card('c4', 'low', 4), card('h', 'high', 100)],
});

describe('partMoments: where a pull goes, by hand', () => {
  it('chase on top: the chase is listed, everything else sold back', () => {
    // Chase 500 listed: 0.4·750 + 0.6·400 = 540; E[x²] = 0.4·750² + 0.6·400² = 321000.
    // Sold back: 0.99·(0.8·(0.5·180 + 0.5·360) + 0.2·(1800 + 2700 + 3600)/3) cents.
    const m = partMoments(pullDistribution(chaseOnTop), handStrategy);
    expect(m.listing.mean).toBeCloseTo(0.01 * 54_000, 6);
    expect(m.listing.m2).toBeCloseTo(0.01 * (0.4 * 75_000 ** 2 + 0.6 * 40_000 ** 2), 3);
    expect(m.sell_back.mean).toBeCloseTo(0.99 * (0.8 * 270 + 0.2 * 2700), 6);
    expect(m.held).toEqual({ mean: 0, m2: 0 });
  });

  it("sealed packs are held at the strategy's fraction of their value", () => {
    const m = partMoments(
      pullDistribution(consolationMidpoint),
      strategy({ sell: { sealed_value_fraction: 0.5 } }),
    );
    // consolationMidpoint: sealed 2.00 (0.5) worth 1.00; card 8 sold back at 7.20.
    expect(m.held.mean).toBeCloseTo(0.5 * 100, 9);
    expect(m.held.m2).toBeCloseTo(0.5 * 100 ** 2, 6);
    expect(m.sell_back.mean).toBeCloseTo(0.5 * 720, 9);
  });

  it.each([
    ['chase on top', chaseOnTop],
    ['three ways', threeWays],
    ['sealed and a card', consolationMidpoint],
  ])("%s: the parts add up to the scorer's realized EV and second moment", (_n, p) => {
    const d = pullDistribution(p);
    const m = partMoments(d, handStrategy);
    const stats = realizedStats(d, handStrategy, Math.round(p.price * 100));
    expect(m.sell_back.mean + m.listing.mean + m.held.mean).toBeCloseTo(stats.mean, 6);
    expect(m.sell_back.m2 + m.listing.m2 + m.held.m2).toBeCloseTo(stats.ex2, 2);
  });
});

describe('orderPromise', () => {
  it('keeps the row it was opened on, in cents, with each part per pack', () => {
    const row = scorePool(threeWays, handStrategy);
    const p = orderPromise(row, pullDistribution(threeWays), handStrategy, 4);
    expect(p).toMatchObject({
      packs: 4,
      priceCents: 2000,
      evCents: Math.round(row.ev * 100),
      realizedEvCents: Math.round(row.realized_ev * 100),
      sdCents: Math.round(row.realized_stdev * 100),
      pLoss: row.p_loss,
    });
    // Held: 0.2 × 500; sold back: 0.5 × (180 + 360) / 2; listed: 0.3 × (0.4·150 + 0.6·80) USD.
    expect(p.parts.held.meanCents).toBe(100);
    expect(p.parts.sell_back.meanCents).toBe(135);
    expect(p.parts.listing.meanCents).toBe(3240);
    // sd of the held part: 500 with p 0.2, else 0 → 500·√(0.2·0.8) = 200.
    expect(p.parts.held.sdCents).toBe(200);
  });
});

describe('strategyDigest', () => {
  it('names the validated strategy: same settings, same digest; any change, another', () => {
    const a = strategyDigest(strategy({ name: 'x' }));
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(strategyDigest(strategy({ name: 'x' }))).toBe(a);
    // A default written out is the same strategy.
    expect(strategyDigest(strategy({ name: 'x', sell: { threshold_usd: 50 } }))).toBe(a);
    expect(strategyDigest(strategy({ name: 'x', sell: { threshold_usd: 51 } }))).not.toBe(a);
    expect(shortDigest(a)).toBe(a.slice(0, 12));
  });
});
