/**
 * Budget guards of a strategy, as pure functions of the running totals the runner (or the
 * backtest) keeps: kill switch, stop-loss on the marked P&L, and the spend headroom left by the
 * daily cap, the total cap and the balance reserve. Whatever may still cost money counts against
 * every cap at its highest possible amount: orders whose outcome is unknown (`worstCaseCents`).
 */

import { CARD_FEE_USD } from '../api/rules.js';
import { nextUtcMidnight } from '../core/clock.js';
import { type Cents, roundHalfAway, toCents } from '../core/money.js';
import type { Strategy } from './strategy-schema.js';

export interface BudgetState {
  balanceCents: Cents;
  /** Spent on packs since the last UTC midnight. */
  spentTodayCents: Cents;
  /** Spent on packs since the bot started trading with this strategy. */
  spentTotalCents: Cents;
  /** Marked profit and loss so far (negative = loss), what the stop-loss reads: `markedPnlCents`. */
  markedPnlCents: Cents;
  /** Operator's kill switch (e.g. from a file or signal); the strategy has its own too. */
  killSwitch: boolean;
  /**
   * The most that orders not known to be charged or not (recorded, on the wire, in doubt) can
   * still have cost, beyond the spend above (`worstCaseCents` of each). Absent: none.
   */
  inDoubtCents?: Cents;
}

/** An order whose outcome is not known yet, as much of it as its worst case needs. */
export interface OpenOrder {
  operation: 'pack' | 'card';
  /** Price per pack planned, or a card order's `max_price` (cents). */
  unitPriceCents: Cents | null;
  /** Packs in a pack order; 1 for a card. */
  quantity: number;
  /** Times its request was sent (0 while only recorded). */
  attempts: number;
}

/**
 * The most an order not yet settled can cost: its whole price (a card's `max_price` and the
 * buyer's fee), once per attempt that left (a service that forgot the key charges each as a new
 * order), and once before the first leaves.
 */
export function worstCaseCents(o: OpenOrder): Cents {
  const each =
    o.operation === 'card'
      ? (o.unitPriceCents ?? 0) + toCents(CARD_FEE_USD)
      : (o.unitPriceCents ?? 0) * Math.max(1, o.quantity);
  return each * Math.max(1, o.attempts);
}

export type BudgetGuard = 'daily_spend' | 'total_spend' | 'balance_reserve';

export interface Headroom {
  cents: Cents;
  limitedBy: BudgetGuard;
}

/** What stops all opening: the operator's switch, the strategy's own, and the stop-loss. */
export type BudgetPause = 'kill_switch' | 'strategy_kill_switch' | 'stop_loss';

/**
 * Every guard that stops all opening now, in this order (the running bot, the offline status and
 * the dashboard list them all; a decision needs only the first: `budgetBlock`).
 */
export function budgetPauses(
  state: BudgetState,
  strategy: Strategy,
): { pause: BudgetPause; reason: string }[] {
  const out: { pause: BudgetPause; reason: string }[] = [];
  if (state.killSwitch) out.push({ pause: 'kill_switch', reason: 'kill switch is on' });
  if (strategy.budget.kill_switch)
    out.push({ pause: 'strategy_kill_switch', reason: 'kill switch is on (budget.kill_switch)' });
  if (stopLossHit(state, strategy))
    out.push({
      pause: 'stop_loss',
      reason: `stop-loss: marked loss reached ${strategy.budget.stop_loss_usd} USD`,
    });
  return out;
}

/**
 * The marked P&L, the one definition: the bot's budget totals (and so `packbot status`, the
 * dashboard and the read API) and every backtest path ask this function, so the stop-loss trips
 * at the same order in both. It is the cash change since the start (sell-back payouts and sale
 * proceeds, less spend) plus what is still ours at what it can surely bring back: cards held or
 * listed at their sell-back value (listing a card is not losing it), and sealed packs, which
 * cannot be sold back, at `sell.sealed_value_fraction` of their value (`sealedValueCents`).
 *
 * `sealedWorthCents` is the sum of those unrounded worths (a fraction of a value is fractional
 * cents); it is rounded once here, so the bot summing pack by pack and a path keeping a running
 * total mark the same packs alike. The other parts are whole cents. Called at every purchase slot
 * of a backtest: it stays this small.
 */
export function markedPnlCents(
  cashChangeCents: Cents,
  heldSellBackCents: Cents,
  listedSellBackCents: Cents,
  sealedWorthCents: number,
): Cents {
  return cashChangeCents + heldSellBackCents + listedSellBackCents + roundHalfAway(sealedWorthCents);
}

/** The strategy's stop-loss: the marked loss (`markedPnlCents`) reached it. */
export function stopLossHit(state: Pick<BudgetState, 'markedPnlCents'>, strategy: Strategy): boolean {
  return state.markedPnlCents <= -toCents(strategy.budget.stop_loss_usd);
}

/** A reason that stops all opening, or null. */
export function budgetBlock(
  state: BudgetState,
  strategy: Strategy,
): { reason: string; guard: 'kill_switch' | 'stop_loss' } | null {
  if (state.killSwitch || strategy.budget.kill_switch)
    return { reason: 'kill switch is on', guard: 'kill_switch' };
  if (stopLossHit(state, strategy))
    return {
      reason: `stop-loss: marked loss reached ${strategy.budget.stop_loss_usd} USD`,
      guard: 'stop_loss',
    };
  return null;
}

/** How much more may be spent now, and which guard sets that amount. */
export function spendHeadroom(state: BudgetState, strategy: Strategy): Headroom {
  const b = strategy.budget;
  const open = state.inDoubtCents ?? 0;
  // The least of the three, the first in this order on a tie (a backtest asks at every slot).
  let cents = toCents(b.max_daily_spend_usd) - state.spentTodayCents - open;
  let limitedBy: BudgetGuard = 'daily_spend';
  const total = toCents(b.max_total_spend_usd) - state.spentTotalCents - open;
  if (total < cents) {
    cents = total;
    limitedBy = 'total_spend';
  }
  // The balance read may not show an open order's charge yet.
  const reserve = state.balanceCents - toCents(b.min_balance_usd) - open;
  if (reserve < cents) {
    cents = reserve;
    limitedBy = 'balance_reserve';
  }
  return { cents: Math.max(0, cents), limitedBy };
}

export function guardMessage(guard: BudgetGuard, strategy: Strategy): string {
  const b = strategy.budget;
  if (guard === 'daily_spend') return `daily spend cap ${b.max_daily_spend_usd} USD reached`;
  if (guard === 'total_spend') return `total spend cap ${b.max_total_spend_usd} USD reached`;
  return `balance reserve ${b.min_balance_usd} USD reached`;
}

/** When a guard can lift by itself: the daily cap at the next UTC midnight; the others never. */
export function guardLiftsAt(guard: BudgetGuard, now: number): number | undefined {
  return guard === 'daily_spend' ? nextUtcMidnight(now) : undefined;
}
