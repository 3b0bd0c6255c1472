/**
 * The purchase limits of a key and its account, in one place: the minimum gap between purchases
 * (packs, and cards when the world's rules speed-limit them), the daily pack count of a key, and the
 * daily card count and spend caps. Days are UTC days of the injected clock.
 */
import { DailyCardLimitReachedError, DailyLimitReachedError, RateLimitedError } from '../api/errors.js';
import { nextUtcMidnight, utcDay } from '../core/clock.js';
import { type Cents, toCents } from '../core/money.js';
import { stamp } from './server-time.js';
import type { AccountState, KeyState } from './state.js';
import type { Rules } from './world-schema.js';

/** When a key whose last purchase was at `last` may buy again (`now` if it never bought). */
export function nextPurchaseAt(last: number | null, minSecondsBetween: number, now: number): number {
  return last === null ? now : last + minSecondsBetween * 1000;
}

/** Throws RateLimitedError (whole seconds to wait, at least 1) while the gap since `last` is short. */
export function checkRate(last: number | null, minSecondsBetween: number, now: number): void {
  const nextAt = nextPurchaseAt(last, minSecondsBetween, now);
  if (now < nextAt) throw new RateLimitedError(Math.max(1, Math.ceil((nextAt - now) / 1000)));
}

/** Packs the account has bought today. */
export function packsToday(a: AccountState, now: number): number {
  return a.packDay === utcDay(now) ? a.packsToday : 0;
}

/** Throws DailyLimitReachedError when `quantity` more packs would pass the key's daily limit. */
export function checkPackDaily(
  rules: Rules,
  key: KeyState,
  used: number,
  quantity: number,
  now: number,
): void {
  if (used + quantity > key.maxPacksPerDay)
    throw new DailyLimitReachedError(key.maxPacksPerDay, used, stamp(rules, nextUtcMidnight(now)));
}

/**
 * Counts a pack order of `quantity` against the key's gap and the account's day (`used` packs
 * before it); returns what puts the counters back when the order is refunded.
 */
export function countPacks(
  key: KeyState,
  account: AccountState,
  used: number,
  quantity: number,
  now: number,
) {
  const prevLast = key.lastPurchaseAt;
  const prevDay = account.packDay;
  const prevCount = account.packsToday;
  key.lastPurchaseAt = now;
  account.packDay = utcDay(now);
  account.packsToday = used + quantity;
  return (): void => {
    key.lastPurchaseAt = prevLast;
    account.packDay = prevDay;
    account.packsToday = prevCount;
  };
}

/** The account's card purchases today: the day, their count and spend. */
export interface CardDay {
  day: number;
  count: number;
  spend: Cents;
}

export function cardDay(a: AccountState, now: number): CardDay {
  const day = utcDay(now);
  return {
    day,
    count: a.cardDay === day ? a.cardsToday : 0,
    spend: a.cardDay === day ? a.cardSpendTodayCents : 0,
  };
}

/** Throws DailyCardLimitReachedError when one more card at `price` passes a daily cap. */
export function checkCardCaps(rules: Rules, today: CardDay, price: Cents): void {
  if (today.count + 1 > rules.card_daily_count_cap)
    throw new DailyCardLimitReachedError(
      `daily card purchase count cap reached (${rules.card_daily_count_cap})`,
    );
  if (today.spend + price > toCents(rules.card_daily_spend_cap))
    throw new DailyCardLimitReachedError(
      `daily card spend cap of $${rules.card_daily_spend_cap} would be exceeded`,
    );
}

/** Counts a card purchase at `price` against the key's gap and the account's day. */
export function countCard(
  key: KeyState,
  account: AccountState,
  today: CardDay,
  price: Cents,
  now: number,
): void {
  key.lastCardPurchaseAt = now;
  account.cardDay = today.day;
  account.cardsToday = today.count + 1;
  account.cardSpendTodayCents = today.spend + price;
}
