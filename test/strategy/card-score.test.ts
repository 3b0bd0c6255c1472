import { describe, expect, it } from 'vitest';
import { LATE_RATE } from '../../src/api/rules.js';
import type { ShopCard } from '../../src/api/schemas.js';
import {
  cardRealizableCents,
  highestPriceCents,
  scoreShop,
  scoreShopCard,
  watches,
} from '../../src/strategy/card-score.js';
import { listingLife } from '../../src/strategy/listing-life.js';
import { strategy } from '../strategy-builder.js';
import { flatLife } from './helpers.js';

const card = (price: number, value: number, over: Partial<ShopCard> = {}): ShopCard => ({
  id: `c-${price}-${value}`,
  name: 'Charizard Holo',
  market_value: value,
  price,
  sale_status: 'shop',
  grading_company: 'PSA',
  grading_rank: 9,
  ...over,
});

const enabled = (cards: object = {}, list: object = {}) =>
  strategy({ cards: { enabled: true, ...cards }, sell: { list } });

describe('cardRealizableCents: the exit priced like a pull, at the lock basis min(price, value)', () => {
  const flat = enabled({}, { ...flatLife, markup: 1.2 });
  it.each([
    [
      'sell back: 0.8 of the price when bought under value',
      enabled({ exit: 'sell_back' }),
      6000,
      10000,
      4800,
    ],
    ['sell back: 0.8 of the value when bought over it', enabled({ exit: 'sell_back' }), 12000, 10000, 8000],
    ['hold: the market value', enabled({ exit: 'hold' }), 6000, 10000, 10000],
  ])('%s', (_n, s, price, value, expected) => {
    expect(cardRealizableCents(value, price, s)).toBeCloseTo(expected, 6);
  });

  it('list: the listing life at the card basis (a cheap card waits for the lock above its basis)', () => {
    const atValue = cardRealizableCents(10000, 10000, flat);
    expect(atValue).toBeCloseTo(10000 * listingLife(flat, 1).expectedYield, 6);
    const drifting = enabled({}, { markup: 1.2 });
    // Bought at 60% of value: the market is far above the basis, so the listing stays up until the
    // lock ends and the fallback is the market's 0.8, never the basis's.
    const cheap = listingLife(drifting, 0.6);
    expect(cheap.fill).toBeGreaterThan(listingLife(drifting, 1).fill);
    expect(cheap.fallbackYield).toBeGreaterThan(LATE_RATE * 0.99);
  });
});

describe('highestPriceCents: break-even and the edge price', () => {
  it('is the largest price meeting the ratio, one cent more fails', () => {
    const s = enabled({ exit: 'hold' });
    // hold: realizable = value = 10000; price + 100 fee ≤ 10000 / 1.25 → price ≤ 7900.
    expect(highestPriceCents(10000, s, 1.25)).toBe(7900);
    expect(highestPriceCents(10000, s, 1)).toBe(9900);
    expect(highestPriceCents(50, s, 1)).toBeNull();
  });
});

describe('scoreShopCard decisions', () => {
  const s = enabled({ min_edge_ratio: 1.2, max_price_usd: 200, categories: ['pokemon'] });
  it.each([
    ['disabled', strategy(), card(50, 100), 'pokemon', /disabled/],
    ['other category', s, card(50, 100), 'sports', /category sports not in strategy/],
    ['above the price cap', s, card(300, 1000), 'pokemon', /max_price_usd/],
    ['edge too low', s, card(100, 100), 'pokemon', /edge .* below 1.2/],
  ])('skips: %s', (_n, st, c, category, reason) => {
    expect(scoreShopCard(c, category, st).decision).toMatchObject({
      action: 'skip',
      reason: expect.stringMatching(reason),
    });
  });

  it('buys an underpriced card with max_price = the edge price, never above the cap', () => {
    const row = scoreShopCard(card(50, 100), 'pokemon', s);
    expect(row.decision.action).toBe('buy');
    const max = (row.decision as { maxPriceCents: number }).maxPriceCents;
    expect(max).toBe(Math.round(row.max_edge_price! * 100));
    expect(max).toBeGreaterThanOrEqual(5000);
    expect(row.break_even_price!).toBeGreaterThan(row.max_edge_price!);
  });

  it('a watchlist entry buys at or under its limit whatever the edge, not above', () => {
    const w = enabled({
      min_edge_ratio: 3,
      watchlist: [{ name: 'charizard', grading_company: 'psa', max_price_usd: 120 }],
    });
    expect(scoreShopCard(card(120, 100), 'pokemon', w).decision).toEqual({
      action: 'buy',
      maxPriceCents: 12000,
    });
    expect(scoreShopCard(card(120.01, 100), 'pokemon', w).decision).toMatchObject({ action: 'skip' });
    expect(scoreShopCard(card(50, 100, { grading_company: 'BGS' }), 'pokemon', w).watch).toBeNull();
  });

  it('matches watchlist entries by id, name, grader and grade', () => {
    const c = card(10, 10, { id: 'x1', name: 'Pikachu Promo', grading_company: 'CGC', grading_rank: 9.5 });
    expect(watches({ card_id: 'x1', max_price_usd: 1 }, c)).toBe(true);
    expect(watches({ name: 'PIKACHU', max_price_usd: 1 }, c)).toBe(true);
    expect(watches({ name: 'pikachu', min_grade: 10, max_price_usd: 1 }, c)).toBe(false);
    expect(watches({ name: 'pikachu', grading_company: 'cgc', min_grade: 9.5, max_price_usd: 1 }, c)).toBe(
      true,
    );
  });

  it('orders buys first, then by edge', () => {
    const rows = scoreShop(
      [{ category: 'pokemon', cards: [card(100, 100), card(40, 100), card(60, 100)] }],
      s,
    );
    expect(rows.map((r) => r.price)).toEqual([40, 60, 100]);
    expect(rows.map((r) => r.decision.action)).toEqual(['buy', 'buy', 'skip']);
  });
});
