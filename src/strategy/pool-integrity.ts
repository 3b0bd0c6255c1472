/**
 * Price integrity of one pool read: whether its numbers are consistent enough to spend money on.
 * The pack list's `price` is what is charged (spec), so a pool that prices the pack otherwise, at
 * zero, or whose bands or expected value contradict themselves is never opened: a wrong price
 * skips the EV check and sizes orders as if packs were free.
 */
import type { Band, PackPool } from '../api/schemas.js';
import { type Cents, toCents } from '../core/money.js';

/** Stable reasons (the `reason` label of `packbot_pool_rejected_total`). */
export const INTEGRITY_REASONS = ['price_not_positive', 'price_mismatch', 'band_bounds', 'ev_gap'] as const;
export type IntegrityReason = (typeof INTEGRITY_REASONS)[number];

export interface IntegrityIssue {
  reason: IntegrityReason;
  message: string;
}

/**
 * Below this absolute gap (1 USD) the EV check never trips: on a cheap pack, rounding of a few
 * card values is a large share of the expected value and says nothing about the price.
 */
export const EV_GAP_FLOOR_CENTS = 100;

/** What the checks read of a pool body. */
export type PoolData = Pick<PackPool, 'expected_value'> & {
  bands: readonly Pick<Band, 'bucket_id' | 'min_value' | 'max_value'>[];
};

/** Bounds of our EV of one pull in cents (equal unless the pool is truncated). */
export interface EvBounds {
  evLoCents: number;
  evHiCents: number;
}

const usd = (cents: number): string => (cents / 100).toFixed(2);

/** The pool's price against zero and against the pack list's price (undefined: list not read). */
export function checkPrices(priceCents: Cents, listPriceCents: Cents | undefined): IntegrityIssue | null {
  if (!(priceCents > 0))
    return { reason: 'price_not_positive', message: `pool price ${usd(priceCents)} USD is not positive` };
  if (listPriceCents !== undefined && listPriceCents !== priceCents)
    return {
      reason: 'price_mismatch',
      message: `pool price ${usd(priceCents)} USD differs from list price ${usd(listPriceCents)} USD`,
    };
  return null;
}

/**
 * The pool against itself: every band's bounds in order, and the server's `expected_value` within
 * `maxEvGapRatio` of the larger of it and our EV (or within EV_GAP_FLOOR_CENTS). Needs no list
 * price, so snapshots are checked too. O(bands).
 */
export function checkPoolData(pool: PoolData, ev: EvBounds, maxEvGapRatio: number): IntegrityIssue | null {
  for (const b of pool.bands)
    if (b.min_value > b.max_value)
      return {
        reason: 'band_bounds',
        message: `band ${b.bucket_id} has min_value ${b.min_value} above max_value ${b.max_value}`,
      };
  // Distance from the server's EV to our bracket [low, high]: zero when it lies inside.
  const server = toCents(pool.expected_value);
  const gap =
    server < ev.evLoCents ? ev.evLoCents - server : server > ev.evHiCents ? server - ev.evHiCents : 0;
  if (gap > EV_GAP_FLOOR_CENTS && gap > maxEvGapRatio * Math.max(server, ev.evHiCents))
    return {
      reason: 'ev_gap',
      message:
        `pool expected_value ${usd(server)} USD is ${usd(gap)} USD from its cards' EV ` +
        `(more than max_ev_gap_ratio ${maxEvGapRatio} of the larger)`,
    };
  return null;
}

/** Every check, first failure first: what `scorePool` applies to a pool read. */
export function checkPoolIntegrity(
  pool: PoolData & Pick<PackPool, 'price'>,
  ev: EvBounds,
  maxEvGapRatio: number,
  listPriceCents?: Cents,
): IntegrityIssue | null {
  return checkPrices(toCents(pool.price), listPriceCents) ?? checkPoolData(pool, ev, maxEvGapRatio);
}
