import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/prng.js';

describe('Rng.poisson', () => {
  // Mean and variance of n draws: both equal the Poisson mean; bounds at ~5 standard errors.
  it.each([0.05, 1.2, 30, 117, 1300])('has mean and variance %s', (mean) => {
    const rng = new Rng(7);
    const n = 40_000;
    let s = 0;
    let s2 = 0;
    for (let i = 0; i < n; i++) {
      const k = rng.poisson(mean);
      expect(Number.isInteger(k) && k >= 0).toBe(true);
      s += k;
      s2 += k * k;
    }
    const m = s / n;
    const v = s2 / n - m * m;
    expect(Math.abs(m - mean)).toBeLessThan(5 * Math.sqrt(mean / n));
    // Var of the sample variance ≈ (μ4 − σ⁴)/n with μ4 = λ(1 + 3λ) for a Poisson.
    expect(Math.abs(v - mean)).toBeLessThan(5 * Math.sqrt((mean * (1 + 3 * mean) - mean * mean) / n));
  });

  it('matches the Poisson probabilities of small counts', () => {
    const rng = new Rng(11);
    const n = 100_000;
    const mean = 2.5;
    const seen = new Float64Array(8);
    for (let i = 0; i < n; i++) {
      const k = rng.poisson(mean);
      if (k < 8) seen[k] = seen[k]! + 1;
    }
    let p = Math.exp(-mean);
    for (let k = 0; k < 8; k++) {
      expect(Math.abs(seen[k]! / n - p)).toBeLessThan(5 * Math.sqrt((p * (1 - p)) / n));
      p *= mean / (k + 1);
    }
  });

  it('is zero for a zero or invalid mean', () => {
    const rng = new Rng(1);
    expect(rng.poisson(0)).toBe(0);
    expect(rng.poisson(-3)).toBe(0);
    expect(rng.poisson(Number.NaN)).toBe(0);
  });
});

describe('Rng.normals', () => {
  it('fills a range with standard normals (moments, tails, pairs uncorrelated), odd lengths too', () => {
    const rng = new Rng(11);
    const n = 200_001;
    const out = new Float64Array(n + 2).fill(99);
    rng.normals(out, 1, n + 1);
    expect(out[0]).toBe(99);
    expect(out[n + 1]).toBe(99);
    let m1 = 0;
    let m2 = 0;
    let m4 = 0;
    let tail = 0;
    let cross = 0;
    for (let i = 1; i <= n; i++) {
      const x = out[i]!;
      m1 += x;
      m2 += x * x;
      m4 += x ** 4;
      if (Math.abs(x) > 1.96) tail++;
      if (i % 2 === 1 && i + 1 <= n) cross += x * out[i + 1]!;
    }
    expect(Math.abs(m1 / n)).toBeLessThan(0.01);
    expect(Math.abs(m2 / n - 1)).toBeLessThan(0.015);
    expect(Math.abs(m4 / n - 3)).toBeLessThan(0.1);
    expect(Math.abs(tail / n - 0.05)).toBeLessThan(0.003);
    // The two values of a Box–Muller pair are independent: their product has mean 0, variance 1.
    expect(Math.abs(cross / (n / 2))).toBeLessThan(0.015);
  });
});

describe('Rng.clone and Rng.revive', () => {
  it('a clone draws the same numbers as its source, independently', () => {
    const a = new Rng(7);
    a.poisson(3.5);
    const b = a.clone();
    const fromA = Array.from({ length: 20 }, () => a.nextUint32());
    const fromB = Array.from({ length: 20 }, () => b.nextUint32());
    expect(fromB).toEqual(fromA);
    expect(b.poisson(3.5)).toBe(a.poisson(3.5));
  });

  it('an Rng saved by an older build (words in fields a-d) goes on with the same stream', () => {
    const live = new Rng(11);
    for (let i = 0; i < 5; i++) live.nextUint32();
    const words = (live as unknown as { s: Int32Array }).s;
    // The older layout, as node:v8 deserialize gives it back with its prototype set again.
    const old = Object.assign(Object.create(Rng.prototype) as object, {
      a: words[0],
      cdfMean: Number.NaN,
      cdf: new Float64Array(0),
      b: words[1],
      c: words[2],
      d: words[3],
    }) as unknown as Rng;
    Rng.revive(old);
    expect(Array.from({ length: 20 }, () => old.nextUint32())).toEqual(
      Array.from({ length: 20 }, () => live.nextUint32()),
    );
    expect(old.poisson(2)).toBe(live.poisson(2));
    expect(old.poisson(4)).toBe(live.poisson(4));
    expect(old.poisson(2)).toBe(live.poisson(2));
  });
});
