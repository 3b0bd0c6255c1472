/**
 * One self-contained HTML page for a backtest report: inline CSS and SVG only (no scripts, no
 * external resources), so it opens anywhere, offline, and can be attached to an email.
 */
import type { BacktestReport } from './backtest-report.js';
import type { Stat } from './stats.js';

export const esc = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);
const money = (x: number) =>
  `${x < 0 ? '−' : ''}$${Math.abs(x).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
const fix = (x: number) => (Math.round(x * 10) / 10).toString();

/** "Nice" tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, n = 5): number[] {
  const span = hi - lo || 1;
  const raw = span / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => span / s <= n) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Math.round(v * 100) / 100);
  return out;
}

const W = 760;
const H = 300;
const M = { l: 80, r: 20, t: 20, b: 40 };

function fanChart(r: BacktestReport): string {
  const pts = r.equity_by_day;
  if (pts.length === 0) return '';
  let lo = Math.min(0, ...pts.map((p) => p.p5));
  let hi = Math.max(0, ...pts.map((p) => p.p95));
  if (hi - lo < 1) {
    lo -= 1;
    hi += 1;
  }
  const maxDay = Math.max(1, pts.length - 1);
  const x = (d: number) => M.l + (d / maxDay) * (W - M.l - M.r);
  const y = (v: number) => M.t + ((hi - v) / (hi - lo)) * (H - M.t - M.b);
  const band = [
    ...pts.map((p) => `${fix(x(p.day))},${fix(y(p.p95))}`),
    ...[...pts].reverse().map((p) => `${fix(x(p.day))},${fix(y(p.p5))}`),
  ].join(' ');
  const median = pts.map((p) => `${fix(x(p.day))},${fix(y(p.p50))}`).join(' ');
  const mean = pts.map((p) => `${fix(x(p.day))},${fix(y(p.mean))}`).join(' ');
  const yTicks = ticks(lo, hi)
    .map(
      (v) =>
        `<line x1="${M.l}" x2="${W - M.r}" y1="${fix(y(v))}" y2="${fix(y(v))}" class="grid"/><text x="${M.l - 6}" y="${fix(y(v) + 4)}" text-anchor="end">${esc(money(v))}</text>`,
    )
    .join('');
  const xTicks = ticks(0, maxDay, Math.min(10, maxDay))
    .filter((d) => Number.isInteger(d))
    .map((d) => `<text x="${fix(x(d))}" y="${H - M.b + 18}" text-anchor="middle">${d}</text>`)
    .join('');
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="equity fan chart">
${yTicks}${xTicks}
<line x1="${M.l}" x2="${W - M.r}" y1="${fix(y(0))}" y2="${fix(y(0))}" class="zero"/>
<polygon points="${band}" class="fan"/>
<polyline points="${median}" class="median"/>
<polyline points="${mean}" class="mean"/>
<text x="${(W + M.l) / 2}" y="${H - 4}" text-anchor="middle">day</text>
</svg>`;
}

function histogram(r: BacktestReport): string {
  const bins = r.pnl_histogram;
  if (bins.length === 0) return '';
  const maxCount = Math.max(1, ...bins.map((b) => b.count));
  const lo = bins[0]!.lo;
  const hi = bins[bins.length - 1]!.hi;
  const x = (v: number) => M.l + ((v - lo) / (hi - lo || 1)) * (W - M.l - M.r);
  const y = (c: number) => M.t + (1 - c / maxCount) * (H - M.t - M.b);
  const bars = bins
    .map((b) => {
      const cls = b.hi <= 0 ? 'loss' : b.lo >= 0 ? 'gain' : 'mixed';
      return `<rect x="${fix(x(b.lo) + 0.5)}" y="${fix(y(b.count))}" width="${fix(Math.max(0.5, x(b.hi) - x(b.lo) - 1))}" height="${fix(H - M.b - y(b.count))}" class="${cls}"><title>${esc(`${money(b.lo)} to ${money(b.hi)}: ${b.count} paths`)}</title></rect>`;
    })
    .join('');
  const xTicks = ticks(lo, hi)
    .map((v) => `<text x="${fix(x(v))}" y="${H - M.b + 18}" text-anchor="middle">${esc(money(v))}</text>`)
    .join('');
  const yTicks = ticks(0, maxCount, 4)
    .map(
      (c) =>
        `<line x1="${M.l}" x2="${W - M.r}" y1="${fix(y(c))}" y2="${fix(y(c))}" class="grid"/><text x="${M.l - 6}" y="${fix(y(c) + 4)}" text-anchor="end">${c}</text>`,
    )
    .join('');
  const zero =
    lo < 0 && hi > 0
      ? `<line x1="${fix(x(0))}" x2="${fix(x(0))}" y1="${M.t}" y2="${H - M.b}" class="zero"/>`
      : '';
  return `<svg viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="histogram of final P&amp;L">
${yTicks}${bars}${zero}${xTicks}
<text x="${(W + M.l) / 2}" y="${H - 4}" text-anchor="middle">net P&amp;L at the end (USD); paths per bin</text>
</svg>`;
}

function statRow(name: string, s: Stat, fmt: (x: number) => string = money): string {
  return `<tr><th>${esc(name)}</th>${[s.mean, s.stdev, s.p5, s.p50, s.p95].map((v) => `<td>${esc(fmt(v))}</td>`).join('')}</tr>`;
}

export function renderHtml(r: BacktestReport): string {
  const s = r.summary;
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const packRows = [...r.per_pack]
    .sort((x, y) => y.packs_opened_mean - x.packs_opened_mean)
    .map(
      (
        p,
      ) => `<tr><td>${esc(p.category)}</td><td>${esc(p.pack_type)}</td><td>${esc(p.risk_level)}</td><td>${esc(money(p.price_usd))}</td>
<td>${p.ev_usd === null ? '–' : esc(money(p.ev_usd))}</td><td>${p.realized_ev_usd === null ? '–' : esc(money(p.realized_ev_usd))}</td>
<td>${p.value_per_pack_usd === null ? '–' : esc(money(p.value_per_pack_usd))}</td><td>${p.packs_opened_mean.toFixed(1)}</td>
<td>${pct(p.share_of_packs)}</td><td class="reason">${esc(p.decision)}</td></tr>`,
    )
    .join('\n');
  const a = r.analytic;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>packbot backtest: ${esc(r.strategy.name)}</title>
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1100px;color:#1d2330;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
.meta{color:#5a6372}.partial{background:#fff3cd;border:1px solid #e0b100;padding:8px 12px;border-radius:6px}
table{border-collapse:collapse;margin:8px 0}th,td{padding:4px 10px;border-bottom:1px solid #e3e6eb;text-align:right}
th:first-child,td:first-child{text-align:left}table.packs td:nth-child(-n+3),table.packs th:nth-child(-n+3){text-align:left}thead th{background:#f4f6f9}td.reason{text-align:left;color:#5a6372;max-width:320px}
svg{background:#fff;border:1px solid #e3e6eb;border-radius:6px;max-width:100%;height:auto}
svg text{font-size:11px;fill:#5a6372}.grid{stroke:#eef0f3}.zero{stroke:#888;stroke-dasharray:4 3}
.fan{fill:#4c78a8;fill-opacity:.22;stroke:none}.median{fill:none;stroke:#1f4e8c;stroke-width:2}.mean{fill:none;stroke:#e45756;stroke-width:1.5;stroke-dasharray:5 3}
.loss{fill:#e45756}.gain{fill:#54a24b}.mixed{fill:#9d9d9d}.legend span{display:inline-block;margin-right:16px}
.sw{display:inline-block;width:14px;height:10px;margin-right:4px;vertical-align:middle}
.cards{display:flex;gap:12px;flex-wrap:wrap}.card{border:1px solid #e3e6eb;border-radius:8px;padding:10px 14px;min-width:150px}
.card b{display:block;font-size:20px}
</style></head><body>
<h1>Backtest: ${esc(r.strategy.name)}</h1>
<div class="meta">${esc(r.strategy.source)} on snapshot ${esc(r.snapshot.source)} (taken ${esc(r.snapshot.taken_at)}, ${r.snapshot.pools} pools) ·
${esc(r.market)} market · ${r.paths} paths × ${r.days} days · seed ${r.seed} · start balance ${esc(money(r.start_balance_usd))} · ${(r.elapsed_ms / 1000).toFixed(1)} s</div>
${r.partial ? `<p class="partial">Interrupted: ${r.paths} of ${r.paths_requested} paths completed. Results are partial.</p>` : ''}
<div class="cards" style="margin-top:16px">
<div class="card">median net P&amp;L<b>${esc(money(s.net_pnl_usd.p50))}</b></div>
<div class="card">mean net P&amp;L<b>${esc(money(s.net_pnl_usd.mean))}</b></div>
<div class="card">P(loss)<b>${pct(s.p_loss)}</b></div>
<div class="card">P(ruin)<b>${pct(s.p_ruin)}</b></div>
<div class="card">mean ROI<b>${pct(s.roi.mean)}</b></div>
</div>
<h2>Equity over time (net P&amp;L, cash + holdings at sell-back value)</h2>
<div class="legend"><span><i class="sw" style="background:#4c78a8;opacity:.35"></i>p5–p95</span><span><i class="sw" style="background:#1f4e8c"></i>median</span><span><i class="sw" style="background:#e45756"></i>mean</span></div>
${fanChart(r)}
<h2>Final P&amp;L across paths</h2>
${histogram(r)}
<h2>Summary</h2>
<table><thead><tr><th></th><th>mean</th><th>stdev</th><th>p5</th><th>p50</th><th>p95</th></tr></thead><tbody>
${statRow('packs opened', s.packs_opened, (x) => x.toFixed(1))}
${statRow('spend', s.spend_usd)}
${statRow('sell-back payouts', s.payout_usd)}
${statRow('listing proceeds', s.listing_proceeds_usd)}
${statRow('holdings at end', s.holdings_value_usd)}
${statRow('net P&L', s.net_pnl_usd)}
${statRow('ROI', s.roi, pct)}
${statRow('max drawdown', s.max_drawdown_usd)}
</tbody></table>
<p class="meta">Scorer: EV ${a.ev_per_pack === null ? '–' : esc(money(a.ev_per_pack))} per pack, realized EV ${a.realized_ev_per_pack === null ? '–' : esc(money(a.realized_ev_per_pack))} at the orders (${a.realized_ev_at_snapshot_per_pack === null ? '–' : esc(money(a.realized_ev_at_snapshot_per_pack))} on the snapshot);
backtest value per pack ${a.backtest_value_per_pack === null ? '–' : `${esc(money(a.backtest_value_per_pack))} ± ${esc(money(a.backtest_value_per_pack_stderr ?? 0))}`}.
Most packs opened on one UTC day: ${s.max_packs_per_utc_day} (ceiling ${r.limits.max_packs_per_day}).</p>
<h2>Per pack</h2>
<table class="packs"><thead><tr><th>category</th><th>pack</th><th>risk</th><th>price</th><th>EV</th><th>realized EV</th><th>backtest value / pack</th><th>packs / path</th><th>share</th><th>scorer decision</th></tr></thead><tbody>
${packRows}
</tbody></table>
${r.cards ? cardsSection(r.cards) : ''}</body></html>
`;
}

/** The shop cards' rows (strategies that buy cards), apart from the packs'. */
function cardsSection(c: NonNullable<BacktestReport['cards']>): string {
  const notice = c.notice ? `<p class="partial">Cards: ${esc(c.notice)}</p>\n` : '';
  if (!c.backtested) return `<h2>Shop cards</h2>\n${notice}`;
  const cats = (c.per_category ?? [])
    .map(
      (x) =>
        `<tr><td>${esc(x.category)}</td><td>${x.bought_mean.toFixed(2)}</td><td>${esc(money(x.outlay_usd_mean))}</td><td>${esc(money(x.value_usd_mean))}</td><td>${esc(money(x.net_usd_mean))}</td></tr>`,
    )
    .join('\n');
  return `<h2>Shop cards</h2>
${notice}<table><thead><tr><th></th><th>mean</th><th>stdev</th><th>p5</th><th>p50</th><th>p95</th></tr></thead><tbody>
${statRow('cards bought', c.bought!, (x) => x.toFixed(1))}
${statRow('card spend', c.spend_usd!)}
${statRow('card fees', c.fees_usd!)}
${statRow('card proceeds', c.proceeds_usd!)}
${statRow('card holdings at end', c.holdings_value_usd!)}
${statRow('card net P&L', c.net_pnl_usd!)}
</tbody></table>
<p class="meta">Proceeds: listing sales ${esc(money(c.listing_proceeds_usd!.mean))}, sell-backs ${esc(money(c.sell_back_usd!.mean))} (means per path). Most cards bought on one UTC day: ${c.max_cards_per_utc_day}.</p>
<table><thead><tr><th>category</th><th>cards / path</th><th>outlay (price + fee)</th><th>proceeds + holdings</th><th>net</th></tr></thead><tbody>
${cats}
</tbody></table>
`;
}
