/** Terminal output of a backtest: a progress bar (TTY only) and a short summary. */
import type { BacktestReport } from './backtest-report.js';
import type { Stat } from './stats.js';

export function progressBar(done: number, total: number, width = 30): string {
  const f = total > 0 ? done / total : 1;
  const n = Math.round(f * width);
  return `[${'#'.repeat(n)}${'.'.repeat(width - n)}] ${done}/${total} paths`;
}

const money = (x: number) => `${x < 0 ? '-' : ''}$${Math.abs(x).toFixed(2)}`;
const line = (name: string, s: Stat, fmt: (x: number) => string = money) =>
  `  ${name.padEnd(20)} mean ${fmt(s.mean).padStart(11)}  p5 ${fmt(s.p5).padStart(11)}  p50 ${fmt(s.p50).padStart(11)}  p95 ${fmt(s.p95).padStart(11)}`;

export function terminalSummary(r: BacktestReport): string {
  const s = r.summary;
  const a = r.analytic;
  const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
  const out = [
    `backtest ${r.strategy.name} on ${r.snapshot.source} (${r.market} market): ${r.paths} paths x ${r.days} days, seed ${r.seed}${r.partial ? '  [PARTIAL: interrupted]' : ''}`,
    line('packs opened', s.packs_opened, (x) => x.toFixed(1)),
    line('spend', s.spend_usd),
    line('sell-back payouts', s.payout_usd),
    line('listing proceeds', s.listing_proceeds_usd),
    line('holdings at end', s.holdings_value_usd),
    line('net P&L', s.net_pnl_usd),
    line('ROI', s.roi, pct),
    line('max drawdown', s.max_drawdown_usd),
    `  P(loss) ${pct(s.p_loss)}   P(ruin) ${pct(s.p_ruin)}   most packs on one UTC day ${s.max_packs_per_utc_day}`,
    a.realized_ev_per_pack === null
      ? '  no pack was opened'
      : `  per pack: scorer realized EV ${money(a.realized_ev_per_pack)} at the orders (${money(a.realized_ev_at_snapshot_per_pack ?? 0)} on the snapshot), backtest ${money(a.backtest_value_per_pack ?? 0)} ± ${money(a.backtest_value_per_pack_stderr ?? 0)} (${gap(a)})`,
    ...modelLines(r.model),
    ...(r.cards ? cardLines(r.cards) : []),
    `  elapsed ${(r.elapsed_ms / 1000).toFixed(1)} s`,
  ];
  return `${out.join('\n')}\n`;
}

/** The backtest's departure from the scorer, as a share of the scorer's number. */
function gap(a: BacktestReport['analytic']): string {
  const expected = a.realized_ev_per_pack ?? 0;
  const diff = a.scorer_gap_per_pack ?? 0;
  if (!(expected > 0)) return `gap ${money(diff)}`;
  const sign = diff >= 0 ? '+' : '';
  return `gap ${sign}${((100 * diff) / expected).toFixed(1)}% ± ${((100 * (a.scorer_gap_per_pack_stderr ?? 0)) / expected).toFixed(1)}%`;
}

/** Expected vs realized (the JSON's `model` block), per path summed: z of the whole and each part. */
function modelLines(m: BacktestReport['model']): string[] {
  if (m.orders === 0) return [];
  const z = (x: number | null) => (x === null ? '-' : `${x >= 0 ? '+' : ''}${x.toFixed(2)}`);
  return [
    `  model: gap ${money(m.gap_usd)} ± ${money(m.se_usd)} over ${m.packs} packs, z ${z(m.z)}; ` +
      `sell-back z ${z(m.parts.sell_back.z)}, listing z ${z(m.parts.listing.z)} (${m.parts.listing.pulls} listed), ` +
      `held z ${z(m.parts.held.z)}`,
  ];
}

/** The shop cards' rows (strategies that buy cards), after the packs'. */
function cardLines(c: NonNullable<BacktestReport['cards']>): string[] {
  const out = c.notice ? [`  WARNING cards: ${c.notice}`] : [];
  if (!c.backtested) return out;
  out.push(
    line('cards bought', c.bought!, (x) => x.toFixed(1)),
    line('card spend', c.spend_usd!),
    line('card fees', c.fees_usd!),
    line('card proceeds', c.proceeds_usd!),
    line('card holdings at end', c.holdings_value_usd!),
    line('card net P&L', c.net_pnl_usd!),
    `  cards by category: ${(c.per_category ?? [])
      .map((x) => `${x.category} ${x.bought_mean.toFixed(1)} bought, net ${money(x.net_usd_mean)}`)
      .join('; ')}   most cards on one UTC day ${c.max_cards_per_utc_day}`,
  );
  return out;
}
