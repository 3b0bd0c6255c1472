import { describe, expect, it } from 'vitest';
import { GRID_POINTS, valueGrid } from '../../src/backtest/world/value-grid.js';

/** Mean and variance of a uniform draw among the given values. */
function moments(values: ArrayLike<number>): { mean: number; variance: number } {
  let s = 0;
  for (let i = 0; i < values.length; i++) s += values[i]!;
  const mean = s / values.length;
  let v = 0;
  for (let i = 0; i < values.length; i++) v += (values[i]! - mean) ** 2;
  return { mean, variance: v / values.length };
}

/** The simulator's law: any whole cent of [min, max], uniformly. */
function anyCent(min: number, max: number): { mean: number; variance: number } {
  const n = max - min + 1;
  return { mean: (min + max) / 2, variance: (n * n - 1) / 12 };
}

describe('valueGrid', () => {
  it('is every cent of a narrow band', () => {
    expect([...valueGrid(5, 9)]).toEqual([5, 6, 7, 8, 9]);
    expect([...valueGrid(300, 300)]).toEqual([300]);
    expect(valueGrid(100, 100 + GRID_POINTS - 1)).toHaveLength(GRID_POINTS);
  });

  it.each([
    [5, 300],
    [1500, 9000],
    [20_000, 250_000],
    [800, 2400],
    [1, 1_000_000],
    [100, 100 + GRID_POINTS], // one cent more than the grid holds: the worst case
    [0, 4 * GRID_POINTS], // ties between two cents in every slice
    [0, 8 * GRID_POINTS],
  ])('keeps the mean and the variance of any cent in [%i, %i]', (min, max) => {
    const grid = valueGrid(min, max);
    expect(grid).toHaveLength(GRID_POINTS);
    for (let k = 1; k < grid.length; k++) expect(grid[k]!).toBeGreaterThanOrEqual(grid[k - 1]!);
    expect(grid[0]!).toBeGreaterThanOrEqual(min);
    expect(grid[grid.length - 1]!).toBeLessThanOrEqual(max);
    for (const v of grid) expect(Number.isInteger(v)).toBe(true);
    const got = moments(grid);
    const want = anyCent(min, max);
    expect(got.mean).toBeCloseTo(want.mean, 9); // symmetric
    const rel = Math.abs(got.variance / want.variance - 1);
    const cents = max - min + 1;
    expect(rel).toBeLessThanOrEqual(1 / GRID_POINTS + 1e-12);
    if (cents > 300) expect(rel).toBeLessThan(0.004);
    if (cents > 10_000) expect(rel).toBeLessThan(3e-4);
  });

  it('stays within those bounds for every range up to $300', () => {
    let worst = 0;
    for (let cents = GRID_POINTS + 1; cents <= 30_000; cents++) {
      const rel = Math.abs(moments(valueGrid(0, cents - 1)).variance / anyCent(0, cents - 1).variance - 1);
      worst = Math.max(worst, rel);
      if (cents > 300) expect(rel).toBeLessThan(0.004);
      if (cents > 10_000) expect(rel).toBeLessThan(3e-4);
    }
    expect(worst).toBeLessThanOrEqual(1 / GRID_POINTS + 1e-12);
  });

  it('evenly spaced end-to-end points would have added 2/(points − 1) of variance (why slice means)', () => {
    const points = 64;
    const min = 0;
    const max = 1_000_000;
    const even = Float64Array.from(
      { length: points },
      (_, k) => min + Math.round((k * (max - min)) / (points - 1)),
    );
    const want = anyCent(min, max).variance;
    expect(moments(even).variance / want - 1).toBeCloseTo(2 / (points - 1), 3);
    expect(Math.abs(moments(valueGrid(min, max, points)).variance / want - 1)).toBeLessThan(2 / points ** 2);
  });
});
