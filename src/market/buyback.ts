/**
 * Sell-back offers of the simulator's acquisitions (spec "States and transitions"): the law is
 * `sellBackOffer` (src/strategy/market-laws.ts). A bought card's basis is the lower of price paid and value
 * at purchase until the lock ends.
 */
import type { Cents } from '../core/money.js';
import { type Offer, sellBackOffer } from '../strategy/market-laws.js';
import type { Rules } from './world-schema.js';

export interface Acquisition {
  id: string; // pull_id, or a bought card's (rules.purchased_card_pull_id)
  kind: 'pull' | 'purchase';
  /** A card purchase's transaction_id (its sale), whatever the card's pull_id is. */
  transactionId?: string;
  slot: number;
  accountId: string;
  at: number;
  /** Value at pull (pulls) or at purchase (card purchases). */
  valueCents: Cents;
  /** What the locked offer is based on: value at pull, or min(price paid, value at purchase). */
  basisCents: Cents;
  sale: { transactionId: string; payoutCents: Cents; rate: number; at: number } | null;
}

export type { Offer } from '../strategy/market-laws.js';

/** The offer for acquisition `a` at `now` when the card is worth `currentValueCents` (`sellBackOffer`). */
export function offerAt(a: Acquisition, currentValueCents: Cents, now: number, rules: Rules): Offer {
  return sellBackOffer(a.kind, a.at, a.basisCents, currentValueCents, now, rules);
}
