/**
 * The optimisation's HTML report, in the house style of the backtest report (inline CSS and SVG,
 * no script, no external resource): the objective against each parameter, the Pareto front of
 * median P&L against P(loss), the top candidates side by side with the base, the out-of-sample
 * check.
 */
import { esc, ticks } from '../report/report-html.js';
import type { Figures } from './metrics.js';
import { fmtValue, rankedTrials } from './output.js';
import type { OptimizeResult, Trial } from './result.js';

const W = 360;
const H = 260;
const M = { l: 64, r: 14, t: 14, b: 42 };
const fix = (x: number) => (Math.round(x * 10) / 10).toString();
const num = (x: number) =>
  Math.abs(x) >= 10_000 ? x.toFixed(0) : Math.abs(x) >= 1 || x === 0 ? x.toFixed(2) : x.toFixed(5);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

interface Point {
  x: number;
  y: number;
  t: Trial;
}

function klass(r: OptimizeResult, t: Trial): string {
  if (t.id === r.chosen) return 'chosen';
  if (t.id === 0) return 'base';
  if (!t.figures!.feasible) return 'infeasible';
  return `rung${Math.min(4, t.rung ?? 0)}`;
}

function scatter(
  r: OptimizeResult,
  pts: Point[],
  xLabel: string,
  yLabel: string,
  xCats?: string[],
  front?: Point[],
  xFmt: (v: number) => string = String,
): string {
  if (pts.length === 0) return '';
  let [xlo, xhi] = [Math.min(...pts.map((p) => p.x)), Math.max(...pts.map((p) => p.x))];
  let [ylo, yhi] = [Math.min(...pts.map((p) => p.y)), Math.max(...pts.map((p) => p.y))];
  if (xCats) [xlo, xhi] = [-0.5, xCats.length - 0.5];
  if (xhi - xlo < 1e-9) [xlo, xhi] = [xlo - 1, xhi + 1];
  if (yhi - ylo < 1e-9) [ylo, yhi] = [ylo - 1, yhi + 1];
  const padY = (yhi - ylo) * 0.05;
  [ylo, yhi] = [ylo - padY, yhi + padY];
  const x = (v: number) => M.l + ((v - xlo) / (xhi - xlo)) * (W - M.l - M.r);
  const y = (v: number) => M.t + ((yhi - v) / (yhi - ylo)) * (H - M.t - M.b);
  const yTicks = ticks(ylo, yhi, 4)
    .map(
      (v) =>
        `<line x1="${M.l}" x2="${W - M.r}" y1="${fix(y(v))}" y2="${fix(y(v))}" class="grid"/><text x="${M.l - 5}" y="${fix(y(v) + 4)}" text-anchor="end">${esc(num(v))}</text>`,
    )
    .join('');
  const xTicks = (xCats ? xCats.map((_, i) => i) : ticks(xlo, xhi, 4))
    .map(
      (v) =>
        `<text x="${fix(x(v))}" y="${H - M.b + 15}" text-anchor="middle">${esc(xCats ? xCats[v]! : xFmt(v))}</text>`,
    )
    .join('');
  const line =
    front && front.length > 1
      ? `<polyline points="${front.map((p) => `${fix(x(p.x))},${fix(y(p.y))}`).join(' ')}" class="front"/>`
      : '';
  // Drawn worst first so the chosen and the base sit on top.
  const order = ['infeasible', 'rung0', 'rung1', 'rung2', 'rung3', 'rung4', 'base', 'chosen'];
  const dots = [...pts]
    .sort((a, b) => order.indexOf(klass(r, a.t)) - order.indexOf(klass(r, b.t)))
    .map((p) => {
      const f = p.t.figures!;
      const tip = `candidate ${p.t.id}${p.t.id === 0 ? ' (base)' : ''}: ${r.objective} ${num(f.objective)} ± ${num(f.objective_stderr)} on ${f.paths} paths${f.feasible ? '' : `; infeasible: ${f.infeasible_reason}`}`;
      return `<circle cx="${fix(x(p.x))}" cy="${fix(y(p.y))}" r="${p.t.id === r.chosen || p.t.id === 0 ? 5.5 : 3.5}" class="${klass(r, p.t)}"><title>${esc(tip)}</title></circle>`;
    })
    .join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(`${yLabel} against ${xLabel}`)}">
${yTicks}${xTicks}${line}${dots}
<text x="${(W + M.l) / 2}" y="${H - 6}" text-anchor="middle">${esc(xLabel)}</text>
</svg>`;
}

function paramCharts(r: OptimizeResult, evaluated: Trial[]): string {
  return r.params
    .map((path) => {
      const values = evaluated.map((t) => t.params[path]);
      const numeric = values.every((v) => typeof v === 'number');
      const cats = numeric ? undefined : [...new Set(values.map(fmtValue))];
      const pts = evaluated.map((t) => ({
        x: numeric ? (t.params[path] as number) : cats!.indexOf(fmtValue(t.params[path])),
        y: t.figures!.objective,
        t,
      }));
      return `<figure>${scatter(r, pts, path, r.objective, cats)}</figure>`;
    })
    .join('\n');
}

/** Candidates no other beats on both median P&L (higher) and P(loss) (lower), by P(loss). */
function paretoFront(trials: Trial[]): Trial[] {
  const ok = trials.filter((t) => t.figures);
  return ok
    .filter(
      (a) =>
        !ok.some(
          (b) =>
            b !== a &&
            b.figures!.median_net_pnl >= a.figures!.median_net_pnl &&
            b.figures!.p_loss <= a.figures!.p_loss &&
            (b.figures!.median_net_pnl > a.figures!.median_net_pnl || b.figures!.p_loss < a.figures!.p_loss),
        ),
    )
    .sort((a, b) => a.figures!.p_loss - b.figures!.p_loss || a.id - b.id);
}

function row(r: OptimizeResult, label: string, t: Trial, f: Figures, base: Trial): string {
  const changed = Object.entries(t.params)
    .filter(([k, v]) => t.id === 0 || JSON.stringify(v) !== JSON.stringify(base.params[k]))
    .map(([k, v]) => `${k}=${fmtValue(v)}`)
    .join(', ');
  return `<tr class="${t.id === r.chosen ? 'hl' : ''}"><td>${esc(label)}</td><td>${t.id}</td><td>${f.paths}</td><td>${esc(num(f.objective))} ± ${esc(num(f.objective_stderr))}</td>
<td>${esc(num(f.mean_net_pnl))}</td><td>${esc(num(f.median_net_pnl))}</td><td>${esc(num(f.p5_net_pnl))}</td><td>${pct(f.p_loss)}</td><td>${pct(f.p_ruin)}</td><td>${esc(num(f.max_drawdown_p95))}</td>
<td>${f.feasible ? 'yes' : `no: ${esc(f.infeasible_reason ?? '')}`}</td><td class="reason">${esc(changed)}</td></tr>`;
}

export function renderOptimizeHtml(r: OptimizeResult): string {
  const evaluated = r.candidates.filter((t) => t.figures);
  const base = r.candidates[0]!;
  const top = rankedTrials(r).slice(0, 10);
  if (!top.includes(base)) top.push(base);
  const front = paretoFront(evaluated);
  const paretoPts = evaluated.map((t) => ({ x: t.figures!.p_loss, y: t.figures!.median_net_pnl, t }));
  const frontPts = front.map((t) => ({ x: t.figures!.p_loss, y: t.figures!.median_net_pnl, t }));
  const o = r.out_of_sample;
  const skipped = r.candidates.filter((t) => t.status === 'skipped');
  const head = `<tr><th></th><th>cand</th><th>paths</th><th>${esc(r.objective)}</th><th>mean P&amp;L</th><th>median</th><th>p5</th><th>P(loss)</th><th>P(ruin)</th><th>drawdown p95</th><th>feasible</th><th>parameters (changed from the base)</th></tr>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>packbot optimize: ${esc(r.strategy)}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1150px;color:#1d2330;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}.meta{color:#5a6372}
table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 8px;border-bottom:1px solid #e3e6eb;text-align:right}
th:first-child,td:first-child{text-align:left}thead th{background:#f4f6f9}td.reason{text-align:left;color:#5a6372;max-width:360px}
tr.hl td{background:#fdecea}
svg{background:#fff;border:1px solid #e3e6eb;border-radius:6px;max-width:100%;height:auto}
svg text{font-size:10px;fill:#5a6372}.grid{stroke:#eef0f3}.front{fill:none;stroke:#e45756;stroke-width:1.5;stroke-dasharray:4 3}
figure{display:inline-block;margin:0 8px 8px 0}
.rung0{fill:#c6d6ea}.rung1{fill:#93b3d6}.rung2{fill:#6494c4}.rung3{fill:#3f74ae}.rung4{fill:#1f4e8c}
.infeasible{fill:none;stroke:#9d9d9d}.base{fill:#1d2330}.chosen{fill:#e45756;stroke:#7a1f1c}
.legend span{display:inline-block;margin-right:14px}.sw{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px;vertical-align:middle}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #e3e6eb;border-radius:8px;padding:10px 14px;min-width:170px}.card b{display:block;font-size:19px}
</style></head><body>
<h1>Optimisation: ${esc(r.strategy)}</h1>
<div class="meta">snapshot ${esc(r.snapshot)} · space ${esc(r.space)} · ${esc(r.market)} market · ${r.days} days · seed ${r.seed} ·
${r.trials} candidates${skipped.length ? ` (${skipped.length} skipped)` : ''} · ${r.race ? 'looks' : 'rungs'} ${r.rungs.map((g) => `${g.candidates.length}×${g.paths}`).join(' → ')} ·
objective ${esc(r.objective)} · constraints ${esc(JSON.stringify(r.constraints))} · ${r.evaluated_paths} paths in ${(r.elapsed_ms / 1000).toFixed(1)} s</div>
<div class="cards" style="margin-top:16px">
<div class="card">chosen<b>${r.chosen === 0 ? 'the base' : `candidate ${r.chosen}`}</b></div>
<div class="card">winner out of sample<b>${esc(num(o.winner.objective))} ± ${esc(num(o.winner.objective_stderr))}</b></div>
<div class="card">base out of sample<b>${esc(num(o.base.objective))} ± ${esc(num(o.base.objective_stderr))}</b></div>
<div class="card">winner − base (paired)<b>${esc(num(o.difference))} ± ${esc(num(o.difference_stderr))}</b></div>
</div>
<p class="meta">${esc(r.chosen_reason)}. Out of sample: paths ${o.paths.from} to ${o.paths.to - 1} of seed ${r.seed}, none used by the search.</p>
<h2>Top candidates and the base</h2>
<table><thead>${head}</thead><tbody>
${top.map((t, i) => row(r, t.id === 0 ? 'base' : String(i + 1), t, t.figures!, base)).join('\n')}
</tbody></table>
<p class="meta">Each candidate's figures are on the paths of the last rung it reached (the same first paths for every candidate).</p>
<h2>Objective against each parameter</h2>
<div class="legend"><span><i class="sw" style="background:#c6d6ea"></i>stopped at ${r.race ? 'look' : 'rung'} 1</span><span><i class="sw" style="background:#3f74ae"></i>later ${r.race ? 'looks' : 'rungs'} (darker)</span><span><i class="sw" style="border:1px solid #9d9d9d"></i>infeasible</span><span><i class="sw" style="background:#1d2330"></i>base</span><span><i class="sw" style="background:#e45756"></i>chosen</span></div>
${paramCharts(r, evaluated)}
<h2>Median P&amp;L against P(loss)</h2>
<p class="meta">The dashed line joins the Pareto front: no candidate has both a higher median and a lower P(loss).</p>
${scatter(r, paretoPts, 'P(loss)', 'median net P&L (USD)', undefined, frontPts, (v) => `${Math.round(v * 100)}%`)}
${
  skipped.length
    ? `<h2>Skipped candidates</h2><table><thead><tr><th>cand</th><th>reason</th></tr></thead><tbody>${skipped
        .map((t) => `<tr><td>${t.id}</td><td class="reason">${esc(t.skipped_reason ?? '')}</td></tr>`)
        .join('')}</tbody></table>`
    : ''
}
</body></html>
`;
}
