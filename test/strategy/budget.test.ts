/**
 * The budget's worst case: an order not settled yet counts at the most it can cost, against every
 * cap, before anything else is sent.
 */
import { describe, expect, it } from 'vitest';
import {
  type BudgetState,
  type OpenOrder,
  spendHeadroom,
  worstCaseCents,
} from '../../src/strategy/budget.js';
import { strategy } from '../strategy-builder.js';

// Budget: daily 500, total 5000, reserve 100 (the helpers' defaults).
const s = strategy({});

describe('worstCaseCents', () => {
  const rows: [string, OpenOrder, number][] = [
    [
      'a pack order recorded, not sent',
      { operation: 'pack', unitPriceCents: 1000, quantity: 3, attempts: 0 },
      3000,
    ],
    ['a pack order sent once', { operation: 'pack', unitPriceCents: 1000, quantity: 3, attempts: 1 }, 3000],
    [
      'a pack order sent twice (a forgetful service charges each)',
      { operation: 'pack', unitPriceCents: 1000, quantity: 3, attempts: 2 },
      6000,
    ],
    [
      'a card at its max_price, with the fee',
      { operation: 'card', unitPriceCents: 4250, quantity: 1, attempts: 1 },
      4350,
    ],
    ['a card re-sent', { operation: 'card', unitPriceCents: 4250, quantity: 1, attempts: 3 }, 13_050],
    [
      'no planned price: the fee alone',
      { operation: 'card', unitPriceCents: null, quantity: 1, attempts: 1 },
      100,
    ],
  ];
  it.each(rows)('%s', (_label, order, cents) => {
    expect(worstCaseCents(order)).toBe(cents);
  });
});

describe('spendHeadroom counts orders in doubt against every cap', () => {
  const state = (over: Partial<BudgetState>): BudgetState => ({
    balanceCents: 1_000_000,
    spentTodayCents: 0,
    spentTotalCents: 0,
    markedPnlCents: 0,
    killSwitch: false,
    ...over,
  });
  const rows: [string, Partial<BudgetState>, { cents: number; limitedBy: string }][] = [
    ['nothing open', {}, { cents: 50_000, limitedBy: 'daily_spend' }],
    [
      'an order in doubt takes from the day',
      { inDoubtCents: 3000 },
      { cents: 47_000, limitedBy: 'daily_spend' },
    ],
    [
      'and from the total',
      { spentTotalCents: 480_000, inDoubtCents: 3000 },
      { cents: 17_000, limitedBy: 'total_spend' },
    ],
    [
      'and from the balance above the reserve (the read may not show its charge)',
      { balanceCents: 30_000, inDoubtCents: 3000 },
      { cents: 17_000, limitedBy: 'balance_reserve' },
    ],
    [
      'never below zero',
      { spentTodayCents: 49_000, inDoubtCents: 3000 },
      { cents: 0, limitedBy: 'daily_spend' },
    ],
  ];
  it.each(rows)('%s', (_label, over, want) => {
    expect(spendHeadroom(state(over), s)).toEqual(want);
  });
});
