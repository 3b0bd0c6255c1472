/**
 * What `packbot optimize` writes: best.yaml (the chosen strategy, a valid `packbot.strategy/v1`
 * file, headed by a comment saying how it was found and its figures), trials.json (every
 * candidate) and the terminal table of the top ten against the base.
 */
import { stringify } from 'yaml';
import { textTable } from '../../core/text-table.js';
import type { Figures } from './metrics.js';
import type { OptimizeResult, Trial } from './result.js';

/** Money to the cent (whole dollars from 10,000); small numbers (log growth) to 5 places. */
const num = (x: number) =>
  Math.abs(x) >= 10_000 ? x.toFixed(0) : Math.abs(x) >= 1 || x === 0 ? x.toFixed(2) : x.toFixed(5);
export const fmtValue = (v: unknown): string =>
  typeof v === 'number'
    ? String(Math.round(v * 1e6) / 1e6)
    : Array.isArray(v)
      ? `[${v.join(',')}]`
      : String(v);
const pm = (f: Figures) => `${num(f.objective)} ± ${num(f.objective_stderr)}`;
const inSample = (f: Figures) => `${pm(f)} (${f.paths} paths)`;
const sizes = (r: OptimizeResult, sep: string) =>
  r.rungs.map((g) => `${g.candidates.length}x${g.paths}`).join(sep);

/** How the search ran: the race's looks and its error rate, or halving's rungs. */
function searchLine(r: OptimizeResult): string {
  if (!r.race) return `successive halving over ${r.rungs.length} rungs (${sizes(r, ', ')})`;
  return `race over ${r.rungs.length} looks (${sizes(r, ', ')}); the best candidate dropped with probability at most ${r.race.alpha} (each test at ${r.race.test_level.toPrecision(3)})`;
}

/** The candidates with figures, best first: feasible by objective, then infeasible, each by paths run. */
export function rankedTrials(r: OptimizeResult): Trial[] {
  return r.candidates
    .filter((t) => t.figures)
    .sort(
      (a, b) =>
        Number(b.figures!.feasible) - Number(a.figures!.feasible) ||
        b.figures!.paths - a.figures!.paths ||
        b.figures!.objective - a.figures!.objective ||
        a.id - b.id,
    );
}

export function bestYaml(r: OptimizeResult): string {
  const chosen = r.candidates[r.chosen]!;
  const o = r.out_of_sample;
  const lines = [
    `packbot optimize: ${r.chosen === 0 ? 'the base strategy (no candidate beat it)' : `candidate ${r.chosen} of ${r.trials}`}`,
    `base ${r.strategy}, snapshot ${r.snapshot}, space ${r.space}`,
    `${r.market} market, ${r.days} days, seed ${r.seed}; ${searchLine(r)}`,
    `objective ${r.objective}; constraints ${JSON.stringify(r.constraints)}`,
    `why: ${r.chosen_reason}`,
    `in sample: chosen ${inSample(r.chosen === 0 ? r.in_sample.base : r.in_sample.winner)}, base ${inSample(r.in_sample.base)}`,
    `out of sample (paths ${o.paths.from}..${o.paths.to - 1}, never used by the search): winner ${pm(o.winner)}, base ${pm(o.base)}, winner - base ${num(o.difference)} ± ${num(o.difference_stderr)} (paired)`,
    `parameters: ${Object.entries(chosen.params)
      .map(([k, v]) => `${k}=${fmtValue(v)}`)
      .join(', ')}`,
  ];
  const strategy = {
    ...r.chosen_strategy,
    name: r.chosen === 0 ? r.chosen_strategy.name : `${r.chosen_strategy.name}-optimized`,
  };
  return `${lines.map((l) => `# ${l}`).join('\n')}\n${stringify(strategy)}`;
}

/** trials.json: the whole result but the chosen strategy (best.yaml holds it). */
export function trialsJson(r: OptimizeResult): string {
  const { chosen_strategy: _, ...rest } = r;
  return `${JSON.stringify(rest, null, 2)}\n`;
}

export function terminalTable(r: OptimizeResult): string {
  const top = rankedTrials(r).slice(0, 10);
  const base = r.candidates[0]!;
  if (!top.includes(base)) top.push(base);
  const headers = ['#', 'cand', 'paths', r.objective, 'median', 'p5', 'P(loss)', 'P(ruin)', 'feasible'];
  const changed = (t: Trial) =>
    Object.entries(t.params)
      .filter(([k, v]) => t.id === 0 || JSON.stringify(v) !== JSON.stringify(base.params[k]))
      .map(([k, v]) => `${k.split('.').pop()}=${fmtValue(v)}`)
      .join(' ');
  const rows = top.map((t, i) => {
    const f = t.figures!;
    return [
      t.id === 0 ? 'base' : String(i + 1),
      String(t.id) + (t.id === r.chosen ? '*' : ''),
      String(f.paths),
      pm(f),
      num(f.median_net_pnl),
      num(f.p5_net_pnl),
      `${(f.p_loss * 100).toFixed(1)}%`,
      `${(f.p_ruin * 100).toFixed(1)}%`,
      f.feasible ? 'yes' : 'no',
      changed(t),
    ];
  });
  // The first two columns left-aligned, the figures right-aligned, the parameters free text.
  const table = textTable([...headers, 'parameters (changed from the base)'], rows, {
    right: headers.map((_, i) => i > 1),
    freeLast: true,
    trim: false,
  });
  const o = r.out_of_sample;
  const skipped = r.candidates.filter((t) => t.status === 'skipped').length;
  return [
    `optimize ${r.strategy} on ${r.snapshot} (${r.market} market, ${r.days} days, seed ${r.seed}): ${r.trials} candidates${skipped ? ` (${skipped} skipped)` : ''}, ${r.race ? 'looks' : 'rungs'} ${sizes(r, ' -> ')}`,
    ...table,
    `out of sample (${o.paths.to - o.paths.from} fresh paths): winner (candidate ${r.winner}) ${pm(o.winner)}, base ${pm(o.base)}, difference ${num(o.difference)} ± ${num(o.difference_stderr)}`,
    `chosen: ${r.chosen === 0 ? 'the base' : `candidate ${r.chosen}`} (${r.chosen_reason}); ${r.evaluated_paths} paths in ${(r.elapsed_ms / 1000).toFixed(1)} s`,
    '',
  ].join('\n');
}
