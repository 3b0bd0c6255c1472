import { describe, expect, it } from 'vitest';
import {
  checkPoolIntegrity,
  EV_GAP_FLOOR_CENTS,
  type EvBounds,
  type IntegrityReason,
} from '../../src/strategy/pool-integrity.js';
import { band, pool } from '../fixtures/pools.js';

/** A 150 USD pack whose cards are worth 140 USD a pull, as the server says. */
const honest = pool({
  pack_type: 'premium',
  price: 150,
  expected_value: 140,
  bands: [band('low', 0.9, 1, 100, 10), band('high', 0.1, 100, 2000, 2)],
  cards: [],
});
const ev140: EvBounds = { evLoCents: 14_000, evHiCents: 14_000 };

describe('checkPoolIntegrity', () => {
  it.each<[string, Partial<typeof honest>, EvBounds, number | undefined, IntegrityReason | null]>([
    ['honest pool, list price equal', {}, ev140, 15_000, null],
    ['honest pool, list not read', {}, ev140, undefined, null],
    ['pool price 0 (the premium bug)', { price: 0 }, ev140, 15_000, 'price_not_positive'],
    ['pool price 0, list not read', { price: 0 }, ev140, undefined, 'price_not_positive'],
    ['negative pool price', { price: -1 }, ev140, undefined, 'price_not_positive'],
    ['pool cheaper than the list', { price: 1.5 }, ev140, 15_000, 'price_mismatch'],
    ['pool dearer than the list', { price: 150.01 }, ev140, 15_000, 'price_mismatch'],
    ['list price 0 against a priced pool', {}, ev140, 0, 'price_mismatch'],
    [
      'band with min above max',
      { bands: [band('low', 0.9, 100, 1, 10), band('high', 0.1, 100, 2000, 2)] },
      ev140,
      15_000,
      'band_bounds',
    ],
    ['band with min = max', { bands: [band('flat', 1, 5, 5, 1)] }, ev140, 15_000, null],
    ['server EV 0, cards worth 140', { expected_value: 0 }, ev140, 15_000, 'ev_gap'],
    ['server EV 3x the cards', { expected_value: 420.01 }, ev140, 15_000, 'ev_gap'],
    // Gap exactly half of the larger (280 vs 140): not above the ratio, accepted.
    ['server EV 2x the cards (at the ratio)', { expected_value: 280 }, ev140, 15_000, null],
    ['server EV half the cards (at the ratio)', { expected_value: 70 }, ev140, 15_000, null],
    ['server EV a bit under half', { expected_value: 69.99 }, ev140, 15_000, 'ev_gap'],
    // Truncated pool: the server's EV inside [low, high] is no gap at all.
    [
      'server EV inside the bracket',
      { expected_value: 400 },
      { evLoCents: 10_000, evHiCents: 50_000 },
      15_000,
      null,
    ],
    [
      'server EV far above the bracket',
      { expected_value: 400 },
      { evLoCents: 5_000, evHiCents: 10_000 },
      15_000,
      'ev_gap',
    ],
    // Tiny pack: 0.20 vs 0.90 is a big ratio but under the 1 USD floor.
    [
      'tiny pack under the floor',
      { price: 1, expected_value: 0.2 },
      { evLoCents: 90, evHiCents: 90 },
      100,
      null,
    ],
    [
      'tiny pack over the floor',
      { price: 1, expected_value: 0 },
      { evLoCents: 101, evHiCents: 101 },
      100,
      'ev_gap',
    ],
  ])('%s', (_name, over, ev, listPriceCents, expected) => {
    const issue = checkPoolIntegrity({ ...honest, ...over }, ev, 0.5, listPriceCents);
    expect(issue?.reason ?? null).toBe(expected);
    if (issue) expect(issue.message).not.toBe('');
  });

  it('names the prices and the band in its messages', () => {
    expect(checkPoolIntegrity({ ...honest, price: 0 }, ev140, 0.5, 15_000)?.message).toBe(
      'pool price 0.00 USD is not positive',
    );
    expect(checkPoolIntegrity({ ...honest, price: 1.5 }, ev140, 0.5, 15_000)?.message).toBe(
      'pool price 1.50 USD differs from list price 150.00 USD',
    );
    expect(checkPoolIntegrity({ ...honest, bands: [band('low', 1, 100, 1, 10)] }, ev140, 0.5)?.message).toBe(
      'band low has min_value 100 above max_value 1',
    );
  });

  it('takes the gap ratio from the caller (1 never trips, 0 trips on any gap above the floor)', () => {
    const off = { ...honest, expected_value: 0 };
    expect(checkPoolIntegrity(off, ev140, 1)).toBeNull();
    const near = { ...honest, expected_value: 140 - (EV_GAP_FLOOR_CENTS + 1) / 100 };
    expect(checkPoolIntegrity(near, ev140, 0)?.reason).toBe('ev_gap');
    expect(checkPoolIntegrity(near, ev140, 0.5)).toBeNull();
  });
});
