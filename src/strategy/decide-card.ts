/**
 * Whether to buy a shop card the scorer wants, and the most to pay: the strategy's card caps
 * (`cards.max_per_day`, `cards.max_daily_spend_usd`, with the buyer's fee) and its budget (the
 * guards, the spend headroom of packs and cards together), written once for the bot's card
 * buyer and the backtest's shop loop. The scorer's price (`card-score.ts`) is where the edge
 * ends; this is where the money does.
 */
import { CARD_FEE_USD } from '../api/rules.js';
import { nextUtcMidnight } from '../core/clock.js';
import { type Cents, toCents } from '../core/money.js';
import { type BudgetState, budgetBlock, spendHeadroom } from './budget.js';
import type { Strategy } from './strategy-schema.js';

export interface CardBuyState extends BudgetState {
  /** Card orders booked since UTC midnight. */
  cardsToday: number;
  /** What they charged since UTC midnight: prices and fees. */
  cardOutlayTodayCents: Cents;
}

export type CardBuyDecision =
  /** Send with this `max_price` (cents, before the fee): never above the scorer's. */
  | { action: 'buy'; maxPriceCents: Cents }
  /** This card does not fit what is left; a cheaper one may. */
  | { action: 'skip'; reason: string }
  /** No card now: a cap or a guard stops buying (until a known instant, where there is one). */
  | { action: 'stop'; reason: string; until?: number };

/** What the caps leave for one more card now, before the fee; or why no card now. */
export type CardRoom = { action: 'room'; cents: Cents } | { action: 'stop'; reason: string; until?: number };

/**
 * The most one more card may cost now (cents, before the fee) under the card caps and the
 * budget, or a stop. It depends on the state only, not on the card: a loop over many offers asks
 * it once per purchase (`decideCardBuy` is this, per card).
 */
export function cardBuyRoom(
  state: CardBuyState,
  strategy: Strategy,
  now: number,
  maxPerDay: number = strategy.cards.max_per_day,
): CardRoom {
  const cards = strategy.cards;
  if (state.cardsToday >= Math.min(maxPerDay, cards.max_per_day))
    return {
      action: 'stop',
      reason: `cards.max_per_day ${cards.max_per_day} reached`,
      until: nextUtcMidnight(now),
    };
  const block = budgetBlock(state, strategy);
  if (block) return { action: 'stop', reason: block.reason };
  const fee = toCents(CARD_FEE_USD);
  const cardRoom = toCents(cards.max_daily_spend_usd) - state.cardOutlayTodayCents - fee;
  const budgetRoom = spendHeadroom(state, strategy).cents - fee;
  return { action: 'room', cents: Math.min(cardRoom, budgetRoom) };
}

/**
 * `priceCents` is the shop's price now, `scorerMaxCents` the most the scorer pays for the card's
 * edge. `maxPerDay` may lower the strategy's count cap (a world's own, in a backtest).
 */
export function decideCardBuy(
  state: CardBuyState,
  priceCents: Cents,
  scorerMaxCents: Cents,
  strategy: Strategy,
  now: number,
  maxPerDay: number = strategy.cards.max_per_day,
): CardBuyDecision {
  const r = cardBuyRoom(state, strategy, now, maxPerDay);
  if (r.action === 'stop') return r;
  const room = Math.min(scorerMaxCents, r.cents);
  if (room < priceCents) return { action: 'skip', reason: 'does not fit what is left today' };
  return { action: 'buy', maxPriceCents: room };
}
