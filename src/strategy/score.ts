/**
 * Scores one pool (one pack × risk level) exactly: one linear pass over the pull distribution,
 * valuing every atom with the strategy's sell policy. Cents and unrounded expectations inside;
 * USD rounded to the cent (money) in the output row.
 */
import type { PackPool } from '../api/schemas.js';
import { compareText } from '../core/compare-text.js';
import { type Cents, roundHalfAway, toCents } from '../core/money.js';
import { fixed3 } from './cents.js';
import { EmptyPoolError, KIND_SEALED, type PullDistribution, pullDistribution } from './distribution.js';
import { FRESH_RATE } from './listing-model.js';
import { checkPoolData, checkPrices, type IntegrityIssue, type IntegrityReason } from './pool-integrity.js';
import { compilePolicy, newScratch, sealedValueCents } from './pull-policy.js';
import type { Strategy } from './strategy-schema.js';

export type RowDecision =
  | { action: 'open'; quantity: number }
  | {
      action: 'wait';
      reason: string;
      /** Set when the pool failed its price integrity check (pool-integrity.ts). */
      integrity?: IntegrityReason;
    };

export interface ScoreRow {
  category: string;
  pack_type: string;
  name: string;
  risk_level: string;
  available: boolean;
  /** USD per pack, as the pool says. */
  price: number;
  /** USD per pack in the pack list (what is charged), null when the list was not read. */
  list_price: number | null;
  /** Expected market value of one pull, USD. */
  ev: number;
  ev_ratio: number | null;
  server_expected_value: number;
  /** ev − server_expected_value. */
  ev_gap: number;
  /** Bounds of ev when the pool is truncated (equal to ev otherwise). */
  ev_low: number;
  ev_high: number;
  /** Expected cash (or sealed-pack worth) of one pull under the sell policy, USD. */
  realized_ev: number;
  realized_ev_ratio: number | null;
  /** realized_ev with unseen cards at their band's minimum: what decisions use when estimated. */
  realized_ev_low: number;
  /** Standard deviation of the pull's market value, USD. */
  stdev: number;
  /** Standard deviation of the realized value, USD. */
  realized_stdev: number;
  /** P(realized value of one pack < price). */
  p_loss: number;
  /** Probability that the pull is sold back right away (not listed, not sealed). */
  share_sold_back: number;
  /** Expected log-growth of the balance from opening one pack; null without a balance. */
  growth: number | null;
  /** Full-Kelly number of packs for the bankroll (balance − reserve); null without a balance. */
  kelly_quantity: number | null;
  estimated: boolean;
  notes: string[];
  /** Ranking key: expected profit per pack, USD (packs per day are the scarce resource). */
  score: number;
  decision: RowDecision;
}

export interface ScoreContext {
  /** Current balance in cents; enables growth and Kelly sizing. */
  balanceCents?: number;
  /** The pack's `max_quantity` from the pack list, when known. */
  maxQuantity?: (category: string, packType: string) => number | undefined;
  /** The pack's `price` from the pack list in cents (what is charged), when known. */
  listPriceCents?: (category: string, packType: string) => number | undefined;
  /** Called for a pool that cannot be scored (e.g. empty); without it such a pool throws. */
  onSkip?: (pool: PackPool, error: EmptyPoolError) => void;
  /** The pool's pull distribution when the caller keeps it (a pure function of the pool). */
  distributionOf?: (pool: PackPool) => PullDistribution;
}

/** Sufficient statistics of the realized value of one pull (cents). */
export interface RealizedStats {
  mean: number;
  meanLow: number;
  ex2: number;
  pLoss: number;
  shareSoldBack: number;
  /** Σ p · log((B − price + X) / B), or NaN without a balance. */
  growth: number;
}

const usd = (cents: number): number => roundHalfAway(cents) / 100;
const ratio = (x: number, price: Cents): number | null => (price > 0 ? round6(x / price) : null);
const round6 = (x: number): number => Math.round(x * 1e6) / 1e6;

/** The realized value of atom i, split into at most two outcomes (listing fills or not). */
export function realizedStats(
  dist: PullDistribution,
  strategy: Strategy,
  priceCents: Cents,
  balanceCents?: number,
): RealizedStats {
  let mean = 0;
  let meanLow = 0;
  let ex2 = 0;
  let pLoss = 0;
  let soldBack = 0;
  let growth = 0;
  const withGrowth = balanceCents !== undefined && balanceCents > priceCents && balanceCents > 0;
  const base = withGrowth ? balanceCents - priceCents : 0;
  const logB = withGrowth ? Math.log(balanceCents) : 0;
  const policy = compilePolicy(strategy);
  const plan = newScratch();
  const { prob, value, lo, kind } = dist;
  for (let i = 0; i < dist.size; i++) {
    const p = prob[i]!;
    const v = value[i]!;
    // Each atom yields one outcome x (probability p), or two when listed: sale (p·fill) or fallback.
    let x: number;
    let p2 = 0;
    let x2 = 0;
    let expected: number;
    if (kind[i] === KIND_SEALED) {
      x = sealedValueCents(v, strategy);
      expected = x;
      meanLow += p * (lo[i] === v ? x : sealedValueCents(lo[i]!, strategy));
    } else {
      policy.evaluate(v, FRESH_RATE, plan);
      expected = plan.expectedCents;
      if (plan.list) {
        x = plan.saleCents;
        x2 = plan.fallbackCents;
        p2 = p * (1 - plan.fill);
      } else {
        x = plan.payoutCents;
        soldBack += p;
      }
      meanLow += p * (lo[i] === v ? expected : policy.evaluate(lo[i]!, FRESH_RATE, plan).expectedCents);
    }
    const p1 = p - p2;
    mean += p * expected;
    ex2 += p1 * x * x + p2 * x2 * x2;
    if (x < priceCents) pLoss += p1;
    if (p2 > 0 && x2 < priceCents) pLoss += p2;
    if (withGrowth) {
      growth += p1 * (Math.log(base + x) - logB);
      if (p2 > 0) growth += p2 * (Math.log(base + x2) - logB);
    }
  }
  return {
    mean,
    meanLow,
    ex2,
    pLoss: Math.min(1, pLoss),
    shareSoldBack: Math.min(1, soldBack),
    growth: withGrowth ? growth : Number.NaN,
  };
}

/** Why the strategy never opens this pool (category, pack or risk level filters), or null. */
export function excludedBy(pool: PackPool, strategy: Strategy): string | null {
  return outOfScope(strategy, pool.category, pool.pack_type, pool.risk_level);
}

/**
 * Why the strategy never opens this pack (its categories, included and excluded packs) or, given
 * a risk level, this pool; null when it may.
 */
export function outOfScope(
  strategy: Strategy,
  category: string,
  packType: string,
  risk?: string,
): string | null {
  const p = strategy.packs;
  if (!(p.categories as readonly string[]).includes(category)) return `category ${category} not in strategy`;
  if (p.exclude.includes(packType)) return `pack ${packType} excluded by strategy`;
  if (p.include.length > 0 && !p.include.includes(packType))
    return `pack ${packType} not included by strategy`;
  if (risk !== undefined && !(p.risk_levels as readonly string[]).includes(risk))
    return `risk level ${risk} not in strategy`;
  return null;
}

export function scorePool(pool: PackPool, strategy: Strategy, ctx: ScoreContext = {}): ScoreRow {
  const dist = ctx.distributionOf ? ctx.distributionOf(pool) : pullDistribution(pool);
  const price = toCents(pool.price);
  const stats = realizedStats(dist, strategy, price, ctx.balanceCents);
  return rowFromStats(pool, strategy, ctx, dist, stats, null);
}

/** What a row needs from the pull distribution (its market-value side). */
export type DistributionSummary = Pick<
  PullDistribution,
  'evCents' | 'evLoCents' | 'evHiCents' | 'varianceCents2' | 'estimated' | 'notes'
> & {
  /** Cards a pull can take (bands with odds > 0); default: Σ of the pool's `hittable_cards`. */
  drawableCards?: number;
  /**
   * The pool's band-bounds and EV-gap check (`checkPoolData`), when the caller has it already
   * (the incremental scorer checks each pool once); default: checked here.
   */
  dataIssue?: IntegrityIssue | null;
};

/** Cards the pool's bands with odds > 0 hold, as the pool reports them. */
function drawableCardsOf(pool: PackPool): number {
  let n = 0;
  for (const b of pool.bands) if (b.odds > 0) n += b.hittable_cards;
  return n;
}

/**
 * Builds the score row from a distribution summary and realized statistics: the one place where
 * rows are rounded and decided, shared by `scorePool` and the incremental scorer
 * (incremental-score.ts). `lazyGrowth`, when given, computes `stats.growth` on demand: it is
 * called only if the decision needs it or the row's `growth` is read (then cached in the row).
 * `growthSign` (with `lazyGrowth` only): +1 when the caller has proven the growth finite and > 0,
 * −1 when proven finite and ≤ 0, 0 when unknown; a proven sign decides without computing growth.
 * `growthOnDemand` false: a growth the decision did not compute is null in the row (no accessor).
 */
export function rowFromStats(
  pool: PackPool,
  strategy: Strategy,
  ctx: ScoreContext,
  dist: DistributionSummary,
  stats: RealizedStats,
  lazyGrowth: (() => number) | null,
  growthSign = 0,
  growthOnDemand = true,
): ScoreRow {
  const price = toCents(pool.price);
  const listPrice = ctx.listPriceCents?.(pool.category, pool.pack_type);
  const issue =
    checkPrices(price, listPrice) ??
    (dist.dataIssue !== undefined
      ? dist.dataIssue
      : checkPoolData(pool, dist, strategy.open.max_ev_gap_ratio));
  const realizedVar = Math.max(0, stats.ex2 - stats.mean * stats.mean);
  const server = toCents(pool.expected_value);
  const ev = roundHalfAway(dist.evCents);
  let growth: number | null | undefined = lazyGrowth
    ? undefined
    : Number.isNaN(stats.growth)
      ? null
      : stats.growth;
  const getGrowth = (): number | null => {
    if (growth === undefined) {
      const g = lazyGrowth!();
      growth = Number.isNaN(g) ? null : g;
    }
    return growth;
  };

  // Continuous Kelly in packs: bankroll × edge / variance of one pack's outcome.
  let kelly: number | null = null;
  if (ctx.balanceCents !== undefined) {
    const bankroll = Math.max(0, ctx.balanceCents - toCents(strategy.budget.min_balance_usd));
    const edge = stats.mean - price;
    kelly = edge <= 0 ? 0 : realizedVar > 0 ? (bankroll * edge) / realizedVar : Number.POSITIVE_INFINITY;
  }

  const decisionMean = dist.estimated ? stats.meanLow : stats.mean;
  const decision = decide(
    pool,
    strategy,
    ctx,
    price,
    decisionMean,
    dist.estimated,
    getGrowth,
    kelly,
    lazyGrowth ? growthSign : 0,
    dist.drawableCards ?? drawableCardsOf(pool),
    issue,
  );
  if (growth !== undefined || !growthOnDemand)
    return {
      category: pool.category,
      pack_type: pool.pack_type,
      name: pool.name,
      risk_level: pool.risk_level,
      available: pool.available,
      price: usd(price),
      list_price: listPrice === undefined ? null : usd(listPrice),
      ev: usd(ev),
      ev_ratio: ratio(dist.evCents, price),
      server_expected_value: usd(server),
      ev_gap: usd(ev - server),
      ev_low: usd(dist.evLoCents),
      ev_high: usd(dist.evHiCents),
      realized_ev: usd(stats.mean),
      realized_ev_ratio: ratio(stats.mean, price),
      realized_ev_low: usd(stats.meanLow),
      stdev: usd(Math.sqrt(dist.varianceCents2)),
      realized_stdev: usd(Math.sqrt(realizedVar)),
      p_loss: round6(stats.pLoss),
      share_sold_back: round6(stats.shareSoldBack),
      growth: growth ?? null,
      kelly_quantity: kelly === null ? null : Number.isFinite(kelly) ? round6(kelly) : null,
      estimated: dist.estimated,
      notes: dist.notes.length === 0 ? [] : [...dist.notes],
      score: usd(stats.mean - price),
      decision,
    };
  // Growth not needed by the decision: computed when first read (same value, same key order).
  // An accessor in the literal keeps the row a fast object (defineProperty made it a dictionary).
  return {
    category: pool.category,
    pack_type: pool.pack_type,
    name: pool.name,
    risk_level: pool.risk_level,
    available: pool.available,
    price: usd(price),
    list_price: listPrice === undefined ? null : usd(listPrice),
    ev: usd(ev),
    ev_ratio: ratio(dist.evCents, price),
    server_expected_value: usd(server),
    ev_gap: usd(ev - server),
    ev_low: usd(dist.evLoCents),
    ev_high: usd(dist.evHiCents),
    realized_ev: usd(stats.mean),
    realized_ev_ratio: ratio(stats.mean, price),
    realized_ev_low: usd(stats.meanLow),
    stdev: usd(Math.sqrt(dist.varianceCents2)),
    realized_stdev: usd(Math.sqrt(realizedVar)),
    p_loss: round6(stats.pLoss),
    share_sold_back: round6(stats.shareSoldBack),
    get growth(): number | null {
      return getGrowth();
    },
    set growth(v: number | null) {
      Object.defineProperty(this, 'growth', {
        value: v,
        enumerable: true,
        configurable: true,
        writable: true,
      });
    },
    kelly_quantity: kelly === null ? null : Number.isFinite(kelly) ? round6(kelly) : null,
    estimated: dist.estimated,
    notes: dist.notes.length === 0 ? [] : [...dist.notes],
    score: usd(stats.mean - price),
    decision,
  };
}

function decide(
  pool: PackPool,
  strategy: Strategy,
  ctx: ScoreContext,
  price: Cents,
  mean: number,
  estimated: boolean,
  growthOf: () => number | null,
  kelly: number | null,
  growthSign: number,
  cards: number,
  issue: IntegrityIssue | null,
): RowDecision {
  const wait = (reason: string): RowDecision => ({ action: 'wait', reason });
  const excluded = excludedBy(pool, strategy);
  if (excluded) return wait(excluded);
  if (!pool.available) return wait('pack unavailable');
  // Before any economics: with a wrong price the EV ratio and the sizing below mean nothing.
  if (issue) return { action: 'wait', reason: `price integrity: ${issue.message}`, integrity: issue.reason };
  if (estimated && !strategy.open.allow_estimated) return wait('pool truncated (estimated) and not allowed');
  const min = strategy.open.min_ev_ratio;
  if (price > 0 && mean < min * price) {
    const r = fixed3(mean / price);
    return wait(`realized ev ratio ${r}${estimated ? ' (low bound)' : ''} below min_ev_ratio ${min}`);
  }
  let quantity = Math.min(strategy.open.max_quantity, ctx.maxQuantity?.(pool.category, pool.pack_type) ?? 10);
  // An order is all or nothing (spec): more packs than the pool has cards would fail as a whole,
  // and fail again at every retry. A count below one (not reported) leaves the quantity as is.
  if (cards >= 1) quantity = Math.min(quantity, cards);
  if (ctx.balanceCents !== undefined) {
    // Outcomes are never negative, so the growth is finite exactly when the balance exceeds the price.
    if (!(ctx.balanceCents > price && ctx.balanceCents > 0)) return wait('balance does not cover the price');
    if (strategy.open.sizing === 'fixed') return { action: 'open', quantity };
    const lower = 'opening would lower expected log-growth of the balance';
    // No edge: growth ≤ log E[1 + u] ≤ 0 (Jensen), no need to compute it.
    if (!estimated && mean <= price) return wait(lower);
    // Below one pack the answer is wait whatever the growth's sign: it is computed only when
    // it can change the action (an O(cards) sum of logs per row otherwise).
    const sized = Math.floor((kelly ?? 0) * strategy.open.kelly_fraction);
    if (sized < 1) return wait('Kelly size below one pack at this balance');
    // A proven sign (finite growth, > 0 or ≤ 0) decides as the exact growth would, unread.
    const growth = growthSign !== 0 ? growthSign : growthOf();
    if (growth === null) return wait('balance does not cover the price');
    if (growth <= 0) return wait(lower);
    quantity = Math.min(quantity, sized);
  }
  return { action: 'open', quantity };
}

/** Every scorable pool, best first: open rows by score, then waiting rows by score. */
export function scorePools(
  pools: readonly PackPool[],
  strategy: Strategy,
  ctx: ScoreContext = {},
): ScoreRow[] {
  const rows: ScoreRow[] = [];
  for (const pool of pools) {
    try {
      rows.push(scorePool(pool, strategy, ctx));
    } catch (e) {
      if (e instanceof EmptyPoolError && ctx.onSkip) ctx.onSkip(pool, e);
      else throw e;
    }
  }
  return rows.sort(compareRows);
}

export function compareRows(a: ScoreRow, b: ScoreRow): number {
  const ao = a.decision.action === 'open' ? 1 : 0;
  const bo = b.decision.action === 'open' ? 1 : 0;
  if (ao !== bo) return bo - ao;
  if (a.score !== b.score) return b.score - a.score;
  const ar = a.realized_ev_ratio ?? Number.POSITIVE_INFINITY;
  const br = b.realized_ev_ratio ?? Number.POSITIVE_INFINITY;
  if (ar !== br) return br - ar;
  return compareText(
    `${a.category}/${a.pack_type}/${a.risk_level}`,
    `${b.category}/${b.pack_type}/${b.risk_level}`,
  );
}
