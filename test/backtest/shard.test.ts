import { describe, expect, it } from 'vitest';
import { type BacktestOptions, runBacktest, runBacktestPaths } from '../../src/backtest/run/run.js';
import { makePart, mergeParts } from '../../src/backtest/run/shard.js';
import { BacktestPartFile } from '../../src/config/backtest-part.js';
import { InputFileError } from '../../src/config/load.js';
import { loadStrategy } from '../../src/config/strategy-file.js';
import { worldSnapshot } from './world-snapshot.js';

const base = async (): Promise<BacktestOptions> => ({
  snapshot: await worldSnapshot(),
  strategy: loadStrategy('strategies/balanced.yaml'),
  days: 2,
  paths: 11,
  seed: 7,
  market: 'dynamic',
  workers: 0,
  chunk: 2,
});

/** Runs shard K/N and returns its part as it comes back from disk (JSON round trip). */
async function part(opts: BacktestOptions, index: number, count: number) {
  const o = { ...opts, shard: { index, count } };
  const p = makePart(o, await runBacktestPaths(o));
  return { file: `part-${index}.json`, part: BacktestPartFile.parse(JSON.parse(JSON.stringify(p))) };
}

const strip = (r: object) => JSON.stringify({ ...r, elapsed_ms: 0 });

describe('sharded backtests', () => {
  it('shards merged give exactly the unsharded report (any shard count, any order)', async () => {
    const opts = await base();
    const whole = await runBacktest(opts);
    const two = await Promise.all([part(opts, 2, 2), part(opts, 1, 2)]);
    expect(strip(mergeParts(two))).toBe(strip(whole));
    const three = await Promise.all([1, 2, 3].map((k) => part(opts, k, 3)));
    const merged = mergeParts(three);
    expect(strip(merged)).toBe(strip(whole));
    expect(merged.paths).toBe(11);
    // Expected vs realized too: the same sums, added in path order.
    expect(whole.model.orders).toBeGreaterThan(0);
    expect(merged.model).toEqual(whole.model);
    expect(merged.partial).toBe(false);
    // A shard runs only its own paths: 11 paths in 3 shards are 4 + 4 + 3.
    expect(three.map((p) => p.part.raw.paths)).toEqual([
      [0, 3, 6, 9],
      [1, 4, 7, 10],
      [2, 5, 8],
    ]);
  });

  it('refuses parts that do not belong together, naming the file and field', async () => {
    const opts = await base();
    const [a, b] = await Promise.all([part(opts, 1, 2), part(opts, 2, 2)]);
    const other = await part({ ...opts, seed: 8 }, 2, 2);
    const err = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e as Error;
      }
      throw new Error('no error');
    };
    expect(err(() => mergeParts([a!, { ...other, file: 'x.json' }])).message).toMatch(
      /x\.json: run\.seed: 8 differs from part-1\.json's 7/,
    );
    expect(err(() => mergeParts([a!, a!])).message).toMatch(/shard\.index: shard 1\/2 is also part-1\.json/);
    expect(err(() => mergeParts([a!])).message).toMatch(/missing shard 2\/2/);
    const three = await part(opts, 3, 3);
    expect(err(() => mergeParts([a!, three])) instanceof InputFileError).toBe(true);
    const cut = { file: 'cut.json', part: { ...b!.part, raw: { ...b!.part.raw, max_daily: [] } } };
    expect(err(() => mergeParts([a!, cut])).message).toMatch(/cut\.json: raw\.max_daily: has 0 numbers/);
    const wrongStrategy = await part({ ...opts, strategy: loadStrategy('strategies/chase.yaml') }, 2, 2);
    expect(err(() => mergeParts([a!, wrongStrategy])).message).toMatch(/run\.strategy_sha256/);
  });
});
