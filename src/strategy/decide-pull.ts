/**
 * What to do with one pull, decided once, right when it arrives: sell back inside the window that
 * pays most, list it, or hold it. Uses the same `planForValue` rule the scorer priced.
 */

import { LATE_RATE } from '../api/rules.js';
import type { Pull } from '../api/schemas.js';
import { type Cents, toCents } from '../core/money.js';
import { planBoughtCard } from './card-score.js';
import { type PullPlan, planForValue } from './pull-policy.js';
import type { Strategy } from './strategy-schema.js';

export type PullDecision =
  | {
      action: 'sell_back';
      /** Sell before this instant (ms) to be paid `payoutCents`: the end of the current offer window. */
      deadline: number;
      payoutCents: Cents;
      rate: number;
      reason: 'below_threshold' | 'not_listable' | 'listing_not_better' | 'exit_sell_back';
    }
  /** The pull policy's listing plan as it is (pull-policy.ts). */
  | Extract<PullPlan, { action: 'list' }>
  | { action: 'hold'; reason: string };

export function decidePull(pull: Pull, strategy: Strategy, now: number): PullDecision {
  if (pull.kind === 'sealed_pack') return { action: 'hold', reason: 'sealed packs cannot be sold back' };
  const offer = pull.buyback;
  if (!offer) return { action: 'hold', reason: 'no buyback offer on this pull' };
  const freshUntil = Date.parse(offer.valid_until);
  const fresh = now < freshUntil;
  const rate = fresh ? offer.rate : offer.after.rate;
  const plan = planForValue(toCents(pull.value), strategy, rate);
  if (plan.action === 'list') return plan;
  const deadline = fresh ? freshUntil : Date.parse(offer.after.valid_until);
  return { action: 'sell_back', deadline, payoutCents: plan.payoutCents, rate, reason: plan.reason };
}

/** A card bought with a card purchase, as the sell side knows it (ledger row). */
export interface BoughtCardView {
  valueCents: Cents;
  pricePaidCents: Cents;
  /** End of its sell-back value lock (ms). */
  lockEndsAt: number;
}

/**
 * What to do with a card just bought: the strategy's `cards.exit` by `planBoughtCard`, the rule
 * its purchase was scored with. A sell-back is paid the locked offer until the lock ends.
 */
export function decideBoughtCard(card: BoughtCardView, strategy: Strategy, now: number): PullDecision {
  const plan = planBoughtCard(card.valueCents, card.pricePaidCents, strategy);
  if (plan.action === 'hold') return { action: 'hold', reason: plan.reason };
  if (plan.action === 'list') {
    const { priceCents, fill, saleCents, fallbackCents, expectedCents } = plan;
    return { action: 'list', priceCents, fill, saleCents, fallbackCents, expectedCents };
  }
  const locked = now <= card.lockEndsAt;
  return {
    action: 'sell_back',
    deadline: locked ? card.lockEndsAt : Number.POSITIVE_INFINITY,
    payoutCents: plan.payoutCents,
    rate: LATE_RATE,
    reason: plan.reason,
  };
}
