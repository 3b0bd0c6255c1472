/**
 * The one home of an order's facts (src/store/order-facts.ts): each definition as a table over
 * pending, sent (on the wire or not), in doubt, parked, confirmed and failed intents, pack and card.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CATEGORY } from '../../src/api/rules.js';
import type { Intent, OrderRow } from '../../src/store/ledger.js';
import {
  boundCents,
  categoryOf,
  chargeAtBound,
  describeOrder,
  doubtFigures,
  inDoubtFirst,
  isInDoubt,
  isParked,
  isSentUnsettled,
  isUnsettled,
  type OrderState,
  orderFacts,
  quantityOf,
  stateOf,
  worstCaseOf,
} from '../../src/store/order-facts.js';

const PACK_BODY = { pack_type: 'starter', category: 'onepiece', quantity: 3, risk_level: 'high' };
const CARD_BODY = { card_id: 'c-7', max_price: 120 };

function intent(over: Partial<Intent> = {}): Intent {
  const body = over.body ?? (over.operation === 'card' ? CARD_BODY : PACK_BODY);
  return {
    key: 'pb_main_00000001',
    account: 'main',
    operation: 'pack',
    bodyJson: JSON.stringify(body),
    state: 'pending',
    attempts: 0,
    errorCode: null,
    errorMessage: null,
    responseJson: null,
    expectedValueCents: null,
    stdevCents: null,
    createdAt: 1000,
    updatedAt: 1000,
    firstSentAt: null,
    lastSentAt: null,
    lastAnswerAt: null,
    unitPriceCents: over.operation === 'card' ? 12000 : 1000,
    delivered: false,
    keyForgotten: false,
    parkedAt: null,
    settledBy: null,
    ...over,
    body,
  };
}

/** One of each state an operator can see, for both kinds of order. */
const STATES: Record<string, Partial<Intent>> = {
  pending: { state: 'pending' },
  sent: { state: 'sent', attempts: 1, firstSentAt: 1100 },
  in_doubt: { state: 'in_doubt', attempts: 1, firstSentAt: 1100, delivered: true },
  parked: { state: 'in_doubt', attempts: 2, firstSentAt: 1100, delivered: true, parkedAt: 5000 },
  confirmed: { state: 'confirmed', attempts: 1, firstSentAt: 1100, responseJson: '{}' },
  failed: { state: 'failed', attempts: 1, firstSentAt: 1100 },
};
const ON_THE_WIRE = (key: string) => key === 'pb_main_00000001';

describe('unsettled, in doubt, parked', () => {
  // name, unsettled, sent unsettled, in doubt (ledger alone), in doubt with its request on the
  // wire, parked, state shown
  it.each([
    ['pending', true, false, false, false, false, 'pending'],
    ['sent', true, true, true, false, false, 'sent'],
    ['in_doubt', true, true, true, false, false, 'in_doubt'],
    ['parked', true, true, true, false, true, 'parked'],
    ['confirmed', false, false, false, false, false, 'confirmed'],
    ['failed', false, false, false, false, false, 'failed'],
  ] as const)('%s', (name, unsettled, sent, doubt, doubtOnWire, parked, shown) => {
    for (const operation of ['pack', 'card'] as const) {
      const i = intent({ operation, ...STATES[name] });
      expect(isUnsettled(i), `${operation} unsettled`).toBe(unsettled);
      expect(isSentUnsettled(i), `${operation} sent unsettled`).toBe(sent);
      expect(isInDoubt(i), `${operation} in doubt`).toBe(doubt);
      expect(isInDoubt(i, ON_THE_WIRE), `${operation} in doubt, on the wire`).toBe(doubtOnWire);
      expect(
        isInDoubt(i, (k) => k === 'pb_other_0001'),
        `${operation} in doubt, another on the wire`,
      ).toBe(doubt);
      expect(isParked(i), `${operation} parked`).toBe(parked);
      expect(stateOf(i), `${operation} state`).toBe(shown satisfies OrderState);
    }
  });

  it('sums an account: in doubt and parked counted apart, the worst case of every unsettled order', () => {
    const all = Object.entries(STATES).flatMap(([name, s], n) => [
      intent({ key: `pb_pack_${name}_x`, createdAt: n, ...s }),
      intent({ key: `pb_card_${name}_x`, createdAt: n, operation: 'card', ...s }),
    ]);
    // Pack: 3 × 10.00 once per attempt (at least once); card: 120.00 + 1.00 likewise.
    const worst = (attempts: number) => Math.max(1, attempts) * (3000 + 12100);
    expect(doubtFigures(all)).toEqual({
      unsettled: 8,
      inDoubt: 6,
      parked: 2,
      worstCaseCents: worst(0) + worst(1) + worst(1) + worst(2),
    });
    const wire = (key: string) => key === 'pb_card_sent_x';
    expect(doubtFigures(all, wire)).toMatchObject({ unsettled: 8, inDoubt: 5, parked: 2 });
    // Parked first, then the oldest.
    expect(inDoubtFirst(all, wire).map((i) => i.key)).toEqual([
      'pb_pack_parked_x',
      'pb_card_parked_x',
      'pb_pack_sent_x',
      'pb_pack_in_doubt_x',
      'pb_card_in_doubt_x',
    ]);
  });
});

describe('what was ordered', () => {
  it.each([
    ['a pack order', { quantity: 3 }, 'pack', 3],
    ['no quantity: the default', {}, 'pack', 1],
    ['zero', { quantity: 0 }, 'pack', 1],
    ['a fraction', { quantity: 2.5 }, 'pack', 1],
    ['a string', { quantity: '2' }, 'pack', 1],
    ['a card order', { quantity: 4 }, 'card', 1],
  ] as const)('quantity of %s', (_name, body, operation, q) => {
    expect(quantityOf(intent({ operation, body }))).toBe(q);
  });

  it('category, pack and card: the body, else the spec defaults', () => {
    expect(categoryOf(intent())).toBe('onepiece');
    expect(categoryOf(intent({ body: { pack_type: 'starter' } }))).toBe(DEFAULT_CATEGORY);
    expect(categoryOf(intent({ operation: 'card' }))).toBe(DEFAULT_CATEGORY);
    expect(describeOrder(intent())).toBe('3 × starter (onepiece, high)');
    expect(describeOrder(intent({ body: { pack_type: 'starter' } }))).toBe('1 × starter (pokemon, standard)');
    expect(describeOrder(intent({ operation: 'card' }))).toBe('card c-7');
  });
});

describe('what it costs', () => {
  it.each([
    // name, intent, bound of one charge, booked at when settled without an answer
    ['3 packs at 10.00', intent(), 3000, { quantity: 3, totalChargedCents: 3000 }],
    [
      'a card of max_price 120.00',
      intent({ operation: 'card' }),
      12100,
      { quantity: 1, totalChargedCents: 12100, card: { priceCents: 12000, feeCents: 100 } },
    ],
    ['no planned price', intent({ unitPriceCents: null }), 0, { quantity: 3, totalChargedCents: 0 }],
  ])('%s', (_name, i, bound, booked) => {
    expect(boundCents(i)).toBe(bound);
    expect(chargeAtBound(i)).toEqual(booked);
  });

  it('a further charge that pulled more is booked for what it pulled', () => {
    expect(chargeAtBound(intent(), 4)).toEqual({ quantity: 4, totalChargedCents: 4000 });
  });

  it.each([
    [0, 1],
    [1, 1],
    [3, 3],
  ])('worst case after %i attempt(s): %i × the bound', (attempts, times) => {
    expect(worstCaseOf(intent({ attempts }))).toBe(3000 * times);
    expect(worstCaseOf(intent({ operation: 'card', attempts }))).toBe(12100 * times);
  });
});

describe('an order as a whole', () => {
  const order = (over: Partial<OrderRow>): OrderRow => ({
    checkoutId: 'co-1',
    intentKey: 'pb_main_00000001',
    account: 'main',
    operation: 'pack',
    packType: 'starter',
    category: 'onepiece',
    riskLevel: 'high',
    cardId: null,
    quantity: 3,
    totalChargedCents: 2970,
    remainingBalanceCents: 0,
    expectedValueCents: null,
    stdevCents: null,
    createdAt: 2000,
    priceCents: null,
    feeCents: null,
    source: null,
    needsReview: false,
    ...over,
  });
  const card = order({
    operation: 'card',
    packType: null,
    riskLevel: null,
    cardId: 'c-7',
    quantity: 1,
    category: 'pokemon',
    priceCents: 11754,
    feeCents: 100,
    totalChargedCents: 11854,
  });
  const pulls = [{ name: 'Pikachu' }];

  it.each([
    [
      'a pack order on the wire',
      intent(STATES.sent),
      undefined,
      { state: 'sent', inDoubt: false, chargedCents: null, boundCents: 3000, amountIsBound: true },
    ],
    [
      'a pack order answered',
      intent(STATES.confirmed),
      { order: order({}), pulls: [] },
      { packType: 'starter', quantity: 3, chargedCents: 2970, amountIsBound: false, cardId: null },
    ],
    [
      'a card order in doubt: its card, its bound, no category or price yet',
      intent({ operation: 'card', ...STATES.in_doubt }),
      undefined,
      {
        inDoubt: true,
        category: null,
        packType: null,
        riskLevel: null,
        quantity: 1,
        cardId: 'c-7',
        cardName: null,
        chargedCents: null,
        priceCents: null,
        feeCents: null,
        boundCents: 12100,
        amountIsBound: true,
      },
    ],
    [
      'a card order answered (or replayed): what the service charged',
      intent({ operation: 'card', ...STATES.confirmed }),
      { order: card, pulls },
      {
        category: 'pokemon',
        cardId: 'c-7',
        cardName: 'Pikachu',
        chargedCents: 11854,
        priceCents: 11754,
        feeCents: 100,
        boundCents: 12100,
        amountIsBound: false,
      },
    ],
    [
      'a card order settled by evidence: booked at its bound',
      intent({ operation: 'card', ...STATES.confirmed, responseJson: null, settledBy: 'evidence: x' }),
      { order: { ...card, priceCents: 12000, totalChargedCents: 12100 }, pulls },
      { chargedCents: 12100, priceCents: 12000, amountIsBound: true },
    ],
    [
      'adopted foreign cards: no charge, no bound about it',
      intent({ ...STATES.confirmed, responseJson: null, body: { category: 'pokemon', foreign: true } }),
      { order: order({ totalChargedCents: 0, quantity: 0 }), pulls: [] },
      { chargedCents: 0, amountIsBound: false },
    ],
    [
      'a failed order: nothing charged',
      intent({ operation: 'card', ...STATES.failed }),
      undefined,
      { state: 'failed', unsettled: false, chargedCents: 0, priceCents: null, amountIsBound: false },
    ],
    [
      'a parked order',
      intent(STATES.parked),
      undefined,
      { state: 'parked', unsettled: true, inDoubt: true, parked: true, amountIsBound: true },
    ],
  ] as const)('%s', (name, i, booked, expected) => {
    // The first order's request is on the wire; the others are read from the ledger alone.
    const wire = name.endsWith('on the wire') ? ON_THE_WIRE : undefined;
    expect(orderFacts(i, booked, wire)).toMatchObject(expected);
  });
});
