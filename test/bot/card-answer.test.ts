/** The check of a card purchase's answer against its order (src/bot/spending/card-answer.ts). */
import { describe, expect, it } from 'vitest';
import type { CardPurchaseResponse } from '../../src/api/schemas.js';
import { cardAnswerAnomaly } from '../../src/bot/spending/card-answer.js';

const answer = (over: Partial<CardPurchaseResponse> = {}): CardPurchaseResponse => ({
  checkout_id: 'co-1',
  transaction_id: 'tx-1',
  card_id: 'c-9',
  source: 'shop',
  listing_id: null,
  price: 24.5,
  fee: 1,
  total_charged: 25.5,
  remaining_balance: 974.5,
  item: { id: 'c-9', name: 'Nine', market_value: 30, category: 'onepiece' },
  ...over,
});
const BODY = { card_id: 'c-9', max_price: 25 };

describe('cardAnswerAnomaly', () => {
  it.each([
    ['an answer that fits its order', BODY, answer(), null],
    ['a price at max_price exactly', BODY, answer({ price: 25, total_charged: 26 }), null],
    ['an order without card_id or max_price', {}, answer(), null],
    ['another card', BODY, answer({ card_id: 'c-8' }), 'the service sold card c-8, not the c-9 ordered'],
    [
      'a price above max_price',
      BODY,
      answer({ price: 25.01, total_charged: 26.01 }),
      "charged 25.01 USD, above the order's max_price 25.00",
    ],
    [
      'a total that is not price + fee',
      BODY,
      answer({ total_charged: 26 }),
      'total_charged 26 is not price 24.5 + fee 1',
    ],
  ])('%s', (_name, body, r, expected) => {
    expect(cardAnswerAnomaly(body, r)).toBe(expected);
  });
});
