/**
 * Expected vs realized: what the scorer promised for the orders it opened (model-promise.ts)
 * against what their pulls realized, with the gap's standard error from the recorded per-pack
 * spreads and z = gap / se. One pure computation shared by `packbot report`, the read API, the
 * bot's metrics and alarm, and the backtest's `model` block, so all of them read alike.
 *
 * - total: per order, expected net = packs × (realized EV − price) and realized net = what its
 *   pulls realized − what it was charged; variance packs × sd² (packs are independent).
 * - sell_back, held: the scorer's expectation of each part per pack against what the pulls that
 *   went that way realized (sell-back payouts; sealed packs at the strategy's worth of them, held
 *   cards at their sell-back offer) — the luck of the draw is in these, as in the total.
 * - listing: conditioned on the cards actually listed. Each listed pull is expected to realize
 *   its value × the listing life's mean (listing-curve.ts) and is compared with what it realized,
 *   so a lucky or unlucky draw of listable cards does not hide a wrong fill law.
 *
 * Open pulls are marked by the model: a listing still running at what the model expects of it
 * given its age (listing-curve.ts, unbiased at every instant), a pull waiting for its sale at the
 * sell-back offer. `atSellBack` is the same with every open pull at its sell-back offer instead:
 * a floor, leaning negative while listings run. `resolved` keeps only the orders whose every pull
 * is resolved: no mark at all, but while recent orders are open it favours those that resolved
 * fast (listings that sold, orders without a listing). Money in cents inside; USD in `modelJson`.
 */
import { iso } from '../core/clock.js';
import { compareText } from '../core/compare-text.js';
import { roundHalfAway } from '../core/money.js';
import type { ListingCurve } from './listing-curve.js';
import { MODEL_PARTS, type ModelPart, type OrderPromise } from './model-promise.js';

export { MODEL_PARTS, type ModelPart } from './model-promise.js';

/**
 * The alarm (alert PackbotModelDrift, notification `model_drift`): |z| beyond this, once the
 * comparison holds at least this many resolved packs.
 */
export const DRIFT_Z = 3;
export const DRIFT_MIN_PACKS = 30;

/** What became of one pull so far (cents). */
export interface ModelPull {
  part: ModelPart;
  valueCents: number;
  /**
   * resolved: its outcome is in (`cents`: the payout, the sale's proceeds, a sealed pack's worth);
   * listed: on the marketplace since `listedAt`; waiting: the outcome is a sell-back still to
   * happen (`cents`: the offer now); to_list: decided for listing, not listed yet.
   */
  state: 'resolved' | 'listed' | 'waiting' | 'to_list';
  cents: number;
  listedAt: number | null;
  /** What selling it back now would pay (the `atSellBack` marking of an open pull). */
  sellBackCents: number;
  /**
   * A listing that ended off the model's path (delisted before any of the strategy's deadlines,
   * by an operator say): compared with the whole life's spread rather than the spread at its age.
   */
  offModel?: boolean;
}

export interface ModelOrder {
  key: string;
  /** When the order was decided (ms). */
  at: number;
  strategy: string;
  digest: string;
  category: string;
  packType: string;
  riskLevel: string;
  promise: OrderPromise;
  /** What the order was charged (cents). */
  spendCents: number;
  pulls: readonly ModelPull[];
}

/** Sums of one comparison (cents, cents²). */
export interface GapSums {
  packs: number;
  pulls: number;
  expected: number;
  realized: number;
  variance: number;
}

export interface ModelFigures {
  orders: number;
  packs: number;
  /** Packs whose pull's outcome is in (sold back, listing sold or ended, sealed pack held). */
  resolvedPacks: number;
  openPulls: number;
  total: GapSums;
  parts: Record<ModelPart, GapSums>;
}

export interface ModelReport extends ModelFigures {
  /** The same with open pulls at their sell-back offer. */
  atSellBack: ModelFigures;
  /** Only the orders whose every pull is resolved. */
  resolved: ModelFigures;
  byPack: (ModelFigures & { category: string; packType: string; riskLevel: string })[];
  /** Per strategy version, in the order they were first used. */
  byStrategy: (ModelFigures & { strategy: string; digest: string })[];
  /** Cumulative total sums after each order, in decision order (the dashboard's band). */
  series: { at: number; expected: number; realized: number; variance: number }[];
}

export type Marking = 'model' | 'sell_back';

const emptySums = (): GapSums => ({ packs: 0, pulls: 0, expected: 0, realized: 0, variance: 0 });

export const emptyFigures = (): ModelFigures => ({
  orders: 0,
  packs: 0,
  resolvedPacks: 0,
  openPulls: 0,
  total: emptySums(),
  parts: { sell_back: emptySums(), listing: emptySums(), held: emptySums() },
});

function addSums(into: GapSums, x: GapSums): void {
  into.packs += x.packs;
  into.pulls += x.pulls;
  into.expected += x.expected;
  into.realized += x.realized;
  into.variance += x.variance;
}

export function addFigures(into: ModelFigures, x: ModelFigures): void {
  into.orders += x.orders;
  into.packs += x.packs;
  into.resolvedPacks += x.resolvedPacks;
  into.openPulls += x.openPulls;
  addSums(into.total, x.total);
  for (const p of MODEL_PARTS) addSums(into.parts[p], x.parts[p]);
}

/**
 * One listed pull against the listing life (cents): expectation, realized (marked) and variance.
 * The variance is the model's at the listing's age (`ListingCurve.markAt`), whatever became of
 * this listing: the variance of the mark process, not of this listing's path.
 */
function listedPull(
  pull: Pick<ModelPull, 'valueCents' | 'state' | 'cents' | 'listedAt' | 'sellBackCents' | 'offModel'>,
  curve: ListingCurve,
  now: number,
  marking: Marking,
): { expected: number; realized: number; variance: number } {
  const v = pull.valueCents;
  const expected = v * curve.mean;
  if (pull.state === 'to_list')
    return marking === 'sell_back'
      ? { expected, realized: pull.sellBackCents, variance: v * v * curve.variance }
      : { expected, realized: expected, variance: 0 };
  const m = pull.listedAt === null ? null : curve.markAt(now - pull.listedAt);
  const variance = v * v * (m && !pull.offModel ? m.variance : curve.variance);
  if (pull.state !== 'listed') return { expected, realized: pull.cents, variance };
  if (marking === 'sell_back' || !m) return { expected, realized: pull.sellBackCents, variance };
  return { expected, realized: v * m.mark, variance };
}

/** One order's figures. */
export function orderFigures(
  o: ModelOrder,
  curve: ListingCurve,
  now: number,
  marking: Marking = 'model',
): ModelFigures {
  const f = emptyFigures();
  const p = o.promise;
  f.orders = 1;
  f.packs = p.packs;
  for (const part of ['sell_back', 'held'] as const) {
    const s = f.parts[part];
    s.packs = p.packs;
    s.expected = p.packs * p.parts[part].meanCents;
    s.variance = p.packs * p.parts[part].sdCents ** 2;
  }
  let realized = 0;
  let open = 0;
  for (const pull of o.pulls) {
    if (pull.state !== 'resolved') open++;
    const s = f.parts[pull.part];
    s.pulls++;
    if (pull.part === 'listing') {
      const l = listedPull(pull, curve, now, marking);
      s.packs++;
      s.expected += l.expected;
      s.realized += l.realized;
      s.variance += l.variance;
      realized += l.realized;
      continue;
    }
    const x = pull.state === 'resolved' || marking === 'model' ? pull.cents : pull.sellBackCents;
    s.realized += x;
    realized += x;
  }
  f.openPulls = open;
  // A pack is one pull: resolved once that pull's outcome is in.
  f.resolvedPacks = Math.max(0, Math.min(p.packs, o.pulls.length - open));
  f.total = {
    packs: p.packs,
    pulls: o.pulls.length,
    expected: p.packs * (p.realizedEvCents - p.priceCents),
    realized: realized - o.spendCents,
    variance: p.packs * p.sdCents ** 2,
  };
  return f;
}

/** Expected vs realized over `orders`, as of `now`; `curveOf` gives each strategy version's listing life. */
export function modelGap(
  orders: readonly ModelOrder[],
  now: number,
  curveOf: (digest: string) => ListingCurve,
): ModelReport {
  const all = emptyFigures();
  const atSellBack = emptyFigures();
  const resolved = emptyFigures();
  const byPack = new Map<string, ModelReport['byPack'][number]>();
  const byStrategy = new Map<string, ModelReport['byStrategy'][number]>();
  const series: ModelReport['series'] = [];
  const sorted = [...orders].sort((a, b) => a.at - b.at || compareText(a.key, b.key));
  for (const o of sorted) {
    const curve = curveOf(o.digest);
    const f = orderFigures(o, curve, now);
    addFigures(all, f);
    addFigures(atSellBack, orderFigures(o, curve, now, 'sell_back'));
    if (f.openPulls === 0) addFigures(resolved, f);
    const pk = `${o.category}/${o.packType}/${o.riskLevel}`;
    let g = byPack.get(pk);
    if (!g) {
      g = { ...emptyFigures(), category: o.category, packType: o.packType, riskLevel: o.riskLevel };
      byPack.set(pk, g);
    }
    addFigures(g, f);
    const sk = `${o.strategy}\u0000${o.digest}`;
    let s = byStrategy.get(sk);
    if (!s) {
      s = { ...emptyFigures(), strategy: o.strategy, digest: o.digest };
      byStrategy.set(sk, s);
    }
    addFigures(s, f);
    series.push({
      at: o.at,
      expected: all.total.expected,
      realized: all.total.realized,
      variance: all.total.variance,
    });
  }
  const order = <T>(m: Map<string, T>) =>
    [...m.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, v]) => v);
  // Versions in the order they were first used: the last is the newest.
  return {
    ...all,
    atSellBack,
    resolved,
    byPack: order(byPack),
    byStrategy: [...byStrategy.values()],
    series,
  };
}

// ---------------------------------------------------------------- JSON (USD at the boundary)

export interface GapJson {
  packs: number;
  pulls: number;
  expected_net_usd: number;
  realized_net_usd: number;
  gap_usd: number;
  se_usd: number;
  /** gap / se; null while there is no spread to compare with. */
  z: number | null;
}

export interface FiguresJson extends GapJson {
  orders: number;
  resolved_packs: number;
  open_pulls: number;
  parts: Record<ModelPart, GapJson>;
}

/** A pack × risk level: its total only (where the gap comes from is read on the whole). */
export interface PackJson extends GapJson {
  category: string;
  pack_type: string;
  risk_level: string;
  orders: number;
  resolved_packs: number;
  open_pulls: number;
}

/**
 * The marketplace fee behind the listing part (the bot's books only): what the balance showed the
 * marketplace kept of the credited sales, against the fee the strategies assumed. The listing
 * part's expectation prices the assumed fee; a gap here is a gap there.
 */
export interface ListingFeeJson {
  sales: number;
  measured_rate: number | null;
  assumed_rates: number[];
}

export interface ModelJson extends FiguresJson {
  /** What the figures mark open pulls at (`model`: the model's expectation given their age). */
  marking: 'model';
  listing_fee?: ListingFeeJson;
  /** Orders left out: a pull shipped or gone, pulls not all booked, a strategy not readable. */
  excluded_orders: number;
  at_sell_back: FiguresJson;
  /** Only the orders whose every pull is resolved (leans to the quick ones while orders are open). */
  resolved: FiguresJson;
  by_pack: PackJson[];
  by_strategy: (FiguresJson & { strategy: string; version: string })[];
  series: {
    at: string;
    expected_net_usd: number;
    realized_net_usd: number;
    gap_usd: number;
    se_usd: number;
  }[];
}

const usd = (cents: number): number => roundHalfAway(cents) / 100;
const z3 = (x: number): number => Math.round(x * 1000) / 1000;

/** z of a comparison: gap / se, null without a spread. */
export function zOf(s: Pick<GapSums, 'expected' | 'realized' | 'variance'>): number | null {
  return s.variance > 0 ? z3((s.realized - s.expected) / Math.sqrt(s.variance)) : null;
}

export function gapJson(s: GapSums): GapJson {
  return {
    packs: s.packs,
    pulls: s.pulls,
    expected_net_usd: usd(s.expected),
    realized_net_usd: usd(s.realized),
    gap_usd: usd(s.realized - s.expected),
    se_usd: usd(Math.sqrt(s.variance)),
    z: zOf(s),
  };
}

export function figuresJson(f: ModelFigures): FiguresJson {
  return {
    ...gapJson(f.total),
    orders: f.orders,
    resolved_packs: f.resolvedPacks,
    open_pulls: f.openPulls,
    parts: {
      sell_back: gapJson(f.parts.sell_back),
      listing: gapJson(f.parts.listing),
      held: gapJson(f.parts.held),
    },
  };
}

/** Evenly thinned to at most `limit` entries, the last always kept. */
function thinned<T>(xs: readonly T[], limit: number): T[] {
  if (xs.length <= limit) return [...xs];
  const out: T[] = [];
  const step = (xs.length - 1) / (limit - 1);
  for (let i = 0; i < limit; i++) out.push(xs[Math.round(i * step)]!);
  return out;
}

export function modelJson(
  r: ModelReport,
  options: { excluded?: number; seriesLimit?: number } = {},
): ModelJson {
  return {
    marking: 'model',
    ...figuresJson(r),
    excluded_orders: options.excluded ?? 0,
    at_sell_back: figuresJson(r.atSellBack),
    resolved: figuresJson(r.resolved),
    by_pack: r.byPack.map((g) => ({
      category: g.category,
      pack_type: g.packType,
      risk_level: g.riskLevel,
      ...gapJson(g.total),
      orders: g.orders,
      resolved_packs: g.resolvedPacks,
      open_pulls: g.openPulls,
    })),
    by_strategy: r.byStrategy.map((g) => ({
      strategy: g.strategy,
      version: g.digest.slice(0, 12),
      ...figuresJson(g),
    })),
    series: thinned(r.series, options.seriesLimit ?? 200).map((p) => ({
      at: iso(p.at),
      expected_net_usd: usd(p.expected),
      realized_net_usd: usd(p.realized),
      gap_usd: usd(p.realized - p.expected),
      se_usd: usd(Math.sqrt(p.variance)),
    })),
  };
}
