import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { figures, pairedDifference } from '../../src/backtest/optimize/metrics.js';
import { bestYaml, terminalTable, trialsJson } from '../../src/backtest/optimize/output.js';
import { type OptimizeOptions, runOptimize, schedule } from '../../src/backtest/optimize/search.js';
import { parseSource, validateSource } from '../../src/config/load.js';
import { SpaceFile } from '../../src/config/space-file.js';
import { loadStrategy } from '../../src/config/strategy-file.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import { worldSnapshot } from './world-snapshot.js';

const space = (text: string) =>
  validateSource(parseSource(`format: packbot.space/v1\n${text}`, 'space.yaml'), SpaceFile);

const FOUR = space(`params:
  open.min_ev_ratio: { range: [0.95, 1.3], step: 0.01 }
  open.kelly_fraction: { range: [0.1, 1], log: true }
  open.max_quantity: { range: [1, 10] }
  sell.threshold_usd: { range: [5, 200], log: true, step: 1 }
  sell.list.markup: { range: [1.1, 1.8], step: 0.05 }
objective: mean_net_pnl
constraints: { p_ruin_max: 0.2 }
`);

const opts = async (over: Partial<OptimizeOptions> = {}): Promise<OptimizeOptions> => ({
  snapshot: await worldSnapshot(),
  base: loadStrategy('strategies/balanced.yaml'),
  space: FOUR,
  trials: 7,
  paths: 9,
  days: 3,
  seed: 3,
  market: 'dynamic',
  workers: 0,
  chunk: 4,
  ...over,
});
const strip = (r: object) => ({ ...r, elapsed_ms: 0 });

describe('packbot optimize: the search', () => {
  it('finds a valid strategy at least as good as the base out of sample, the same for a seed', async () => {
    const a = await runOptimize(await opts({ paths: 30 }));
    // The race: every candidate at the first look, each look on the ones the one before kept.
    expect(a.method).toBe('race');
    expect(a.race!.looks).toEqual([25, 30]);
    expect(a.rungs[0]!.candidates.length).toBe(7);
    for (let k = 1; k < a.rungs.length; k++) expect(a.rungs[k]!.candidates).toEqual(a.rungs[k - 1]!.promoted);
    for (const t of a.candidates)
      if (t.dropped_reason) expect(t.dropped_reason).toMatch(/^look \d: (behind candidate \d|p_ruin)/);
    const o = a.out_of_sample;
    expect(o.paths).toEqual({ from: 30, to: 60 });
    const chosenOos = a.chosen === 0 ? o.base : o.winner;
    expect(chosenOos.objective).toBeGreaterThanOrEqual(o.base.objective);
    expect(StrategyFile.safeParse(a.chosen_strategy).success).toBe(true);
    const yaml = bestYaml(a);
    const parsed = validateSource(parseSource(yaml, 'best.yaml'), StrategyFile);
    expect(parsed.open).toEqual(a.chosen_strategy.open);
    expect(yaml).toMatch(/^# packbot optimize/);
    expect(yaml).toContain('out of sample');
    expect(yaml).toContain('race over');
    expect(JSON.parse(trialsJson(a)).candidates).toHaveLength(7);
    expect(terminalTable(a)).toContain('base');
    // Same seed: the same result, whatever the number of workers.
    let builds = 0;
    const b = await runOptimize(
      await opts({
        paths: 30,
        workers: 2,
        onStats: (st) => {
          builds = st.builds;
        },
      }),
    );
    expect(strip(b)).toEqual(strip(a));
    // Engines live across looks: each candidate is built at most once per worker.
    const valid = a.candidates.filter((t) => t.status === 'evaluated').length;
    expect(builds).toBeGreaterThanOrEqual(valid);
    expect(builds).toBeLessThanOrEqual(2 * valid);
    const c = await runOptimize(await opts({ seed: 4 }));
    expect(c.candidates[1]!.params).not.toEqual(a.candidates[1]!.params);
  });

  it('successive halving (--race off) keeps the best third at fixed rungs, the base in every one', async () => {
    const a = await runOptimize(await opts({ method: 'halving' }));
    expect(a.method).toBe('halving');
    expect(a.race).toBeNull();
    expect(a.rungs[0]!.candidates.length).toBe(7);
    expect(a.rungs.at(-1)!.paths).toBe(9);
    for (const g of a.rungs) expect(g.candidates).toContain(0);
    expect(a.out_of_sample.paths).toEqual({ from: 9, to: 18 });
    expect(bestYaml(a)).toContain('successive halving over');
    const b = await runOptimize(await opts({ method: 'halving', workers: 2 }));
    expect(strip(b)).toEqual(strip(a));
  });

  it("the race's choice does no worse out of sample than halving's on the same seed", async () => {
    // The bench's setup, small: its space around balanced on the default world, 30 days.
    const small = await opts({
      space: validateSource(
        parseSource(readFileSync('examples/space-example.yaml', 'utf8'), 'space.yaml'),
        SpaceFile,
      ),
      trials: 12,
      paths: 60,
      days: 15,
      seed: 1,
      workers: 2,
    });
    const race = await runOptimize(small);
    const halving = await runOptimize({ ...small, method: 'halving' });
    const chosenOos = (r: typeof race) => (r.chosen === 0 ? r.out_of_sample.base : r.out_of_sample.winner);
    expect(chosenOos(race).mean_net_pnl).toBeGreaterThanOrEqual(chosenOos(halving).mean_net_pnl);
  });

  it('keeps the base when no candidate beats it, and skips what the schema or snapshot refuse', async () => {
    const s = space(`params:
  open.min_ev_ratio: { range: [5, 10] }
  open.kelly_fraction: { range: [0.1, 1] }
  open.max_quantity: { range: [1, 10] }
  packs.include: { choice: [[], [no-such-pack]] }
`);
    const r = await runOptimize(await opts({ space: s, trials: 6, paths: 6 }));
    expect(r.in_sample.base.objective).toBeGreaterThan(0); // candidates never open: 0 each
    expect(r.winner).toBe(0);
    expect(r.chosen).toBe(0);
    expect(r.out_of_sample.difference).toBe(0);
    const skipped = r.candidates.filter((t) => t.status === 'skipped');
    expect(skipped.length).toBeGreaterThan(0);
    for (const t of skipped)
      expect(t.skipped_reason).toMatch(/packs\.include: pack 'no-such-pack' is not in the snapshot/);
    expect(bestYaml(r)).toContain('name: balanced\n');
  });
});

describe('packbot optimize: pieces', () => {
  it('halving schedules rungs of a third of the candidates on three times the paths', () => {
    expect(schedule(100, 2000, 3, 3)).toEqual({
      counts: [100, 34, 12, 4, 3],
      paths: [25, 74, 222, 667, 2000],
    });
    expect(schedule(3, 500, 3, 3)).toEqual({ counts: [3], paths: [500] });
    expect(schedule(10, 9, 3, 3).paths.at(-1)).toBe(9);
  });

  it('figures: objective, standard error, constraints; paired differences', () => {
    const m = (net: number[], dd = net.map(() => 0), ruined = net.map(() => 0)) => ({
      net: Float64Array.from(net),
      drawdown: Float64Array.from(dd),
      ruined: Uint8Array.from(ruined),
      startCents: 100_000,
    });
    const a = m([100, -200, 300, 400], [0, 500, 0, 0], [0, 1, 0, 0]);
    const f = figures(a, 4, { objective: 'mean_net_pnl', constraints: { p_ruin_max: 0.2, p_loss_max: 0.5 } });
    expect(f.objective).toBe(1.5);
    expect(f.p_loss).toBe(0.25);
    expect(f.p_ruin).toBe(0.25);
    expect(f.feasible).toBe(false);
    expect(f.infeasible_reason).toBe('p_ruin 0.25 > 0.2');
    expect(f.objective_stderr).toBeCloseTo(Math.sqrt((0.5 ** 2 + 3.5 ** 2 + 1.5 ** 2 + 2.5 ** 2) / 3 / 4), 6);
    const g = figures(a, 4, { objective: 'mean_log_growth', constraints: {} });
    expect(g.feasible).toBe(true);
    expect(g.objective).toBeCloseTo(
      (Math.log(1.001) + Math.log(0.998) + Math.log(1.003) + Math.log(1.004)) / 4,
      6,
    );
    const b = m([0, -100, 200, 200]);
    const d = pairedDifference(a, b, 4, 'mean_net_pnl', 1);
    expect(d.difference).toBe(0.75);
    expect(d.stderr).toBeCloseTo(Math.sqrt((0.25 ** 2 + 1.75 ** 2 + 0.25 ** 2 + 1.25 ** 2) / 3 / 4), 6);
    const q = pairedDifference(a, a, 4, 'median_net_pnl', 1);
    expect(q).toEqual({ difference: 0, stderr: 0 });
  });
});
