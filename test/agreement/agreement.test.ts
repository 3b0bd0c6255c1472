/**
 * The agreement harness, short (`npm run agreement` runs 40 strategies on 200 paths × 10 days): a
 * few drawn strategies on both worlds through the static and the dynamic backtest, the first one
 * also as the bot live (2 simulator seeds × 1 day; the bot reads every pool of the world every 15
 * minutes, most of the test's time) against a dynamic backtest of its horizon, in this thread.
 * Every view agrees, and the table has a row per strategy × world. The hand-picked heavy seller is
 * left to the long run.
 */
import { describe, expect, it } from 'vitest';
import { runAgreement } from '../../agreement/harness.js';
import { failureLines, legend, tableHeader, tableRow } from '../../agreement/table.js';

describe('agreement harness (short)', () => {
  it('draws, runs and judges: a row per strategy × world, every view within its error', async () => {
    const o = {
      strategies: 3,
      // Three strategies that open packs (many draws open nothing): one buying cards and priced on
      // the default world's market (the one run live), one on the fast world's, one on its own.
      seed: 16,
      paths: 50,
      days: 4,
      live: 1,
      liveRuns: 2,
      liveDays: 1,
      livePaths: 100,
      handPicked: false,
      workers: 0,
    };
    const r = await runAgreement(o);
    const table = [
      tableHeader(r.zStar),
      ...r.rows.map((row) => tableRow(row, r.zStar)),
      legend(r),
      ...failureLines(r, undefined, o),
    ].join('\n');
    console.log(table);
    expect(r.rows.map((row) => `${row.id} ${row.world}`)).toEqual([
      'r01 default',
      'r01 fast',
      'r02 default',
      'r02 fast',
      'r03 default',
      'r03 fast',
    ]);
    // 3 strategies x 2 worlds x 7 checks, and the live pair's 2 on each world.
    expect(r.checks).toBe(46);
    expect(r.zStar).toBeGreaterThan(3.5);
    // Something was judged: not every row may open nothing.
    expect(r.rows.some((row) => row.checks.some((c) => c.unjudged === null && c.se > 0))).toBe(true);
    expect(r.rows.filter((row) => row.live !== null)).toHaveLength(2);
    expect(r.rows.some((row) => (row.live?.bot.packs.mean ?? 0) > 0)).toBe(true);
    expect(failureLines(r, undefined, o), table).toEqual([]);
    expect(r.ok).toBe(true);
  });
});
