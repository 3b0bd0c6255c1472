/**
 * The bot and the backtest buy the same cards from the same shop: both ask the scorer which cards
 * to buy and in what order (watchlist, then edge, then id) and `decideCardBuy` how many the caps
 * allow. The bot's card buyer runs on the simulator; the backtest runs on a snapshot of that very
 * simulator's shop, in a world with nothing else moving.
 */
import { describe, expect, it } from 'vitest';
import { runPath } from '../../src/backtest/path/path.js';
import type { CardBuy } from '../../src/backtest/path/path-io.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { takeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import type { DynamicsInput } from '../../src/backtest/world/dynamic-market.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { strategy } from '../strategy-builder.js';
import { shopWorld } from './card-world.js';
import { driveUntil, fixture, KEY, START, TrackingClock, testBot } from './helpers.js';

const QUIET: DynamicsInput = {
  others_pack_openings_per_hour: 0,
  others_shop_purchases_per_hour: 0,
  shop_restock_fraction_per_hour: 0,
  value_daily_volatility: 0,
};

const cases: [string, Record<string, unknown>, Record<string, unknown>][] = [
  ['the count cap binds', { max_per_day: 4, max_daily_spend_usd: 2000 }, {}],
  ['the card spend cap binds', { max_per_day: 50, max_daily_spend_usd: 180 }, {}],
  [
    'the budget binds (packs and cards share it)',
    { max_per_day: 50, max_daily_spend_usd: 2000 },
    {
      budget: {
        max_daily_spend_usd: 150,
        max_total_spend_usd: 10_000,
        min_balance_usd: 0,
        stop_loss_usd: 10_000,
      },
    },
  ],
];

describe('the bot and the backtest buy the same cards from the same shop', () => {
  it.each(cases)('%s', async (_label, cards, over) => {
    const s = strategy(
      {
        open: { min_ev_ratio: 100, max_quantity: 1, sizing: 'fixed' },
        cards: {
          enabled: true,
          categories: ['pokemon', 'onepiece'],
          min_edge_ratio: 1.1,
          exit: 'hold',
          ...cards,
        },
        ...over,
      },
      { base: 'bot' },
    );
    const world = shopWorld();

    // The backtest, from a snapshot of the simulator's shop before anything is bought.
    const recorded = new Market(world, { clock: new VirtualClock(START), seed: 7 });
    const snapshot = await takeSnapshot(recorded.api(KEY), {
      clock: new VirtualClock(START),
      source: 'embedded',
      categories: ['pokemon', 'onepiece'],
    });
    const engine = new Engine({
      snapshot,
      strategy: s,
      days: 1,
      seed: 1,
      market: 'dynamic',
      dynamics: QUIET,
    });
    const cardLog: CardBuy[] = [];
    runPath(engine.model, engine.marketFor(0), 0, { days: 1, seed: 1, cards: engine.cards, cardLog });
    const firstSync = cardLog.filter((b) => b.at === cardLog[0]?.at);

    // The bot, on the same world (same seed: the same shop), through its first sync.
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const f = fixture({ clock: virtual, world, strategy: s });
    const bot = testBot(f, { clock });
    await bot.start();
    await driveUntil(clock, START + 10 * 60_000, 4);
    await bot.stop();
    const bought = f.ledger
      .reportData(0, Number.MAX_SAFE_INTEGER)
      .orders.filter((o) => o.operation === 'card')
      .map((o) => o.cardId);

    expect(firstSync.length).toBeGreaterThan(1);
    expect(bought).toEqual(firstSync.map((b) => b.cardId));
  });
});
