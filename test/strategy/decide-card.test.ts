/** decideCardBuy: the card caps and the budget, one rule for the bot and the backtest. */
import { describe, expect, it } from 'vitest';
import { type CardBuyState, decideCardBuy } from '../../src/strategy/decide-card.js';
import { strategy } from '../strategy-builder.js';

const NOW = Date.parse('2026-03-01T10:00:00Z');
const MIDNIGHT = Date.parse('2026-03-02T00:00:00Z');
// Budget: daily 500, total 5000, reserve 100, stop-loss 1000 (the helpers' defaults).
const s = strategy({ cards: { enabled: true, max_per_day: 5, max_daily_spend_usd: 200 } });
const state = (over: Partial<CardBuyState> = {}): CardBuyState => ({
  balanceCents: 1_000_000,
  spentTodayCents: 0,
  spentTotalCents: 0,
  markedPnlCents: 0,
  killSwitch: false,
  cardsToday: 0,
  cardOutlayTodayCents: 0,
  ...over,
});

describe('decideCardBuy', () => {
  const rows: [string, Partial<CardBuyState>, number, number, ReturnType<typeof decideCardBuy>][] = [
    ['room for it: max_price is the scorer’s', {}, 4000, 6000, { action: 'buy', maxPriceCents: 6000 }],
    [
      'the card cap leaves less than the scorer: max_price is the room, fee kept aside',
      { cardOutlayTodayCents: 15_000 },
      4000,
      6000,
      { action: 'buy', maxPriceCents: 4900 },
    ],
    [
      'does not fit the card cap',
      { cardOutlayTodayCents: 16_000 },
      4000,
      6000,
      { action: 'skip', reason: 'does not fit what is left today' },
    ],
    [
      'the budget (packs and cards) leaves less',
      { spentTodayCents: 45_000 },
      4000,
      6000,
      { action: 'buy', maxPriceCents: 4900 },
    ],
    [
      'an order in doubt takes its worst case from the room',
      { spentTodayCents: 45_000, inDoubtCents: 1000 },
      3500,
      6000,
      { action: 'buy', maxPriceCents: 3900 },
    ],
    [
      'the count cap stops buying until midnight',
      { cardsToday: 5 },
      4000,
      6000,
      { action: 'stop', reason: 'cards.max_per_day 5 reached', until: MIDNIGHT },
    ],
    [
      'a guard stops buying',
      { killSwitch: true },
      4000,
      6000,
      { action: 'stop', reason: 'kill switch is on' },
    ],
  ];
  it.each(rows)('%s', (_label, over, price, scorerMax, want) => {
    expect(decideCardBuy(state(over), price, scorerMax, s, NOW)).toEqual(want);
  });

  it('a lower count cap (a world’s own) applies too', () => {
    expect(decideCardBuy(state({ cardsToday: 2 }), 4000, 6000, s, NOW, 2).action).toBe('stop');
  });
});
