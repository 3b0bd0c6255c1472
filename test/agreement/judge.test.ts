/**
 * The agreement harness's tolerances (agreement/judge.ts, views.ts) and its flags (agreement/run.ts):
 * the family-wise threshold, a gap within z*·se or the 2% floor, what a view does not judge, and
 * exit 2 with a message for a bad flag.
 */
import { describe, expect, it } from 'vitest';
import { familyZ, judge, MIN_Z, meanVar, seDiff, twoSidedTail } from '../../agreement/judge.js';
import { main, parseOptions } from '../../agreement/run.js';
import { liveComparisons, OTHER_MARKET } from '../../agreement/views.js';

describe('the family-wise threshold', () => {
  it('is the normal quantile of 1% over the checks, never below 3', () => {
    expect(twoSidedTail(1.959964)).toBeCloseTo(0.05, 6);
    expect(twoSidedTail(3)).toBeCloseTo(0.0026998, 6);
    expect(familyZ(1)).toBe(MIN_Z); // 2.58 for 1%: the alarm's 3 instead
    expect(familyZ(100)).toBeCloseTo(3.8906, 3); // P(|Z| > z) = 1e-4
    expect(familyZ(582)).toBeCloseTo(4.297, 2);
    // Each check at alpha / m: the chance that any of m fails by luck stays at most 1%.
    for (const m of [10, 80, 600]) expect(m * twoSidedTail(familyZ(m))).toBeCloseTo(0.01, 4);
  });
});

describe('a comparison', () => {
  const c = { view: 'dynamic' as const, gap: 1, se: 0.2, floor: 0.5, unjudged: null };
  it('agrees within z* standard errors', () => {
    expect(judge(c, 5)).toMatchObject({ z: 5, pass: true });
    expect(judge(c, 4.9)).toMatchObject({ z: 5, pass: false });
  });
  it('agrees within the 2% floor where the standard error is smaller', () => {
    expect(judge({ ...c, se: 0.01 }, 4).pass).toBe(false);
    expect(judge({ ...c, se: 0.01, floor: 1 }, 4).pass).toBe(true);
    // No standard error at all (every run the same): only the floor.
    expect(judge({ ...c, se: 0, floor: 0 }, 4)).toMatchObject({ z: null, pass: false });
  });
  it('is shown, never failed, where the world makes no claim', () => {
    expect(judge({ ...c, gap: 100, unjudged: OTHER_MARKET }, 4)).toMatchObject({ z: 500, pass: true });
  });
});

describe('the bot live against the backtest', () => {
  const runs = (packs: number[], net: number[]) =>
    packs.map((p, i) => ({ packs: p, spendCents: p * 2500, netCents: net[i]! }));
  it('compares packs and net per run within the standard error of the difference', () => {
    const [packs, net] = liveComparisons(
      runs([40, 42, 38, 40], [1000, -500, 300, 200]),
      runs([41, 39, 40, 40, 40, 40], [100, 200, 0, 300, -100, 250]),
    );
    expect(packs!.gap).toBeCloseTo(40 - 40, 9);
    expect(packs!.se).toBeGreaterThan(0);
    expect(net!.gap).toBeCloseTo((250 - 125) / 100, 9);
    expect(judge(packs!, 4).pass).toBe(true);
  });
  it('flags a bot that opens half of what the backtest does', () => {
    const [packs] = liveComparisons(
      runs([20, 21, 19, 20], [0, 0, 0, 0]),
      runs([40, 41, 39, 40], [0, 0, 0, 0]),
    );
    expect(judge(packs!, 4.3).pass).toBe(false);
  });
  it("never lets one side's empty variance claim a tight bound", () => {
    const a = meanVar([5, 5, 5]);
    const b = meanVar([3, 7, 5, 5]);
    expect(a.v).toBe(0);
    expect(seDiff(a, b)).toBeGreaterThanOrEqual(Math.sqrt(b.v / b.n));
  });
});

describe('the flags', () => {
  it('reads the defaults and each flag', () => {
    const o = parseOptions([]);
    expect(o).toMatchObject({ strategies: 40, seed: 1, paths: 200, days: 10, live: 2, handPicked: true });
    expect(
      parseOptions(['--strategies', '3', '--seed', '9', '--live', '0', '--no-hand-picked']),
    ).toMatchObject({
      strategies: 3,
      seed: 9,
      live: 0,
      handPicked: false,
    });
  });

  it.each([
    [['--strategies', 'x'], '--strategies must be an integer'],
    [['--strategies', '0'], '--strategies must be at least 1'],
    [['--paths', '1'], '--paths must be at least 2'],
    [['--live', '5', '--strategies', '3'], '--live must be at most 3'],
    [['--bogus'], "Unknown option '--bogus'"],
    [['extra'], "unexpected argument 'extra'"],
  ])('%j is a usage error: exit 2, one line, no stack', async (argv, message) => {
    const err: string[] = [];
    const write = process.stderr.write;
    process.stderr.write = ((s: string) => {
      err.push(s);
      return true;
    }) as typeof process.stderr.write;
    try {
      expect(await main(argv)).toBe(2);
    } finally {
      process.stderr.write = write;
    }
    expect(err.join('')).toContain(message);
    expect(err.join('')).toMatch(/^agreement: /);
    expect(err.join('')).not.toContain('    at ');
  });
});
