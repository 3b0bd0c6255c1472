/**
 * From a row's runs to its comparisons: each view's gap, standard error and 2% floor, and whether
 * this world can judge it. Pure: reports and per-run totals in, comparisons out.
 */
import type { BacktestReport } from '../src/backtest/report/backtest-report.js';
import { DRIFT_MIN_PACKS, type GapJson } from '../src/strategy/model-gap.js';
import { type Comparison, meanVar, RELATIVE_FLOOR, seDiff, type View } from './judge.js';

/** Why a figure a strategy of another market cannot promise is shown but not judged. */
export const OTHER_MARKET = "priced on another market than this world's";

/**
 * The static and dynamic backtests' comparisons. `believes`: the strategy's listing life is this
 * world's (worlds.ts, `believes`); otherwise what depends on it (the dynamic per-pack figure, the
 * model's total and listing part) is shown, not judged: the scorer prices listings on the market
 * the strategy describes, and the static market sells them by that very model, the dynamic one by
 * the world's. The sell-back and held parts do not depend on it and are judged always.
 */
export function backtestComparisons(
  staticReport: BacktestReport,
  dynamic: BacktestReport,
  believes: boolean,
): Comparison[] {
  const other = believes ? null : OTHER_MARKET;
  const m = dynamic.model;
  // The static market ends a listing by its own clock (a constant hazard within max_days), not by
  // the listing life's: its open listings at the end are not what the model's marks assume.
  const staticOpen = openPulls(staticReport);
  return [
    perPack('static', staticReport, null),
    modelTotal('static-model', staticReport, staticOpen),
    perPack('dynamic', dynamic, other),
    modelTotal('model', dynamic, other),
    modelPart('model-sell-back', m.parts.sell_back, null),
    modelPart('model-listing', m.parts.listing, other),
    modelPart('model-held', m.parts.held, null),
  ];
}

/**
 * Open pulls at the end beyond which a per-pack figure is not judged: the report's value per pack
 * counts a listing still running at its sell-back offer, below what the scorer promised of it (the
 * dynamic model block marks it by the model instead, and is judged). At 1% the bias is a fraction
 * of the 2% floor.
 */
const OPEN_SHARE = 0.01;

/** Why a figure is not judged when more than OPEN_SHARE of its pulls are open at the end; else null. */
function openPulls(r: BacktestReport): string | null {
  const open = r.model.open_pulls / Math.max(1, r.model.packs);
  return open > OPEN_SHARE ? `${(100 * open).toFixed(0)}% of the pulls still open at the end` : null;
}

/** Too few packs for a standard error to mean much: the drift alarm's own minimum. */
const TOO_FEW = `fewer than ${DRIFT_MIN_PACKS} packs`;

/**
 * The backtest's value per pack against the scorer's realized EV of the rows its orders were
 * opened on, with the standard error of their per-path difference (ratio estimator over paths).
 */
function perPack(view: View, r: BacktestReport, unjudged: string | null): Comparison {
  const a = r.analytic;
  const packs = r.summary.packs_opened.mean * r.paths;
  if (a.realized_ev_per_pack === null || a.scorer_gap_per_pack === null)
    return { view, gap: 0, se: 0, floor: 0, unjudged: 'opens nothing' };
  return {
    view,
    gap: a.scorer_gap_per_pack,
    se: a.scorer_gap_per_pack_stderr ?? 0,
    floor: RELATIVE_FLOOR * Math.abs(a.realized_ev_per_pack),
    unjudged: unjudged ?? (packs < DRIFT_MIN_PACKS ? TOO_FEW : openPulls(r)),
  };
}

/**
 * The model block's total over every path's orders (docs/model-drift.md); the floor is 2% of what
 * the orders were promised before their price (the per-pack figure's floor, over its packs).
 */
function modelTotal(view: View, r: BacktestReport, unjudged: string | null): Comparison {
  const m = r.model;
  if (m.packs === 0) return { view, gap: 0, se: 0, floor: 0, unjudged: 'opens nothing' };
  return {
    view,
    gap: m.gap_usd,
    se: m.se_usd,
    floor: RELATIVE_FLOOR * Math.abs((r.analytic.realized_ev_per_pack ?? 0) * m.packs),
    unjudged: unjudged ?? (m.packs < DRIFT_MIN_PACKS ? TOO_FEW : null),
  };
}

/** One part of the model block; its expectation is already gross of the price. */
function modelPart(view: View, part: GapJson, unjudged: string | null): Comparison {
  if (part.pulls === 0 && part.se_usd === 0 && part.expected_net_usd === 0)
    return { view, gap: 0, se: 0, floor: 0, unjudged: 'no pull went this way' };
  const count = view === 'model-listing' ? part.pulls : part.packs;
  return {
    view,
    gap: part.gap_usd,
    se: part.se_usd,
    floor: RELATIVE_FLOOR * Math.abs(part.expected_net_usd),
    unjudged: unjudged ?? (count < DRIFT_MIN_PACKS ? TOO_FEW : null),
  };
}

/** Per-run totals of the live bot's runs or the backtest's paths (cents, packs). */
export interface RunTotals {
  packs: number;
  spendCents: number;
  netCents: number;
}

/**
 * The bot live against the dynamic backtest of the same world and horizon: packs opened per run
 * and net P&L per run (cash and holdings, cards included), each within the standard error of the
 * difference of the two means; the floor is 2% of the backtest's packs, or of its spend for the
 * net.
 */
export function liveComparisons(bot: readonly RunTotals[], backtest: readonly RunTotals[]): Comparison[] {
  const a = meanVar(bot.map((x) => x.packs));
  const b = meanVar(backtest.map((x) => x.packs));
  const an = meanVar(bot.map((x) => x.netCents / 100));
  const bn = meanVar(backtest.map((x) => x.netCents / 100));
  const spend = meanVar(backtest.map((x) => x.spendCents / 100)).mean;
  return [
    {
      view: 'live-packs',
      gap: a.mean - b.mean,
      se: seDiff(a, b),
      floor: RELATIVE_FLOOR * b.mean,
      unjudged: null,
    },
    {
      view: 'live-net',
      gap: an.mean - bn.mean,
      se: seDiff(an, bn),
      floor: RELATIVE_FLOOR * Math.abs(spend),
      unjudged: null,
    },
  ];
}
