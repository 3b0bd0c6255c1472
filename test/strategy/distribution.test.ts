import { describe, expect, it } from 'vitest';
import type { PoolCard } from '../../src/api/schemas.js';
import { Rng } from '../../src/core/prng.js';
import {
  EmptyPoolError,
  KIND_CHASE,
  KIND_SEALED,
  pullDistribution,
  sampleAtom,
} from '../../src/strategy/distribution.js';
import {
  allZeroOdds,
  band,
  card,
  chaseOnTop,
  chaseWithin,
  consolationListed,
  consolationMidpoint,
  emptyBands,
  pool,
  singleBand,
  truncated,
  withZeroOdds,
} from '../fixtures/pools.js';

describe('pullDistribution: EV of hand-computed pools (cents)', () => {
  it.each([
    ['chase on top of bands summing to 1', chaseOnTop, 1331.6, false],
    ['chase with bands summing to 1 - p', chaseWithin, 1331.6, false],
    ['zero-odds band ignored', withZeroOdds, 1331.6, false],
    ['consolation band without items: midpoint', consolationMidpoint, 500, false],
    ['consolation band with listed items: their mean', consolationListed, 525, false],
    ['single band, odds renormalised', singleBand, 250, false],
    ['truncated band: unseen cards at the midpoint', truncated, 1500, true],
  ])('%s', (_name, p, evCents, estimated) => {
    const d = pullDistribution(p);
    expect(d.evCents).toBeCloseTo(evCents, 9);
    expect(d.estimated).toBe(estimated);
    let total = 0;
    for (const x of d.prob) total += x;
    expect(total).toBeCloseTo(1, 12);
    expect(d.cdf[d.size - 1]).toBe(1);
  });

  it('brackets a truncated band between min and max of its unseen cards', () => {
    const d = pullDistribution(truncated);
    expect(d.evLoCents).toBeCloseTo(1000, 9);
    expect(d.evHiCents).toBeCloseTo(2000, 9);
    expect(d.notes[0]).toMatch(/2 of 4 cards listed/);
  });

  it('marks atoms by kind, band and card', () => {
    const d = pullDistribution(chaseOnTop);
    expect(d.kind[0]).toBe(KIND_CHASE);
    expect(d.prob[0]).toBeCloseTo(0.01, 15);
    expect(d.band[0]).toBe(-1);
    const c = pullDistribution(consolationListed);
    const sealed = [...c.kind].filter((k) => k === KIND_SEALED).length;
    expect(sealed).toBe(2);
  });

  it('computes the variance exactly (single band 1..4: var = 1.25 USD²)', () => {
    expect(pullDistribution(singleBand).varianceCents2).toBeCloseTo(12500, 6);
  });

  it.each([
    ['no bands', emptyBands, /no bands/],
    ['all bands at zero odds', allZeroOdds, /no band has odds > 0/],
  ])('rejects an empty pool with a clear error: %s', (_n, p, msg) => {
    expect(() => pullDistribution(p)).toThrow(EmptyPoolError);
    expect(() => pullDistribution(p)).toThrow(msg);
    expect(() => pullDistribution(p)).toThrow(/pokemon\/\w|pokemon\/all-zero|pokemon\/empty/);
  });

  it('ignores cards whose bucket names no band', () => {
    const p = pool({
      bands: [band('a', 1, 1, 2, 1)],
      cards: [card('x', 'a', 2), card('ghost', 'nope', 999)],
    });
    expect(pullDistribution(p).evCents).toBeCloseTo(200, 9);
  });
});

describe('properties', () => {
  const randomPool = (rng: Rng, scale: (v: number, i: number) => number) => {
    const cards: PoolCard[] = [];
    for (let i = 0; i < 40; i++) cards.push(card(`c${i}`, i % 3 === 0 ? 'a' : i % 3 === 1 ? 'b' : 'c', 0));
    const values = cards.map(() => Math.floor(rng.next() * 10000) / 100);
    return {
      values,
      make: (vals: number[]) =>
        pool({
          chase: {
            card: { id: 'ch', name: 'ch', market_value: scale(vals[0]! * 10, -1) },
            probability: 0.02,
            odds_label: '',
            label: '',
            ends_at: null,
          },
          bands: [band('a', 0.5, 0, 100, 14), band('b', 0.3, 0, 100, 13), band('c', 0.2, 0, 100, 13)],
          cards: cards.map((c, i) => ({ ...c, market_value: scale(vals[i]!, i) })),
        }),
    };
  };

  it('EV is linear in card values: EV(v + w) = EV(v) + EV(w), EV(k·v) = k·EV(v)', () => {
    const rng = new Rng(7);
    for (let trial = 0; trial < 20; trial++) {
      const { values: v, make } = randomPool(rng, (x) => x);
      const w = v.map(() => Math.floor(rng.next() * 5000) / 100);
      const sum = v.map((x, i) => Math.round((x + w[i]!) * 100) / 100);
      const ev = (vals: number[]) => pullDistribution(make(vals)).evCents;
      expect(ev(sum)).toBeCloseTo(ev(v) + ev(w), 6);
      expect(ev(v.map((x) => x * 3))).toBeCloseTo(3 * ev(v), 6);
    }
  });

  it('sampleAtom follows the probabilities', () => {
    const d = pullDistribution(chaseOnTop);
    const rng = new Rng(1);
    const counts = new Array(d.size).fill(0);
    const n = 200_000;
    for (let i = 0; i < n; i++) counts[sampleAtom(d, rng.next())]++;
    for (let i = 0; i < d.size; i++) expect(counts[i] / n).toBeCloseTo(d.prob[i]!, 2);
    expect(sampleAtom(d, 0)).toBe(0);
    expect(sampleAtom(d, 0.999999999)).toBe(d.size - 1);
  });
});
