/**
 * Whether to open a pack now, which one and how many: the best open-worthy row that fits the
 * server's limits (packs left today, next purchase time, max quantity) and the strategy's budget.
 */

import type { Account } from '../api/schemas.js';
import { nextUtcMidnight } from '../core/clock.js';
import { type Cents, toCents } from '../core/money.js';
import { type BudgetState, budgetBlock, guardLiftsAt, guardMessage, spendHeadroom } from './budget.js';
import { compareRows, type ScoreRow } from './score.js';
import type { Strategy } from './strategy-schema.js';

export interface OpenState extends BudgetState {
  /** From the account's limits. */
  packsLeftToday: number;
  /** `next_purchase_at` (ms), null when unknown. */
  nextPurchaseAt: number | null;
  /** `resets_at` (ms), null when unknown (then the next UTC midnight is assumed). */
  resetsAt: number | null;
  /** Our own last purchase (ms), for the strategy's cool-down; null if none. */
  lastPurchaseAt: number | null;
}

/** What the runner or the backtest keeps itself (ledger totals, operator switch). */
export type LocalTotals = Pick<
  OpenState,
  'spentTodayCents' | 'spentTotalCents' | 'markedPnlCents' | 'killSwitch' | 'lastPurchaseAt'
>;

/** Builds the state from a `GET /account` body (the server's own limits and timestamps) and our totals. */
export function openStateFromAccount(account: Account, totals: LocalTotals): OpenState {
  return {
    ...totals,
    balanceCents: toCents(account.balance),
    packsLeftToday: account.limits.packs_left_today,
    nextPurchaseAt: Date.parse(account.limits.next_purchase_at),
    resetsAt: Date.parse(account.limits.resets_at),
  };
}

export type OpenDecision =
  | {
      action: 'open';
      category: string;
      pack_type: string;
      risk_level: string;
      quantity: number;
      priceCents: Cents;
      /** What the scorer expects one pack to realize (the row's `realized_ev`, cents). */
      realizedEvCents: Cents;
    }
  | { action: 'wait'; reason: string; until?: number };

/** The price budgets are checked at: the larger of the two the service showed (pool and list). */
export function budgetPrice(row: Pick<ScoreRow, 'price' | 'list_price'>): Cents {
  const pool = toCents(row.price);
  return row.list_price === null ? pool : Math.max(pool, toCents(row.list_price));
}

/**
 * Whether no pack can be opened again and `decideOpen`'s answer no longer depends on the rows, now
 * and for good: the strategy's kill switch (not the operator's: it can be turned off), or a total
 * spend headroom below the cheapest pool's price (`cheapestCents`; every budget price is at least
 * its pool's price) while the daily headroom exceeds it. Then no row is affordable and the limiting
 * guard is the total or the reserve (neither lifts by itself), so the answer is the same wait
 * without `until` with or without rows. It stays so: the total spend only grows, the daily
 * headroom minus the total headroom only grows (spend, packs or cards, moves both alike; a new UTC
 * day raises the daily one), and no in-doubt order is counted (else: false). A backtest stops
 * rescoring then (nothing would read the rows).
 */
export function rowsNeverRead(state: OpenState, strategy: Strategy, cheapestCents: Cents): boolean {
  if (strategy.budget.kill_switch) return true;
  if (state.inDoubtCents !== undefined && state.inDoubtCents !== 0) return false;
  const b = strategy.budget;
  const total = toCents(b.max_total_spend_usd) - state.spentTotalCents;
  const daily = toCents(b.max_daily_spend_usd) - state.spentTodayCents;
  return total < cheapestCents && daily > total;
}

/**
 * Whether the next purchase must wait at `now` whatever the rows say: the service's rate limit
 * (`nextPurchaseAt`) or the strategy's cool-down since the last purchase; null when neither holds.
 */
function slotHold(
  state: OpenState,
  strategy: Strategy,
  now: number,
): { reason: 'purchase rate limit' | 'strategy cool-down'; until: number } | null {
  if (state.nextPurchaseAt !== null && now < state.nextPurchaseAt)
    return { reason: 'purchase rate limit', until: state.nextPurchaseAt };
  const cooldown = strategy.open.cooldown_seconds * 1000;
  if (state.lastPurchaseAt !== null && cooldown > 0 && now < state.lastPurchaseAt + cooldown)
    return { reason: 'strategy cool-down', until: state.lastPurchaseAt + cooldown };
  return null;
}

/**
 * The instant `decideOpen` at `now` waits for that no change of the balance brings nearer: the
 * day's reset when its packs are used up, or the end of the service's rate limit; NaN when neither
 * holds. A backtest whose cash changed while it waits for this instant need not ask again (unless
 * a budget guard now blocks: `budgetBlock` decides first).
 */
export function waitCashCannotLift(state: OpenState, now: number): number {
  if (state.packsLeftToday <= 0) return state.resetsAt ?? nextUtcMidnight(now);
  if (state.nextPurchaseAt !== null && now < state.nextPurchaseAt) return state.nextPurchaseAt;
  return Number.NaN;
}

/**
 * Whether `decideOpen`'s answer at `now` reads no row's numbers, at most whether some row is open:
 * a budget guard blocks (the answer is its wait), the day's packs are used up, the rate limit or
 * the strategy's cool-down holds (a wait until it lifts), or the spend headroom is below the
 * cheapest pool's price (`cheapestCents`; every budget price is at least its pool's, so no open
 * row affords a pack and the answer is the limiting guard's wait, or "no pack meets the strategy"
 * when no row is open). A backtest then decides on the rows it last made instead of rescoring.
 */
export function rowNumbersUnread(
  state: OpenState,
  strategy: Strategy,
  cheapestCents: Cents,
  now: number,
): boolean {
  if (budgetBlock(state, strategy) !== null || state.packsLeftToday <= 0) return true;
  if (slotHold(state, strategy, now) !== null) return true;
  return spendHeadroom(state, strategy).cents < cheapestCents;
}

/**
 * What `decideOpen` reads of a set of rows in which every open row with a price fits the budget:
 * the row it then picks (`best`, null when none is open), that row's budget price, and the largest
 * open row's budget price (headroom at least this much means every open row fits).
 */
export interface OpenPick {
  best: ScoreRow | null;
  priceCents: Cents;
  maxPriceCents: Cents;
}

/** Whether `d` opens `pick`'s own row at its price (not a row chosen while a better one did not fit). */
export function opensPick(d: OpenDecision, pick: OpenPick | null): boolean {
  const best = pick === null ? null : pick.best;
  return (
    d.action === 'open' &&
    best !== null &&
    d.category === best.category &&
    d.pack_type === best.pack_type &&
    d.risk_level === best.risk_level &&
    d.priceCents === pick!.priceCents
  );
}

/**
 * Whether `decideOpen` at `now`, on rows whose pick is `pick`, gives `last` again, where `last`
 * opened that pick's row (`opensPick`): no guard, limit or cool-down stops it, every open row
 * still fits, and the quantity comes out the same. A backtest then repeats `last` unasked.
 */
export function opensAgain(
  state: OpenState,
  strategy: Strategy,
  pick: OpenPick,
  last: OpenDecision,
  now: number,
): boolean {
  if (last.action !== 'open' || state.packsLeftToday < 1) return false;
  if (slotHold(state, strategy, now) !== null) return false;
  if (budgetBlock(state, strategy) !== null) return false;
  const room = spendHeadroom(state, strategy).cents;
  if (!(Math.floor(room / pick.maxPriceCents) >= 1)) return false;
  const best = pick.best!;
  const rowQuantity = best.decision.action === 'open' ? best.decision.quantity : 0;
  return Math.min(rowQuantity, state.packsLeftToday, Math.floor(room / pick.priceCents)) === last.quantity;
}

export function decideOpen(
  state: OpenState,
  rows: readonly ScoreRow[],
  strategy: Strategy,
  now: number,
): OpenDecision {
  const block = budgetBlock(state, strategy);
  if (block) return { action: 'wait', reason: block.reason };
  if (state.packsLeftToday <= 0)
    return {
      action: 'wait',
      reason: 'daily pack limit reached',
      until: state.resetsAt ?? nextUtcMidnight(now),
    };
  const hold = slotHold(state, strategy, now);
  if (hold !== null) return { action: 'wait', reason: hold.reason, until: hold.until };

  // The first open row in compareRows order whose quantity reaches one: a scan for the least such
  // row (compareRows is a total order on distinct pools), not a filter and sort per slot.
  let headroom: ReturnType<typeof spendHeadroom> | null = null;
  let best: ScoreRow | undefined;
  let bestQuantity = 0;
  let bestPrice = 0;
  for (const row of rows) {
    if (row.decision.action !== 'open') continue;
    const price = budgetPrice(row);
    // Defence in depth (the scorer already waits on such a row): a free pack is a wrong price,
    // and would make the affordable quantity unbounded.
    if (!(price > 0)) continue;
    headroom ??= spendHeadroom(state, strategy);
    const affordable = Math.floor(headroom.cents / price);
    const quantity = Math.min(row.decision.quantity, state.packsLeftToday, affordable);
    if (quantity >= 1 && (best === undefined || compareRows(row, best) < 0)) {
      best = row;
      bestQuantity = quantity;
      bestPrice = price;
    }
  }
  if (headroom === null) {
    // The first row in compareRows order: a scan, not a sort (this runs at every idle slot).
    let first: ScoreRow | undefined;
    for (const r of rows) if (first === undefined || compareRows(r, first) < 0) first = r;
    const why =
      first && first.decision.action === 'wait'
        ? `; best: ${first.pack_type}/${first.risk_level}: ${first.decision.reason}`
        : '';
    return { action: 'wait', reason: `no pack meets the strategy${why}` };
  }
  if (best)
    return {
      action: 'open',
      category: best.category,
      pack_type: best.pack_type,
      risk_level: best.risk_level,
      quantity: bestQuantity,
      priceCents: bestPrice,
      realizedEvCents: toCents(best.realized_ev),
    };
  const until = guardLiftsAt(headroom.limitedBy, now);
  return {
    action: 'wait',
    reason: guardMessage(headroom.limitedBy, strategy),
    ...(until !== undefined ? { until } : {}),
  };
}
