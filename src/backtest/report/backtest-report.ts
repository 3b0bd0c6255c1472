/**
 * The `packbot.backtest/v1` report: distributions over paths (USD at the boundary), the scorer's
 * analytic numbers for comparison, a per-pack breakdown, the equity fan and the P&L histogram.
 * Every aggregate is computed in path-index order from integer cents, so it does not depend on
 * how the paths were spread over workers.
 */
import { roundHalfAway } from '../../core/money.js';
import type { ModelJson } from '../../strategy/model-gap.js';
import {
  CARD_CATEGORY_FIELDS,
  CARD_TOTALS,
  cardWidth,
  type MarketKind,
  POOL_FIELDS,
  TOTALS,
} from '../path/path-io.js';
import { modelBlock } from '../path/path-model.js';
import { describe, quantile, type Stat } from './stats.js';

export const BACKTEST_FORMAT = 'packbot.backtest/v1';

export interface PackBreakdown {
  category: string;
  pack_type: string;
  risk_level: string;
  price_usd: number;
  ev_usd: number | null;
  realized_ev_usd: number | null;
  /** The scorer's realized EV per pack of this pool when the paths opened it (its rows then). */
  realized_ev_at_open_usd: number | null;
  /** What the scorer decided without a balance (open or wait: reason). */
  decision: string;
  packs_opened_mean: number;
  share_of_packs: number;
  spend_usd_mean: number;
  /** Value realized per pack opened (sell-backs, sales, holdings at the end), over all paths. */
  value_per_pack_usd: number | null;
  net_per_pack_usd: number | null;
}

export interface BacktestReport {
  format: typeof BACKTEST_FORMAT;
  paths: number;
  paths_requested: number;
  days: number;
  seed: number;
  market: 'static' | 'dynamic';
  strategy: { name: string; source: string };
  snapshot: { source: string; taken_at: string; pools: number };
  start_balance_usd: number;
  limits: { max_packs_per_day: number; min_seconds_between_purchases: number; packs_left_first_day: number };
  summary: {
    packs_opened: Stat;
    spend_usd: Stat;
    payout_usd: Stat;
    listing_proceeds_usd: Stat;
    holdings_value_usd: Stat;
    net_pnl_usd: Stat;
    roi: Stat;
    max_drawdown_usd: Stat;
    p_ruin: number;
    p_loss: number;
    /** Most packs any path opened on one UTC day (never above the account's ceiling). */
    max_packs_per_utc_day: number;
  };
  analytic: {
    /** The scorer's EV per pack on the snapshot's pools, weighted by the packs the paths opened. */
    ev_per_pack: number | null;
    /**
     * The scorer's realized EV per pack of what the paths opened, each order at the row it was
     * opened on (the pools as they were then): what the strategy expected to realize.
     */
    realized_ev_per_pack: number | null;
    /** The same on the snapshot's pools (what `packbot score` shows), weighted by packs opened. */
    realized_ev_at_snapshot_per_pack: number | null;
    /** The backtest's own value per pack opened, and its standard error. */
    backtest_value_per_pack: number | null;
    backtest_value_per_pack_stderr: number | null;
    /** backtest value − scorer realized EV per pack (both of the same orders), and its standard error. */
    scorer_gap_per_pack: number | null;
    scorer_gap_per_pack_stderr: number | null;
  };
  per_pack: PackBreakdown[];
  /**
   * Expected vs realized over every path's orders, the block `packbot report --json` has
   * (docs/model-drift.md): each order against the row it was opened on, listings still running at
   * the end marked by the model.
   */
  model: ModelJson;
  /** Shop cards (only when the strategy buys cards): kept apart from the pack rows above. */
  cards?: CardsReport;
  equity_by_day: { day: number; mean: number; p5: number; p50: number; p95: number }[];
  pnl_histogram: { lo: number; hi: number; count: number }[];
  elapsed_ms: number;
  partial: boolean;
}

/**
 * The card rows. `backtested` false: the notice says why (no shop in the snapshot, static market)
 * and no figures follow. Amounts per path; `proceeds_usd` = listing sales (net of the seller fee)
 * + sell-backs of bought cards; `holdings_value_usd` = bought cards still held at the end (kept
 * ones at market value, listed ones at their sell-back value); `net_pnl_usd` = proceeds +
 * holdings − spend − fees.
 */
export interface CardsReport {
  backtested: boolean;
  notice: string | null;
  bought?: Stat;
  spend_usd?: Stat;
  fees_usd?: Stat;
  listing_proceeds_usd?: Stat;
  sell_back_usd?: Stat;
  proceeds_usd?: Stat;
  holdings_value_usd?: Stat;
  net_pnl_usd?: Stat;
  /** Most cards any path bought on one UTC day. */
  max_cards_per_utc_day?: number;
  per_category?: {
    category: string;
    bought_mean: number;
    /** Price + fee, mean per path. */
    outlay_usd_mean: number;
    /** Proceeds + holdings at the end, mean per path. */
    value_usd_mean: number;
    net_usd_mean: number;
  }[];
}

const usd = (cents: number): number => roundHalfAway(cents) / 100;
const r6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** Collected per-path arrays, indexed by path. */
export interface Collected {
  done: Uint8Array;
  totals: Float64Array;
  equity: Float64Array;
  pools: Float64Array;
  maxDaily: Float64Array;
  /** Card rows, `cardWidth(context.cards)` per path (empty when cards are not backtested). */
  cards: Float64Array;
  /** Expected vs realized sums (path-model.ts), per path and per pool per path. */
  model: Float64Array;
  modelPools: Float64Array;
}

/**
 * What a report needs of the run besides the per-path arrays: plain data, so a shard can carry
 * it in its JSON and `packbot merge` builds the very report the unsharded run builds.
 */
export interface ReportContext {
  days: number;
  seed: number;
  market: MarketKind;
  strategyName: string;
  /** The strategy's version (strategy-digest.ts), named by the model block. */
  strategyDigest: string;
  takenAt: string;
  startBalanceCents: number;
  limits: BacktestReport['limits'];
  pools: ReportPool[];
  /** Present when the strategy buys cards (absent: a report as without the shop). */
  cards?: { backtested: boolean; notice: string | null; categories: string[] };
}

/** A pool as the report shows it: the scorer's row on the snapshot (null: nothing to pull). */
export interface ReportPool {
  category: string;
  packType: string;
  risk: string;
  priceCents: number;
  ev: number | null;
  realizedEv: number | null;
  decision: string;
}

export interface ReportInput {
  context: ReportContext;
  collected: Collected;
  requested: number;
  partial: boolean;
  strategyLabel: string;
  snapshotLabel: string;
  elapsedMs: number;
}

export function buildReport(input: ReportInput): BacktestReport {
  const { context: ctx, collected: c } = input;
  const days = ctx.days;
  const nPools = ctx.pools.length;
  const idx: number[] = [];
  for (let i = 0; i < c.done.length; i++) if (c.done[i]) idx.push(i);
  const n = idx.length;
  const col = (k: number) => Float64Array.from(idx, (i) => c.totals[i * TOTALS + k]!);
  const packs = col(0);
  const spend = col(1);
  const net = col(5);
  // Cards bought are spend too: ROI is over everything paid (packs, card prices and fees).
  const cw = cardWidth(ctx.cards);
  const outlay =
    cw > 0
      ? Float64Array.from(idx, (i, j) => spend[j]! + c.cards[i * cw + 1]! + c.cards[i * cw + 2]!)
      : spend;
  const roi = Float64Array.from(idx, (_, j) => (outlay[j]! > 0 ? net[j]! / outlay[j]! : 0));
  let ruined = 0;
  let losing = 0;
  let maxDaily = 0;
  for (let j = 0; j < n; j++) {
    const i = idx[j]!;
    if (c.totals[i * TOTALS + 7]) ruined++;
    if (net[j]! < 0) losing++;
    maxDaily = Math.max(maxDaily, c.maxDaily[i]!);
  }

  // Per pool: integer cents summed in path order.
  const pPacks = new Float64Array(nPools);
  const pSpend = new Float64Array(nPools);
  const pValue = new Float64Array(nPools);
  const pExpected = new Float64Array(nPools);
  for (const i of idx)
    for (let p = 0; p < nPools; p++) {
      const o = (i * nPools + p) * POOL_FIELDS;
      pPacks[p] = pPacks[p]! + c.pools[o]!;
      pSpend[p] = pSpend[p]! + c.pools[o + 1]!;
      pValue[p] = pValue[p]! + c.pools[o + 2]!;
      pExpected[p] = pExpected[p]! + c.pools[o + 3]!;
    }
  let allPacks = 0;
  for (let p = 0; p < nPools; p++) allPacks += pPacks[p]!;
  let evW = 0;
  let revW = 0;
  let valueAll = 0;
  let expectedAll = 0;
  const perPack: PackBreakdown[] = ctx.pools.map((pool, p) => {
    const k = pPacks[p]!;
    if (pool.ev !== null && pool.realizedEv !== null && k > 0) {
      evW += pool.ev * k;
      revW += pool.realizedEv * k;
    }
    valueAll += pValue[p]!;
    expectedAll += pExpected[p]!;
    return {
      category: pool.category,
      pack_type: pool.packType,
      risk_level: pool.risk,
      price_usd: usd(pool.priceCents),
      ev_usd: pool.ev,
      realized_ev_usd: pool.realizedEv,
      realized_ev_at_open_usd: k > 0 ? r6(pExpected[p]! / k / 100) : null,
      decision: pool.decision,
      packs_opened_mean: n > 0 ? r6(k / n) : 0,
      share_of_packs: allPacks > 0 ? r6(k / allPacks) : 0,
      spend_usd_mean: n > 0 ? usd(pSpend[p]! / n) : 0,
      value_per_pack_usd: k > 0 ? r6(pValue[p]! / k / 100) : null,
      net_per_pack_usd: k > 0 ? r6((pValue[p]! - pSpend[p]!) / k / 100) : null,
    };
  });

  const stderr = perPackStderr(c, idx, nPools, 2);
  const gapStderr = perPackStderr(c, idx, nPools, 2, 3);

  const equity: BacktestReport['equity_by_day'] = [];
  for (let d = 0; d <= days; d++) {
    const v = Float64Array.from(idx, (i) => c.equity[i * (days + 1) + d]! - ctx.startBalanceCents);
    const s = describe(v, 100);
    equity.push({ day: d, mean: s.mean, p5: s.p5, p50: s.p50, p95: s.p95 });
  }

  return {
    format: BACKTEST_FORMAT,
    paths: n,
    paths_requested: input.requested,
    days,
    seed: ctx.seed,
    market: ctx.market,
    strategy: { name: ctx.strategyName, source: input.strategyLabel },
    snapshot: { source: input.snapshotLabel, taken_at: ctx.takenAt, pools: nPools },
    start_balance_usd: usd(ctx.startBalanceCents),
    limits: { ...ctx.limits },
    summary: {
      packs_opened: describe(packs),
      spend_usd: describe(spend, 100),
      payout_usd: describe(col(2), 100),
      listing_proceeds_usd: describe(col(3), 100),
      holdings_value_usd: describe(col(4), 100),
      net_pnl_usd: describe(net, 100),
      roi: describe(roi, 1, 6),
      max_drawdown_usd: describe(col(6), 100),
      p_ruin: n > 0 ? r6(ruined / n) : 0,
      p_loss: n > 0 ? r6(losing / n) : 0,
      max_packs_per_utc_day: maxDaily,
    },
    analytic: {
      ev_per_pack: allPacks > 0 ? r6(evW / allPacks) : null,
      realized_ev_per_pack: allPacks > 0 ? r6(expectedAll / allPacks / 100) : null,
      realized_ev_at_snapshot_per_pack: allPacks > 0 ? r6(revW / allPacks) : null,
      backtest_value_per_pack: allPacks > 0 ? r6(valueAll / allPacks / 100) : null,
      backtest_value_per_pack_stderr: stderr,
      scorer_gap_per_pack: allPacks > 0 ? r6((valueAll - expectedAll) / allPacks / 100) : null,
      scorer_gap_per_pack_stderr: gapStderr,
    },
    per_pack: perPack,
    model: modelBlock(c.model, c.modelPools, idx, ctx.pools, {
      name: ctx.strategyName,
      digest: ctx.strategyDigest,
    }),
    ...(ctx.cards ? { cards: cardsReport(ctx.cards, c, idx) } : {}),
    equity_by_day: equity,
    pnl_histogram: histogram(net),
    elapsed_ms: input.elapsedMs,
    partial: input.partial,
  };
}

function cardsReport(setup: NonNullable<ReportContext['cards']>, c: Collected, idx: number[]): CardsReport {
  if (!setup.backtested) return { backtested: false, notice: setup.notice };
  const w = cardWidth(setup);
  const n = idx.length;
  const col = (k: number) => Float64Array.from(idx, (i) => c.cards[i * w + k]!);
  const sales = col(3);
  const sellBacks = col(4);
  let most = 0;
  for (const i of idx) most = Math.max(most, c.cards[i * w + 7]!);
  const mean = (k: number) => {
    let t = 0;
    for (const i of idx) t += c.cards[i * w + k]!;
    return n > 0 ? t / n : 0;
  };
  return {
    backtested: true,
    notice: setup.notice,
    bought: describe(col(0)),
    spend_usd: describe(col(1), 100),
    fees_usd: describe(col(2), 100),
    listing_proceeds_usd: describe(sales, 100),
    sell_back_usd: describe(sellBacks, 100),
    proceeds_usd: describe(
      Float64Array.from(sales, (x, j) => x + sellBacks[j]!),
      100,
    ),
    holdings_value_usd: describe(col(5), 100),
    net_pnl_usd: describe(col(6), 100),
    max_cards_per_utc_day: most,
    per_category: setup.categories.map((category, k) => {
      const o = CARD_TOTALS + CARD_CATEGORY_FIELDS * k;
      return {
        category,
        bought_mean: r6(mean(o)),
        outlay_usd_mean: usd(mean(o + 1)),
        value_usd_mean: usd(mean(o + 2)),
        net_usd_mean: usd(mean(o + 2) - mean(o + 1)),
      };
    }),
  };
}

/**
 * Standard error (USD) of a per-pack ratio Σ x / Σ packs over paths (ratio estimator), where x is
 * pool field `field`, less field `minus` when given; null with fewer than two paths or no pack.
 */
function perPackStderr(
  c: Collected,
  idx: number[],
  nPools: number,
  field: number,
  minus?: number,
): number | null {
  const n = idx.length;
  if (n < 2) return null;
  const x = new Float64Array(n);
  const k = new Float64Array(n);
  let sx = 0;
  let sk = 0;
  idx.forEach((i, j) => {
    for (let p = 0; p < nPools; p++) {
      const o = (i * nPools + p) * POOL_FIELDS;
      k[j] = k[j]! + c.pools[o]!;
      x[j] = x[j]! + c.pools[o + field]! - (minus === undefined ? 0 : c.pools[o + minus]!);
    }
    sx += x[j]!;
    sk += k[j]!;
  });
  if (!(sk > 0)) return null;
  const ratio = sx / sk;
  let ss = 0;
  for (let j = 0; j < n; j++) ss += (x[j]! - ratio * k[j]!) ** 2;
  return r6(Math.sqrt(ss / (n - 1) / n) / (sk / n) / 100);
}

/** Final P&L in about 30 bins between the 0.5th and 99.5th percentiles (tails go to the end bins). */
function histogram(netCents: Float64Array): BacktestReport['pnl_histogram'] {
  if (netCents.length === 0) return [];
  const sorted = Float64Array.from(netCents).sort();
  let lo = quantile(sorted, 0.005);
  let hi = quantile(sorted, 0.995);
  if (hi <= lo) {
    lo -= 100;
    hi += 100;
  }
  const bins = 30;
  const w = (hi - lo) / bins;
  const counts = new Array<number>(bins).fill(0);
  for (const v of netCents) {
    const b = Math.min(bins - 1, Math.max(0, Math.floor((v - lo) / w)));
    counts[b]!++;
  }
  return counts.map((count, b) => ({ lo: usd(lo + b * w), hi: usd(lo + (b + 1) * w), count }));
}
