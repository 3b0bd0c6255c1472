/**
 * How a bought card is named for sell-back is not in the spec. Whatever pull_id the service's vault
 * shows for it (its transaction id, its checkout id, an id of its own, with or without a pull
 * time), the bot sells it back under that id, books the payout to its own pull, and never takes
 * it for a stray pull of a pack order.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { strategy } from '../strategy-builder.js';
import { shopWorld } from './card-world.js';
import { driveUntil, fixture, START, TrackingClock, testBot } from './helpers.js';

const SLEEPERS = 4;

describe.each([
  ['transaction_id', 'null'],
  ['checkout_id', 'null'],
  ['opaque', 'null'],
  ['opaque', 'purchase_time'],
] as const)('a bought card named by its %s (pulled_at %s)', (naming, pulledAt) => {
  it('is sold back under the vault pull_id and booked to its pull', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    // Two wanted cards at their value: bought for the watchlist, then sold back (exit sell_back).
    const wanted = (id: string) => ({ id, name: 'Charizard Gold Star', value: 100 });
    const world = shopWorld(
      { rules: { purchased_card_pull_id: naming, purchased_card_pulled_at: pulledAt } } as never,
      { onepiece: { shop: { markup: 1, cards: [wanted('wanted-1'), wanted('wanted-2')] } } },
    );
    const f = fixture({
      clock: virtual,
      world,
      strategy: strategy(
        {
          open: { min_ev_ratio: 100, max_quantity: 1, sizing: 'fixed' },
          cards: {
            enabled: true,
            categories: ['onepiece'],
            min_edge_ratio: 5,
            watchlist: [{ name: 'charizard', max_price_usd: 150 }],
            max_price_usd: 300,
            max_per_day: 3,
            max_daily_spend_usd: 400,
            exit: 'sell_back',
          },
        },
        { base: 'bot' },
      ),
    });
    const fatal: unknown[] = [];
    const bot = testBot(f, { clock, onFatal: (e) => fatal.push(e) });
    await bot.start();
    await driveUntil(clock, START + DAY_MS / 2, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const data = f.ledger.reportData(0, clock.now());
    const bought = data.pulls.filter((p) => p.origin === 'purchase');
    expect(bought.length).toBeGreaterThan(0);
    // Every bought card was sold back once, and the payout is booked to its own pull.
    for (const p of bought) {
      expect(p.status, p.pullId).toBe('sold');
      expect(data.sellbacks.filter((s) => s.pullId === p.pullId && s.counted)).toHaveLength(1);
    }
    const paid = f.market
      .ledger()
      .filter((e) => e.accountId === 'acct_t' && e.kind === 'sell_back')
      .reduce((n, e) => n + e.amountCents, 0);
    expect(data.sellbacks.filter((s) => s.counted).reduce((n, s) => n + s.payoutCents, 0)).toBe(paid);
    // No card was taken for a stray pull or left as unknown.
    expect(data.orders.filter((o) => o.operation === 'pack')).toEqual([]);
    expect(f.sink.text).not.toMatch(/"unknown":[1-9]/);
    expect(f.sink.text).not.toContain('adopted vault cards');
  }, 120_000);
});
