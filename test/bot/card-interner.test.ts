/**
 * Pool cards held once: equal cards are shared across a pack's risk levels and from one read to
 * the next; a card that changed, or carries an object value, is never shared; a card a read did
 * not answer is let go.
 */
import { describe, expect, it } from 'vitest';
import type { PackPool, PoolCard } from '../../src/api/schemas.js';
import { PoolCardInterner } from '../../src/bot/buying/card-interner.js';

const card = (id: string, value: number, extra: Record<string, unknown> = {}): PoolCard => ({
  id,
  name: `Card ${id}`,
  market_value: value,
  bucket_id: 'low',
  image_url: `https://img.example/${id}.png`,
  ...extra,
});

const pool = (risk: PackPool['risk_level'], cards: PoolCard[]): PackPool => ({
  pack_type: 'p',
  name: 'P',
  category: 'pokemon',
  risk_level: risk,
  price: 10,
  available: true,
  expected_value: 9,
  bands: [],
  chase: null,
  total_cards: cards.length,
  cards,
});

describe('PoolCardInterner', () => {
  it('shares equal cards across risk levels and keeps each pool otherwise as answered', () => {
    const i = new PoolCardInterner();
    const a = i.pool(pool('standard', [card('a', 5), card('b', 7)]));
    const b = i.pool(pool('aggressive', [card('b', 7), card('a', 5), card('c', 1)]));
    i.endRead();
    expect(b.cards[0]).toBe(a.cards[1]);
    expect(b.cards[1]).toBe(a.cards[0]);
    expect(b.cards.map((c) => c.id)).toEqual(['b', 'a', 'c']);
    expect(b).toMatchObject({ risk_level: 'aggressive', total_cards: 3 });
    expect(b.cards[1]).toEqual(card('a', 5));
  });

  it.each([
    ['a value changed', card('a', 6)],
    ['a field added', card('a', 5, { set: 'Base' })],
    ['a field missing', { id: 'a', name: 'Card a', market_value: 5, bucket_id: 'low' } as PoolCard],
    ['an object value', card('a', 5, { grading: { rank: 10 } })],
  ])('does not share a card with %s', (_why, other) => {
    const i = new PoolCardInterner();
    const first = i.pool(pool('standard', [card('a', 5)]));
    const second = i.pool(pool('aggressive', [other]));
    expect(second.cards[0]).not.toBe(first.cards[0]);
    expect(second.cards[0]).toEqual(other);
  });

  it('keeps the last read’s cards for the next read and lets go of cards it did not answer', () => {
    const i = new PoolCardInterner();
    const first = i.pool(pool('standard', [card('a', 5), card('b', 7)]));
    i.endRead();
    const second = i.pool(pool('standard', [card('a', 5)]));
    i.endRead();
    expect(second.cards[0]).toBe(first.cards[0]);
    const third = i.pool(pool('standard', [card('a', 5), card('b', 7)]));
    i.endRead();
    expect(third.cards[0]).toBe(first.cards[0]);
    expect(third.cards[1]).not.toBe(first.cards[1]);
  });

  it('returns the pool object itself when nothing is shared', () => {
    const i = new PoolCardInterner();
    const p = pool('standard', [card('a', 5)]);
    expect(i.pool(p)).toBe(p);
  });
});
