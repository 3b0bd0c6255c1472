/**
 * The ledger's model rows (model-store.ts) as model-gap.ts reads them: each pull's part (the way
 * the bot sent it: sold back, listed, held) and its state as of `now` — resolved with what it
 * realized, still listed (since when), waiting for a sell-back (at the offer now), or not listed
 * yet. Orders the comparison cannot be fair to are left out and counted: a pull shipped or gone
 * (it left without proceeds we know of), pulls not all booked (an order settled by evidence whose
 * pulls are still being found), a strategy version this packbot cannot read.
 */
import { DAY_MS, HOUR_MS, MINUTE_MS } from '../core/clock.js';
import { roundHalfAway } from '../core/money.js';
import { listingCurve } from '../strategy/listing-curve.js';
import { FRESH_RATE } from '../strategy/listing-model.js';
import { lockEnds, SPEC_SELL_BACK_RULES } from '../strategy/market-laws.js';
import {
  type ModelJson,
  type ModelOrder,
  type ModelPull,
  type ModelReport,
  modelGap,
  modelJson,
} from '../strategy/model-gap.js';
import { compilePolicy, sealedValueCents } from '../strategy/pull-policy.js';
import { type Strategy, StrategyFile } from '../strategy/strategy-schema.js';
import type { Ledger } from './ledger.js';
import type { ModelRows, ModelRowsQuery, PullListings } from './model-store.js';
import { sellbackValueAt } from './pnl.js';
import type { PullRow } from './types.js';

export interface ModelOrders {
  orders: ModelOrder[];
  excluded: number;
  /** The strategy versions the orders were decided by (digest → strategy). */
  strategies: Map<string, Strategy>;
}

/** Stored versions parsed once: a digest names its content, so the parse never changes. */
const parsedVersions = new Map<string, Strategy | null>();

/** A stored strategy version, or null when this packbot cannot read it any more. */
function parseStoredStrategy(json: string): Strategy | null {
  try {
    const parsed = StrategyFile.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function storedVersion(digest: string, json: string): Strategy | null {
  let s = parsedVersions.get(digest);
  if (s === undefined) {
    s = parseStoredStrategy(json);
    parsedVersions.set(digest, s);
  }
  return s;
}

export function modelOrders(rows: ModelRows, now: number): ModelOrders {
  const strategies = new Map<string, Strategy>();
  for (const [digest, s] of rows.strategies) {
    const parsed = storedVersion(digest, s.json);
    if (parsed) strategies.set(digest, parsed);
  }
  const pullsOf = new Map<string, PullRow[]>();
  for (const p of rows.pulls) {
    const list = pullsOf.get(p.checkoutId);
    if (list) list.push(p);
    else pullsOf.set(p.checkoutId, [p]);
  }
  const orders: ModelOrder[] = [];
  let excluded = 0;
  for (const o of rows.orders) {
    const strategy = strategies.get(o.digest);
    const pulls = pullsOf.get(o.checkoutId) ?? [];
    if (
      !strategy ||
      pulls.length < o.quantity ||
      pulls.some((p) => p.status === 'shipped' || p.status === 'gone')
    ) {
      excluded++;
      continue;
    }
    orders.push({
      key: o.intentKey,
      at: o.decidedAt,
      strategy: o.strategyName,
      digest: o.digest,
      category: o.category,
      packType: o.packType,
      riskLevel: o.riskLevel,
      promise: { ...o.promise, packs: o.quantity },
      spendCents: o.totalChargedCents,
      pulls: pulls.map((p) => modelPull(p, rows, strategy, now)),
    });
  }
  return { orders, excluded, strategies };
}

/** Expected vs realized over the rows, as of `now`. */
export function modelFromRows(rows: ModelRows, now: number): { report: ModelReport; excluded: number } {
  const { orders, excluded, strategies } = modelOrders(rows, now);
  return { report: modelGap(orders, now, (d) => listingCurve(strategies.get(d)!)), excluded };
}

/** The `model` block of `packbot report --json` and `GET /api/v1/pnl`: orders of `q`, as of `now`. */
export function ledgerModel(
  ledger: Pick<Ledger, 'modelRows' | 'listingFeeTotals'>,
  q: ModelRowsQuery,
  now: number,
  seriesLimit?: number,
): ModelJson {
  const rows = ledger.modelRows(q);
  const { report, excluded } = modelFromRows(rows, now);
  const json = modelJson(report, { excluded, ...(seriesLimit !== undefined ? { seriesLimit } : {}) });
  const fee = ledger.listingFeeTotals(q.account);
  const assumed = new Set<number>();
  for (const v of rows.strategies.values()) {
    const rate = (JSON.parse(v.json) as { sell?: { list?: { seller_fee_rate?: number } } }).sell?.list
      ?.seller_fee_rate;
    if (typeof rate === 'number') assumed.add(rate);
  }
  json.listing_fee = {
    sales: fee.sales,
    measured_rate:
      fee.sales > 0 && fee.priceCents > 0 ? Math.round((fee.feeCents / fee.priceCents) * 1e4) / 1e4 : null,
    assumed_rates: [...assumed].sort((a, b) => a - b),
  };
  return json;
}

/**
 * A listing that ended unsold before any deadline of the strategy (max_days, or the lock's margin)
 * was ended by something else — an operator's delist, a listing that failed: not the model's path,
 * so its outcome is compared with the listing's whole-life spread, not with the spread at its age.
 */
function endedEarly(l: PullListings, strategy: Strategy): boolean {
  if (l.endedAt === null) return false;
  const list = strategy.sell.list;
  const first = Math.min(
    list.max_days * DAY_MS,
    lockEnds(0, SPEC_SELL_BACK_RULES) - list.lock_margin_minutes * MINUTE_MS,
  );
  // An hour's slack: the bot acts on its own cadence, and ticks are hourly.
  return l.endedAt - l.firstListedAt < first - HOUR_MS;
}

function modelPull(p: PullRow, rows: ModelRows, strategy: Strategy, now: number): ModelPull {
  const sellBackCents = sellbackValueAt(p, now);
  const base = { valueCents: p.valueCents, listedAt: null, sellBackCents };
  if (p.kind === 'sealed_pack')
    // It cannot be sold back: held at the strategy's worth of it, what the scorer counted.
    return {
      ...base,
      part: 'held',
      state: 'resolved',
      cents: roundHalfAway(sealedValueCents(p.valueCents, strategy)),
    };
  const sale = rows.sales.get(p.pullId);
  const listing = rows.listings.get(p.pullId);
  let action = rows.firstDecision.get(p.pullId);
  if (action === undefined)
    // Not decided yet: where the strategy will send it.
    action = compilePolicy(strategy).plan(p.valueCents, FRESH_RATE).action === 'list' ? 'list' : 'sell_back';
  if (action === 'list') {
    const listedAt = listing?.firstListedAt ?? null;
    if (listing?.proceedsCents != null)
      return { ...base, part: 'listing', state: 'resolved', cents: listing.proceedsCents, listedAt };
    if (listing?.active) return { ...base, part: 'listing', state: 'listed', cents: 0, listedAt };
    if (!listing && sale === undefined) return { ...base, part: 'listing', state: 'to_list', cents: 0 };
    // Ended unsold: sold back, or the sell-back now due.
    const offModel = listing ? endedEarly(listing, strategy) : true;
    if (sale !== undefined)
      return { ...base, part: 'listing', state: 'resolved', cents: sale, listedAt, offModel };
    return { ...base, part: 'listing', state: 'waiting', cents: sellBackCents, listedAt, offModel };
  }
  const part = action === 'hold' ? 'held' : 'sell_back';
  if (sale !== undefined) return { ...base, part, state: 'resolved', cents: sale };
  return { ...base, part, state: 'waiting', cents: sellBackCents };
}
