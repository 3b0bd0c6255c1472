import { describe, expect, it } from 'vitest';
import type { Pull } from '../../src/api/schemas.js';
import { decidePull } from '../../src/strategy/decide-pull.js';
import { fillProbability, listingPriceCents } from '../../src/strategy/listing-model.js';
import { strategy } from '../strategy-builder.js';
import { flatLife, linearFill } from './helpers.js';

const T0 = Date.parse('2026-03-01T12:00:00Z');
const FRESH_END = T0 + 5 * 60_000;
const AFTER_END = T0 + 7 * 86_400_000;

function cardPull(value: number): Pull {
  return {
    pull_id: 'p1',
    kind: 'card',
    item: { id: 'c1', name: 'Card', market_value: value },
    value,
    hit: { rarity_tier: 'x', bucket: 'b', bucket_odds: 0.5, is_chase: false, chase_label: null },
    buyback: {
      amount: value * 0.9,
      rate: 0.9,
      valid_until: new Date(FRESH_END).toISOString(),
      after: { amount: value * 0.8, rate: 0.8, valid_until: new Date(AFTER_END).toISOString() },
    },
  };
}

const s = strategy({
  sell: { threshold_usd: 50, list: { markup: 1.5, min_price_usd: 1, fill: linearFill } },
});

describe('decidePull', () => {
  it.each([
    [
      'below threshold, inside the 0.9 window',
      49.99,
      T0,
      { action: 'sell_back', deadline: FRESH_END, payoutCents: 4499, rate: 0.9 },
    ],
    [
      'below threshold, 1 ms before the window ends',
      10,
      FRESH_END - 1,
      { action: 'sell_back', deadline: FRESH_END, payoutCents: 900 },
    ],
    [
      'below threshold, at the window end: 0.8 until the lock ends',
      10,
      FRESH_END,
      { action: 'sell_back', deadline: AFTER_END, payoutCents: 800, rate: 0.8 },
    ],
    ['at the threshold: listed at markup', 50, T0, { action: 'list', priceCents: 7500 }],
    ['1.005 × markup rounds half away from zero', 100.01, T0, { action: 'list', priceCents: 15002 }],
  ] as const)('%s', (_n, value, now, expected) => {
    expect(decidePull(cardPull(value), s, now)).toMatchObject(expected);
  });

  it('sells back when the listing is not expected to beat 0.9 now', () => {
    // markup 2 → fill 0 → 0.8 fallback < 0.9: sell back.
    const greedy = strategy({ sell: { list: { ...flatLife, markup: 2, fill: linearFill } } });
    expect(decidePull(cardPull(100), greedy, T0)).toMatchObject({
      action: 'sell_back',
      reason: 'listing_not_better',
    });
    const stubborn = strategy({
      sell: { list: { ...flatLife, markup: 2, fill: linearFill, only_when_better: false } },
    });
    expect(decidePull(cardPull(100), stubborn, T0)).toMatchObject({ action: 'list', priceCents: 20000 });
  });

  it('holds sealed packs and pulls without an offer', () => {
    const sealed: Pull = {
      pull_id: 'p2',
      kind: 'sealed_pack',
      item: { id: 's', name: 'Sealed' },
      value: 3,
      hit: { rarity_tier: 'x', bucket: 'c', bucket_odds: 0.1, is_chase: false, chase_label: null },
      buyback: null,
    };
    expect(decidePull(sealed, s, T0)).toMatchObject({ action: 'hold', reason: /sealed/ });
    expect(decidePull({ ...cardPull(10), buyback: null }, s, T0)).toMatchObject({ action: 'hold' });
  });
});

describe('listingPriceCents', () => {
  it.each([
    ['markup within the cap', 10000, 1.5, 1, 15000],
    ['capped at 2x market value', 10000, 2, 1, 20000],
    ['kept strictly above the marketplace minimum', 80, 1.1, 1, 101],
    ['null when 2x market is not above the minimum', 50, 1.5, 1, null],
    ['rounded half away from zero', 333, 1.5, 0, 500],
  ])('%s', (_n, market, markup, min, expected) => {
    const st = strategy({ sell: { list: { min_price_usd: min } } });
    expect(listingPriceCents(market, markup, st)).toBe(expected);
  });
});

describe('fillProbability', () => {
  const hazard = { model: 'hazard' as const, fills_per_day_at_value: 1, price_sensitivity: 4 };
  const logistic = { model: 'logistic' as const, midpoint: 1.5, steepness: 6, max_fill: 0.9 };
  it.each([
    ['hazard at value, 3 days: 1 - e^-3', hazard, 10000, 3, 0.950212931632136],
    ['hazard at 1.4x, 3 days: 1 - exp(-3 e^-1.6)', hazard, 14000, 3, 0.4543019913615408],
    ['hazard at 2x, 3 days', hazard, 20000, 3, 0.05346460812592735],
    ['hazard, no time: 0', hazard, 10000, 0, 0],
    ['logistic at the midpoint: max_fill / 2', logistic, 15000, 3, 0.45],
    ['piecewise at 1.5: interpolated', linearFill, 15000, 3, 0.4],
    ['piecewise below the first point: flat', linearFill, 5000, 3, 0.8],
    ['piecewise above the last point: flat', linearFill, 20000, 3, 0],
  ] as const)('%s', (_n, model, price, days, expected) => {
    expect(fillProbability(price, 10000, model, days)).toBeCloseTo(expected, 9);
  });
});
