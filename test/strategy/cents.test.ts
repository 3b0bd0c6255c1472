import { describe, expect, it } from 'vitest';
import { applyRate, roundHalfAway, toCents } from '../../src/core/money.js';
import { Rng } from '../../src/core/prng.js';
import { fastCents, fastRate, fastRound, fixed, fixed3 } from '../../src/strategy/cents.js';

describe('fast rounding agrees with src/core/money.ts', () => {
  it.each([0.5, -0.5, 1.5, -2.5, 100.49999999999999, 2.675 * 100, 1.005 * 100, 0, -0.49999])(
    'fastRound(%d)',
    (x) => {
      expect(fastRound(x)).toBe(roundHalfAway(x));
    },
  );

  it('on 200,000 random amounts and rates (many exact half cents)', () => {
    const rng = new Rng(3);
    const rates = [0.9, 0.8, 1.3, 1.5, 1.05, 0.95];
    const mismatches: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      const usd = Math.floor(rng.next() * 1e6) / 100 + (i % 7 === 0 ? 0.005 : 0);
      if (fastCents(usd) !== toCents(usd)) mismatches.push(`toCents(${usd})`);
      const c = Math.floor(rng.next() * 1e7) * (i % 5 === 0 ? -1 : 1);
      const rate = rates[i % rates.length]!;
      if (fastRate(c, rate) !== applyRate(c, rate)) mismatches.push(`applyRate(${c}, ${rate})`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});

describe('fixed3 agrees with toFixed(3)', () => {
  it.each([
    0,
    0.0005,
    0.0015,
    1.0005,
    2.675,
    1.2345,
    0.9995,
    999.9995,
    -0.4,
    -0.0004,
    1e6,
    5e9,
    Number.NaN,
    Infinity,
  ])('fixed3(%d)', (x) => {
    expect(fixed3(x)).toBe(x.toFixed(3));
  });

  it('on 300,000 ratios, many of them exact or near thousandth halves', () => {
    const rng = new Rng(5);
    const mismatches: string[] = [];
    for (let i = 0; i < 300_000; i++) {
      const mean = Math.floor(rng.next() * 1e7) / (i % 3 === 0 ? 1 : 7);
      const price = 1 + Math.floor(rng.next() * 1e5);
      const xs = [mean / price, (Math.floor(rng.next() * 1e6) + 0.5) / 1000, rng.next() * 3];
      for (const x of xs) if (fixed3(x) !== x.toFixed(3)) mismatches.push(`${x}`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});

describe('fixed agrees with toFixed for 0 to 4 digits', () => {
  it.each([0, 0.005, 0.015, 1.005, 1.15, 2.675, 0.995, 1.2, 99.995, 0.5, 1.5, 2.5, 1e8, -1.15, Number.NaN])(
    'fixed(%d, 0..4)',
    (x) => {
      for (let d = 0; d <= 4; d++) expect(fixed(x, d)).toBe(x.toFixed(d));
    },
  );

  it('on 200,000 markups and ratios, many of them exact or near halves', () => {
    const rng = new Rng(9);
    const mismatches: string[] = [];
    for (let i = 0; i < 200_000; i++) {
      const xs = [
        1 + Math.floor(rng.next() * 100) * 0.05 - Math.floor(rng.next() * 10) * 0.01,
        rng.next() * 5,
      ];
      xs.push((Math.floor(rng.next() * 1e5) + 0.5) / 100);
      for (const x of xs)
        for (let d = 0; d <= 4; d++) if (fixed(x, d) !== x.toFixed(d)) mismatches.push(`${x}@${d}`);
    }
    expect(mismatches.slice(0, 5)).toEqual([]);
  });
});
