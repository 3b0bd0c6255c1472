/**
 * What the bot does with a pull of a given kind and value, decided by the strategy's own
 * `decidePull` (the function the runner calls) and cached in typed arrays: a backtest path then
 * looks a decision up by index instead of building a Pull object per simulated pull.
 */
import type { Pull } from '../../api/schemas.js';
import { iso } from '../../core/clock.js';
import { applyRate, roundHalfAway } from '../../core/money.js';
import { planBoughtCard } from '../../strategy/card-score.js';
import { decidePull } from '../../strategy/decide-pull.js';
import { FRESH_RATE, LATE_RATE } from '../../strategy/listing-model.js';
import { freshEnds, lockEnds, SPEC_SELL_BACK_RULES } from '../../strategy/market-laws.js';
import { sealedValueCents } from '../../strategy/pull-policy.js';
import type { Strategy } from '../../strategy/strategy-schema.js';

export const ACT_SELL = 0;
export const ACT_LIST = 1;
export const ACT_HOLD = 2;

/** The spec's fresh sell-back window: the bot sells at once, so well inside it. */

export class PullPlans {
  private capacity = 64;
  size = 0;
  action = new Uint8Array(this.capacity);
  /** Sell-back payout (ACT_SELL) or, for ACT_HOLD, what the holding is worth (cents, may be fractional). */
  amount = new Float64Array(this.capacity);
  /** Listing price, its fill probability within max_days, and the 0.8 fallback. */
  listPrice = new Float64Array(this.capacity);
  fill = new Float64Array(this.capacity);
  fallback = new Float64Array(this.capacity);
  /** What a filled listing pays after the marketplace's cut (the strategy's fee assumption). */
  sale = new Float64Array(this.capacity);
  /** Value at pull, cents (rounded as the API would report it). */
  value = new Float64Array(this.capacity);
  private readonly index = new Map<number, number>();
  /**
   * The offer's two deadlines as the API writes them: the same for every pull of this model, so
   * formatted once (formatting them per plan was a visible part of building an engine).
   */
  private readonly offerEnds: OfferEnds;

  constructor(
    private readonly strategy: Strategy,
    private readonly now: number,
  ) {
    this.offerEnds = {
      fresh: iso(freshEnds(now, SPEC_SELL_BACK_RULES)),
      late: iso(lockEnds(now, SPEC_SELL_BACK_RULES)),
    };
  }

  /** Index of the plan for a card (`sealed` false) or a sealed pack worth `valueCents`. */
  planFor(valueCents: number, sealed: boolean): number {
    const key = sealed ? -1 - valueCents : valueCents;
    const hit = this.index.get(key);
    if (hit !== undefined) return hit;
    const i = this.add(valueCents, sealed);
    this.index.set(key, i);
    return i;
  }

  private add(valueCents: number, sealed: boolean): number {
    if (this.size === this.capacity) this.grow();
    const i = this.size++;
    const cents = roundHalfAway(valueCents);
    this.value[i] = cents;
    const decision = decidePull(syntheticPull(cents, sealed, this.offerEnds), this.strategy, this.now);
    if (decision.action === 'sell_back') {
      this.action[i] = ACT_SELL;
      this.amount[i] = decision.payoutCents;
    } else if (decision.action === 'list') {
      this.action[i] = ACT_LIST;
      this.listPrice[i] = decision.priceCents;
      this.fill[i] = decision.fill;
      this.fallback[i] = decision.fallbackCents;
      this.sale[i] = decision.saleCents;
    } else {
      // Sealed packs (and anything the bot holds) are worth what the strategy says they are;
      // the unrounded atom value keeps static means identical to the scorer's.
      this.action[i] = ACT_HOLD;
      this.amount[i] = sealedValueCents(sealed ? valueCents : cents, this.strategy);
    }
    return i;
  }

  private grow(): void {
    this.capacity *= 2;
    const g8 = (a: Uint8Array) => {
      const b = new Uint8Array(this.capacity);
      b.set(a);
      return b;
    };
    const g64 = (a: Float64Array) => {
      const b = new Float64Array(this.capacity);
      b.set(a);
      return b;
    };
    this.action = g8(this.action);
    this.amount = g64(this.amount);
    this.listPrice = g64(this.listPrice);
    this.fill = g64(this.fill);
    this.fallback = g64(this.fallback);
    this.sale = g64(this.sale);
    this.value = g64(this.value);
  }
}

/** When a pull's fresh sell-back offer and its later one end (ISO time stamps). */
interface OfferEnds {
  fresh: string;
  late: string;
}

/** A pull as the purchase response would carry it, right when it arrives (`ends`: its offer's ends). */
function syntheticPull(cents: number, sealed: boolean, ends: OfferEnds): Pull {
  const value = cents / 100;
  const hit = { rarity_tier: 'sim', bucket: 'sim', bucket_odds: 1, is_chase: false, chase_label: null };
  if (sealed)
    return {
      pull_id: 'backtest',
      kind: 'sealed_pack',
      item: { id: 'backtest', name: 'sealed' },
      value,
      hit,
      buyback: null,
    };
  return {
    pull_id: 'backtest',
    kind: 'card',
    item: { id: 'backtest', name: 'card', market_value: value },
    value,
    hit,
    buyback: {
      amount: applyRate(cents, FRESH_RATE) / 100,
      rate: FRESH_RATE,
      valid_until: ends.fresh,
      after: {
        amount: applyRate(cents, LATE_RATE) / 100,
        rate: LATE_RATE,
        valid_until: ends.late,
      },
    },
  };
}

/** What the `list` exit does with a card bought now: list it at this price, or sell it back at once. */
export type CardExit = { list: true; priceCents: number } | { list: false };

/**
 * The `list` exit of a card worth `valueCents` with sell-back basis `basisCents` (min(price paid,
 * value at purchase)): what `planBoughtCard` plans for it, the rule the scorer and the bot share
 * (listed at the strategy's markup within the marketplace's rules; sold back at once when no price
 * is allowed, or with `only_when_better` when listing is not expected to beat selling back).
 */
export function listExit(valueCents: number, basisCents: number, strategy: Strategy): CardExit {
  // The basis is at most the value, so a purchase at the basis has this very basis.
  const plan = planBoughtCard(valueCents, basisCents, strategy);
  return plan.action === 'list' ? { list: true, priceCents: plan.priceCents } : { list: false };
}
