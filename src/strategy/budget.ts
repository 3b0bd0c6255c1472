/**
 * Budget guards of a strategy, as pure functions of the running totals the runner (or the
 * backtest) keeps: kill switch, stop-loss on realised loss, and the spend headroom left by the
 * daily cap, the total cap and the balance reserve.
 */

import { nextUtcMidnight } from '../core/clock.js';
import { type Cents, toCents } from '../core/money.js';
import type { Strategy } from './strategy-schema.js';

export interface BudgetState {
  balanceCents: Cents;
  /** Spent on packs since the last UTC midnight. */
  spentTodayCents: Cents;
  /** Spent on packs since the bot started trading with this strategy. */
  spentTotalCents: Cents;
  /** Realised profit and loss so far (negative = loss). */
  realizedPnlCents: Cents;
  /** Operator's kill switch (e.g. from a file or signal); the strategy has its own too. */
  killSwitch: boolean;
}

export type BudgetGuard = 'daily_spend' | 'total_spend' | 'balance_reserve';

export interface Headroom {
  cents: Cents;
  limitedBy: BudgetGuard;
}

/** A reason that stops all opening, or null. */
export function budgetBlock(
  state: BudgetState,
  strategy: Strategy,
): { reason: string; guard: 'kill_switch' | 'stop_loss' } | null {
  if (state.killSwitch || strategy.budget.kill_switch)
    return { reason: 'kill switch is on', guard: 'kill_switch' };
  const stop = toCents(strategy.budget.stop_loss_usd);
  if (state.realizedPnlCents <= -stop)
    return {
      reason: `stop-loss: realised loss reached ${strategy.budget.stop_loss_usd} USD`,
      guard: 'stop_loss',
    };
  return null;
}

/** How much more may be spent now, and which guard sets that amount. */
export function spendHeadroom(state: BudgetState, strategy: Strategy): Headroom {
  const b = strategy.budget;
  // The least of the three, the first in this order on a tie (a backtest asks at every slot).
  let cents = toCents(b.max_daily_spend_usd) - state.spentTodayCents;
  let limitedBy: BudgetGuard = 'daily_spend';
  const total = toCents(b.max_total_spend_usd) - state.spentTotalCents;
  if (total < cents) {
    cents = total;
    limitedBy = 'total_spend';
  }
  const reserve = state.balanceCents - toCents(b.min_balance_usd);
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
