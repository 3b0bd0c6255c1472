/**
 * The value index's walk from successive snapshots. Shop stock is priced at its market value
 * times the shop's markup, and every shop card of a category moves by its category's index (the
 * world's law), so the log ratio of one card's market value between two snapshots is the index's
 * log move: the median over the cards seen in both (worth at least MIN_VALUE so that cent
 * rounding is noise) is one observation per category and interval. Pooled over categories, they
 * give the daily volatility and trend. Pool cards are used only for a snapshot without shop
 * stock: the simulator keeps a pool card's value fixed until someone pulls it.
 */
import type { SnapshotFile } from '../../api/snapshot-schema.js';

const DAY_MS = 86_400_000;
/** Cards worth less than this (USD) are left out: a cent is too large a share of their value. */
const MIN_VALUE = 5;

export interface IndexMove {
  category: string;
  /** Log move of the category's index over the interval, and the interval in days. */
  logMove: number;
  days: number;
  /** Cards seen in both snapshots (the median's sample). */
  cards: number;
}

export interface DriftEstimate {
  volatility: number;
  volatilityStderr: number;
  trend: number;
  trendStderr: number;
  /** Observations: category × interval moves. */
  moves: number;
  perCategory: { category: string; volatility: number; trend: number; moves: number }[];
}

/** Market values (USD) of the cards of one snapshot, by category then card id. */
function valuesOf(s: SnapshotFile): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  const put = (category: string, id: string, v: number) => {
    if (!(v >= MIN_VALUE)) return;
    let m = out.get(category);
    if (!m) {
      m = new Map();
      out.set(category, m);
    }
    m.set(id, v);
  };
  if (s.shop) for (const shop of s.shop) for (const c of shop.cards) put(shop.category, c.id, c.market_value);
  else for (const p of s.pools) for (const c of p.cards) put(p.category, c.id, c.market_value);
  return out;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** One move per category and pair of successive snapshots (sorted by time). */
export function indexMoves(series: readonly SnapshotFile[]): IndexMove[] {
  const moves: IndexMove[] = [];
  for (let k = 1; k < series.length; k++) {
    const a = valuesOf(series[k - 1]!);
    const b = valuesOf(series[k]!);
    const days = (Date.parse(series[k]!.taken_at) - Date.parse(series[k - 1]!.taken_at)) / DAY_MS;
    if (!(days > 0)) continue;
    for (const [category, before] of a) {
      const after = b.get(category);
      if (!after) continue;
      const logs: number[] = [];
      for (const [id, v] of before) {
        const w = after.get(id);
        if (w !== undefined) logs.push(Math.log(w / v));
      }
      if (logs.length > 0) moves.push({ category, logMove: median(logs), days, cards: logs.length });
    }
  }
  return moves;
}

/** Geometric Brownian motion fitted to moves: drift per day, then volatility from the residuals. */
function fitWalk(moves: readonly IndexMove[]): { volatility: number; trend: number; mu: number } {
  let sx = 0;
  let sd = 0;
  for (const m of moves) {
    sx += m.logMove;
    sd += m.days;
  }
  const mu = sd > 0 ? sx / sd : 0;
  let ss = 0;
  for (const m of moves) ss += (m.logMove - mu * m.days) ** 2;
  const n = moves.length;
  const variance = n > 1 && sd > 0 ? (ss / sd) * (n / (n - 1)) : 0;
  return { volatility: Math.sqrt(variance), trend: mu + variance / 2, mu };
}

export function estimateDrift(moves: readonly IndexMove[]): DriftEstimate {
  const all = fitWalk(moves);
  const n = moves.length;
  const totalDays = moves.reduce((a, m) => a + m.days, 0);
  const categories = [...new Set(moves.map((m) => m.category))].sort();
  return {
    volatility: all.volatility,
    // Chi-square: a variance from n moves has relative standard error √(2/n); the volatility half that.
    volatilityStderr: n > 1 ? all.volatility / Math.sqrt(2 * (n - 1)) : Number.NaN,
    trend: all.trend,
    // The drift is the mean move per day: its error is σ/√(days observed).
    trendStderr: totalDays > 0 ? all.volatility / Math.sqrt(totalDays) : Number.NaN,
    moves: n,
    perCategory: categories.map((category) => {
      const own = moves.filter((m) => m.category === category);
      const f = fitWalk(own);
      return { category, volatility: f.volatility, trend: f.trend, moves: own.length };
    }),
  };
}
