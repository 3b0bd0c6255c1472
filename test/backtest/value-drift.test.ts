/**
 * The value drift drawn per category, each from its own stream and only once read: its law is
 * the world's (a log-normal step per tick, `valueStep`/`indexFactor`), checked on the log index
 * after a month over many paths (mean and variance within four standard errors of the law's), and
 * a category's path is the same whatever else is read, in whatever order and however far ahead.
 */
import { describe, expect, it } from 'vitest';
import { CATEGORY_SLOT, ValueDrift } from '../../src/backtest/world/value-drift.js';
import { DynamicsSpec } from '../../src/market/world-schema.js';
import { valueStep } from '../../src/strategy/market-laws.js';

const HOUR = 3_600_000;
const dyn = DynamicsSpec.parse({ value_daily_volatility: 0.03, value_daily_trend: 0.002 });
const pokemon = CATEGORY_SLOT.get('pokemon')!;
const watches = CATEGORY_SLOT.get('watches')!;

function meanVar(xs: number[]): { mean: number; variance: number } {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1);
  return { mean, variance };
}

describe('value drift by category', () => {
  it('has the log-normal law of the world after a month, each category independent', () => {
    const n = 4000;
    const ticks = 720;
    const step = valueStep(dyn.value_daily_trend, dyn.value_daily_volatility, 1 / 24);
    const a: number[] = [];
    const b: number[] = [];
    for (let path = 0; path < n; path++) {
      const d = new ValueDrift(dyn, HOUR, 7, path, [pokemon]);
      a.push(Math.log(d.indexAt(ticks, pokemon)));
      b.push(Math.log(d.indexAt(ticks, watches)));
    }
    const mean = step.drift * ticks;
    const variance = step.scale ** 2 * ticks;
    for (const xs of [a, b]) {
      const m = meanVar(xs);
      expect(Math.abs(m.mean - mean)).toBeLessThan(4 * Math.sqrt(variance / n));
      expect(Math.abs(m.variance - variance)).toBeLessThan(4 * variance * Math.sqrt(2 / (n - 1)));
    }
    const ma = meanVar(a);
    const mb = meanVar(b);
    let cov = 0;
    for (let i = 0; i < n; i++) cov += (a[i]! - ma.mean) * (b[i]! - mb.mean);
    const r = cov / (n - 1) / Math.sqrt(ma.variance * mb.variance);
    expect(Math.abs(r)).toBeLessThan(4 / Math.sqrt(n));
  });

  it('gives a category the same path whatever is read, in whatever order, however far ahead', () => {
    const stepwise = new ValueDrift(dyn, HOUR, 3, 11, [pokemon]);
    const seen: number[] = [];
    for (let k = 1; k <= 100; k++) {
      stepwise.moveTo(k);
      seen.push(stepwise.indexNow(pokemon));
    }
    const ahead = new ValueDrift(dyn, HOUR, 3, 11);
    ahead.indexAt(77, watches);
    ahead.indexAt(99, pokemon);
    for (let k = 1; k <= 100; k++) expect(ahead.indexAt(k, pokemon)).toBe(seen[k - 1]);
    // A category read late starts at 1 and follows `moveTo` from then on.
    expect(stepwise.indexNow(watches)).toBe(1);
    expect(stepwise.indexAt(100, watches)).toBe(ahead.indexAt(100, watches));
    stepwise.moveTo(101);
    expect(stepwise.indexNow(watches)).toBe(ahead.indexAt(101, watches));
    // Another path, another draw.
    expect(new ValueDrift(dyn, HOUR, 3, 12).indexAt(100, pokemon)).not.toBe(seen[99]);
  });
});
