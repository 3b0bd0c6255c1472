/** The tests' one strategy builder (test/strategy-builder.ts): its merge rule and its validation. */
import { describe, expect, it } from 'vitest';
import { defaultStrategy } from '../../src/strategy/strategy-schema.js';
import { strategy } from '../strategy-builder.js';

describe('strategy (the test builder)', () => {
  it('is the schema defaults when given nothing', () => {
    expect(strategy()).toEqual(defaultStrategy());
  });

  it('merges objects key by key at every depth, keeping the base fields an override leaves out', () => {
    const s = strategy({ sell: { list: { markup: 1.4 } } }, { base: 'bot' });
    expect(s.sell.list).toMatchObject({ markup: 1.4, seller_fee_rate: 0.05, only_when_better: false });
    expect(s.sell.threshold_usd).toBe(25);
    expect(s.open).toMatchObject({ min_ev_ratio: 1, max_quantity: 3, sizing: 'fixed' });
  });

  it('replaces arrays whole', () => {
    const s = strategy({ packs: { risk_levels: ['aggressive'] } }, { base: 'bot' });
    expect(s.packs).toMatchObject({ categories: ['pokemon'], risk_levels: ['aggressive'] });
  });

  it('refuses what the schema refuses', () => {
    expect(() => strategy({ open: { max_quantity: 11 } })).toThrow(/max_quantity/);
    expect(() => strategy({ sell: { list: { markup_typo: 1 } } } as never)).toThrow(/markup_typo/);
  });
});
