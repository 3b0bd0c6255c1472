/**
 * Sell-back offers (spec "States and transitions"), pure. A pulled card pays the fresh rate of its
 * value at pull inside the fresh window, then the locked rate of that value until the lock ends,
 * then the market rate of the current value. A bought card's basis is the lower of price paid and
 * value at purchase until the lock ends.
 */
import { applyRate, type Cents } from '../core/money.js';
import type { Rules } from './world-schema.js';

export interface Acquisition {
  id: string; // pull_id, or the card purchase's transaction_id
  kind: 'pull' | 'purchase';
  slot: number;
  accountId: string;
  at: number;
  /** Value at pull (pulls) or at purchase (card purchases). */
  valueCents: Cents;
  /** What the locked offer is based on: value at pull, or min(price paid, value at purchase). */
  basisCents: Cents;
  sale: { transactionId: string; payoutCents: Cents; rate: number; at: number } | null;
}

export interface Offer {
  rate: number;
  basisCents: Cents;
  amountCents: Cents;
  lockedUntil: number | null;
}

export function lockEnds(a: Acquisition, rules: Rules): number {
  return a.at + rules.lock_days * 86_400_000;
}

export function freshEnds(a: Acquisition, rules: Rules): number {
  return a.at + rules.fresh_window_seconds * 1000;
}

export function offerAt(a: Acquisition, currentValueCents: Cents, now: number, rules: Rules): Offer {
  const lockUntil = lockEnds(a, rules);
  let rate: number;
  let basis: Cents;
  if (a.kind === 'pull' && now <= freshEnds(a, rules)) {
    rate = rules.fresh_rate;
    basis = a.basisCents;
  } else if (now <= lockUntil) {
    rate = a.kind === 'pull' ? rules.locked_rate : rules.purchased_card_rate;
    basis = a.basisCents;
  } else {
    rate = rules.market_rate;
    basis = currentValueCents;
  }
  return {
    rate,
    basisCents: basis,
    amountCents: applyRate(basis, rate),
    lockedUntil: now <= lockUntil ? lockUntil : null,
  };
}
