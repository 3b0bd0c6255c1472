/**
 * A bought card as a ledger holding. The service sells a bought card back by the purchase's
 * `transaction_id` (its `pull_id` in the vault), at 0.8 of min(price paid, value at purchase) for
 * 7 days, then 0.8 of market value (spec): the row carries that locked offer and its end, so the
 * sell side and the report treat it like a pull whose fresh window has passed.
 */
import type { CardPurchaseResponse } from '../api/schemas.js';
import { toCents } from '../core/money.js';
import { lockEnds, SPEC_SELL_BACK_RULES, sellBackAmount } from '../strategy/market-laws.js';
import type { NewPull } from './types.js';

export interface BoughtCard {
  /** The purchase's transaction id (the vault's `pull_id` of the card). */
  transactionId: string;
  cardId: string;
  name: string;
  priceCents: number;
  /** Market value at purchase. */
  valueCents: number;
  /** `shop` or `listing`. */
  source: string;
  boughtAt: number;
}

export function boughtCardFromResponse(r: CardPurchaseResponse, boughtAt: number): BoughtCard {
  return {
    transactionId: r.transaction_id,
    cardId: r.card_id,
    name: r.item.name,
    priceCents: toCents(r.price),
    valueCents: toCents(r.item.market_value),
    source: r.source,
    boughtAt,
  };
}

/** The holding row of a bought card. */
export function boughtCardPull(c: BoughtCard): NewPull {
  const rules = SPEC_SELL_BACK_RULES;
  const basis = Math.min(c.priceCents, c.valueCents);
  return {
    pullId: c.transactionId,
    cardId: c.cardId,
    name: c.name,
    kind: 'card',
    valueCents: c.valueCents,
    bucket: c.source,
    rarityTier: 'n/a',
    isChase: false,
    buybackCents: sellBackAmount('purchase', c.boughtAt, basis, c.valueCents, c.boughtAt, rules),
    buybackRate: rules.purchased_card_rate,
    buybackValidUntil: lockEnds(c.boughtAt, rules),
    // After the lock the offer follows the market value, unknown in advance.
    afterCents: null,
    afterRate: rules.market_rate,
    afterValidUntil: null,
    pulledAt: c.boughtAt,
    origin: 'purchase',
    pricePaidCents: c.priceCents,
  };
}
