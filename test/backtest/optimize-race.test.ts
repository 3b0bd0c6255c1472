import { describe, expect, it } from 'vitest';
import { normalQuantile, studentQuantile, wilsonLower } from '../../src/backtest/optimize/distributions.js';
import { type SearchBatch, SearchMachine, type SearchSettings } from '../../src/backtest/optimize/machine.js';
import { RACE_DEFAULTS, raceLooks, testLevel } from '../../src/backtest/optimize/race.js';
import { Rng } from '../../src/core/prng.js';

/**
 * A synthetic search: candidate c's P&L on path i is its mean plus a noise shared by every
 * candidate on that path (common random numbers) plus its own noise; `ruinShare` of its paths end
 * ruined. Values in cents, a pure function of (candidate, path).
 */
const MEANS = [100, 100, 160, -400, 120, 100]; // USD: 2 is the best, 3 clearly worse
const RUIN = [0, 0, 0, 0, 0, 0.5]; // 5 breaks p_ruin_max 0.2
function pathResult(c: number, i: number): { net: number; ruined: boolean } {
  const common = new Rng(1000 + i);
  const own = new Rng(7919 * (c + 1) + i);
  const gauss = (r: Rng) => Math.sqrt(-2 * Math.log(1 - r.next())) * Math.cos(2 * Math.PI * r.next());
  const net = (MEANS[c]! + 300 * gauss(common) + 100 * gauss(own)) * 100;
  return { net: Math.round(net), ruined: own.next() < RUIN[c]! };
}

const settings = (over: Partial<SearchSettings> = {}): SearchSettings => ({
  method: 'race',
  trials: 6,
  paths: 400,
  oos: 100,
  seed: 1,
  race: RACE_DEFAULTS,
  eta: 3,
  finalists: 3,
  ...over,
});
const space = { objective: 'mean_net_pnl', constraints: { p_ruin_max: 0.2 } } as const;

/** Runs a machine to the end on the synthetic paths; `relay` round-trips its state through JSON between batches. */
function run(s: SearchSettings, relay = false): { m: SearchMachine; batches: SearchBatch[] } {
  const init = { settings: s, space, startCents: 1_000_000, valid: [0, 1, 2, 3, 4, 5] };
  let m = new SearchMachine(init);
  const batches: SearchBatch[] = [];
  for (let b = m.batch(); b; b = m.batch()) {
    batches.push(b);
    for (const c of b.cands)
      for (let i = b.from; i < b.to; i++) {
        const r = pathResult(c, i);
        m.store(c, i, r.net, Math.max(0, -r.net), r.ruined);
      }
    m.close();
    if (relay && m.phase !== 'done')
      m = SearchMachine.fromState(init, JSON.parse(JSON.stringify(m.toState())));
  }
  return { m, batches };
}

describe('optimize: the race', () => {
  it('drops a clearly worse candidate and a ruinous one at the first look, and the best wins early', () => {
    const { m, batches } = run(settings());
    expect(m.looks).toEqual([25, 50, 100, 200, 400]);
    expect(m.dropped.get(3)).toMatch(/^look 1: behind candidate \d by \d+(\.\d+)? ± /);
    expect(m.dropped.get(5)).toMatch(/^look 1: p_ruin at least 0\.\d+ > 0\.2 \(\d+ of 25 paths ruined/);
    expect(m.lastRung.get(3)).toBe(0);
    expect(m.winner).toBe(2);
    expect(m.dropped.has(2)).toBe(false);
    // Everyone else was told apart from the winner before the last look: the race ended early.
    expect(m.rungs.length).toBeLessThan(m.looks.length);
    const searchPairs = batches
      .filter((b) => b.kind === 'search')
      .reduce((s, b) => s + b.cands.length * (b.to - b.from), 0);
    expect(searchPairs).toBeLessThan(6 * 400 * 0.5);
    expect(batches.at(-1)).toEqual({ kind: 'oos', rung: 5, cands: [0, 2], from: 400, to: 500 });
    // Each look's candidates are the ones the look before kept.
    for (let k = 1; k < m.rungs.length; k++) expect(m.rungs[k]!.candidates).toEqual(m.rungs[k - 1]!.promoted);
    expect(m.oosFigs!.get(2)!.objective).toBeGreaterThan(m.oosFigs!.get(0)!.objective);
  });

  it('decides the same through a JSON round trip of its state between batches (what a sharded search does)', () => {
    const a = run(settings()).m;
    const b = run(settings(), true).m;
    expect(b.toState()).toEqual(a.toState());
    expect([...b.oosFigs!]).toEqual([...a.oosFigs!]);
    const h = run(settings({ method: 'halving' }), true).m;
    expect(h.toState()).toEqual(run(settings({ method: 'halving' })).m.toState());
  });

  it('the level of each test: alpha over looks x (candidates - 1 + constraints)', () => {
    expect(raceLooks(2000, RACE_DEFAULTS)).toEqual([25, 50, 100, 200, 400, 800, 1600, 2000]);
    expect(raceLooks(9, RACE_DEFAULTS)).toEqual([9]);
    expect(raceLooks(30, { first: 25, growth: 2 })).toEqual([25, 30]);
    expect(testLevel(0.05, 8, 100, 3)).toBeCloseTo(0.05 / (8 * 102), 15);
  });

  it('quantiles and the Wilson bound agree with reference values', () => {
    // Reference values from scipy.stats (t.ppf, norm.ppf).
    expect(normalQuantile(6.13e-5)).toBeCloseTo(-3.840868060855082, 7);
    expect(normalQuantile(0.025)).toBeCloseTo(-1.9599639845400545, 8);
    expect(normalQuantile(0.9)).toBeCloseTo(1.2815515655446004, 8);
    expect(normalQuantile(1e-9)).toBeCloseTo(-5.9978070150076865, 6);
    for (const [p, df, t] of [
      [6.13e-5, 24, 4.574290517072894],
      [6.13e-5, 49, 4.1729082341994985],
      [0.025, 1, 12.706204736174694],
      [0.05, 5, 2.0150483733330233],
      [1e-6, 8, 12.109834665510558],
      [0.01, 1000, 2.330082674755513],
    ] as const)
      expect(studentQuantile(p, df)).toBeCloseTo(t, 6);
    expect(wilsonLower(10, 50, 3.84)).toBeCloseTo(0.06557380324763859, 12);
    expect(wilsonLower(0, 50, 3.84)).toBeCloseTo(0, 12);
    expect(wilsonLower(50, 50, 3.84)).toBeCloseTo(0.7722532496416744, 12);
  });
});
