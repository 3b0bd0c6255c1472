import { describe, expect, it } from 'vitest';
import { balanceBucketCents } from '../../src/backtest/path/balance-bucket.js';
import { Rng } from '../../src/core/prng.js';

const BUCKET = Math.log(1.005);
const reference = (cents: number): number =>
  cents <= 100
    ? Math.max(0, Math.floor(cents))
    : Math.floor(Math.exp(Math.floor(Math.log(cents) / BUCKET) * BUCKET));

describe('balanceBucketCents', () => {
  it('equals the 0.5% log bucket formula along random walks and at bucket edges (its cache never answers wrong)', () => {
    const rng = new Rng(9);
    const bad: number[] = [];
    let cents = 1_000_000;
    for (let i = 0; i < 200_000; i++) {
      cents = Math.max(0, cents + Math.round((rng.next() - 0.52) * 5000));
      if (cents < 500) cents = 1_000_000;
      if (balanceBucketCents(cents) !== reference(cents)) bad.push(cents);
      // Just around the start of this bucket and of the next one.
      const k = Math.floor(Math.log(cents) / BUCKET);
      for (const edge of [Math.exp(k * BUCKET), Math.exp((k + 1) * BUCKET)])
        for (const c of [Math.floor(edge) - 1, Math.floor(edge), Math.ceil(edge), Math.ceil(edge) + 1])
          if (balanceBucketCents(c) !== reference(c)) bad.push(c);
    }
    for (const c of [0, 1, 99, 100, 101, 250.5, 1e12]) expect(balanceBucketCents(c)).toBe(reference(c));
    expect(bad.slice(0, 5)).toEqual([]);
  });
});
