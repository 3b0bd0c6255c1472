/**
 * Issue #18's acceptance over real HTTP: the shipped `strategies/shop-sniper.yaml` run by the
 * runner against the simulator's server (a world whose pokemon shop sells at 0.6 × market value
 * and onepiece at 1.3 ×), on a virtual clock shared by both. The bot buys only pokemon cards,
 * within the strategy's caps and the service's, lists them, and its ledger matches the
 * simulator's charges to the cent.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { loadFile } from '../../src/config/load.js';
import { DAY_MS, HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { Ledger } from '../../src/store/ledger.js';
import { highestPriceCents } from '../../src/strategy/card-score.js';
import { StrategyFile } from '../../src/strategy/strategy-schema.js';
import { shopWorld } from '../bot/card-world.js';
import { driveUntil, KEY, LogSink, START, TrackingClock } from '../bot/helpers.js';
import { ROOT, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterAll(removeTempDirs);

const SNIPER = join(ROOT, 'strategies/shop-sniper.yaml');
/** open, sweep, reconcile and the card loop. */
const SLEEPERS = 4;

describe('shop-sniper over HTTP (virtual clock)', () => {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const market = new Market(shopWorld(), { clock: virtual, seed: 5 });
  let server: SimServer;
  const dir = tempDir();
  let configPath: string;

  beforeAll(async () => {
    server = await startSimServer({ market, clock: virtual, port: 0 });
    configPath = writeConfig(dir, { baseUrl: server.url, strategy: SNIPER });
  });
  afterAll(async () => {
    await server.close();
  });

  it('buys only under-priced cards, within every cap, and books what the service charged', async () => {
    const strategy = loadFile(SNIPER, StrategyFile);
    const config = loadBotConfig(configPath, { PB_TEST_KEY: KEY });
    const runner = await Runner.start(config, {
      clock,
      logDestination: new LogSink(),
      cadence: { sweepMs: 60_000 },
    });
    await driveUntil(clock, START + DAY_MS + 6 * HOUR_MS, SLEEPERS);
    const metrics = await (await fetch(`${runner.obs!.url}/metrics`)).text();
    const status = (await (await fetch(`${runner.obs!.url}/api/v1/status`)).json()) as {
      accounts: { cards: Record<string, unknown> | null }[];
    };
    await runner.stop('test done');
    expect(await runner.done).toBe(0);

    const ledger = Ledger.open(join(dir, 'ledger.db'), { readonly: true });
    try {
      const data = ledger.reportData(0, clock.now());
      const orders = data.orders.filter((o) => o.operation === 'card');
      expect(data.orders.filter((o) => o.operation === 'pack')).toEqual([]);
      expect(orders.length).toBeGreaterThanOrEqual(2 * strategy.cards.max_per_day);
      expect(new Set(orders.map((o) => o.category))).toEqual(new Set(['pokemon']));
      const perDay = new Map<number, { n: number; cents: number }>();
      for (const o of orders) {
        const d = Math.floor(o.createdAt / DAY_MS);
        const t = perDay.get(d) ?? { n: 0, cents: 0 };
        perDay.set(d, { n: t.n + 1, cents: t.cents + o.totalChargedCents });
      }
      for (const t of perDay.values()) {
        expect(t.n).toBeLessThanOrEqual(strategy.cards.max_per_day);
        expect(t.cents).toBeLessThanOrEqual(strategy.cards.max_daily_spend_usd * 100);
      }
      // The simulator's own books: card price + fee per purchase, by transaction id.
      const charged = new Map<string, number>();
      for (const e of market.ledger())
        if (e.kind === 'card_purchase' || e.kind === 'card_fee')
          charged.set(e.ref, (charged.get(e.ref) ?? 0) - e.amountCents);
      expect(charged.size).toBe(orders.length);
      for (const o of orders) {
        const [card] = ledger.pullsOfOrder(o.checkoutId);
        expect(charged.get(card!.pullId)).toBe(o.totalChargedCents);
        expect(o.priceCents!).toBeLessThanOrEqual(highestPriceCents(card!.valueCents, strategy, 1)!);
        expect(ledger.listingOfPull(card!.pullId)).toBeDefined();
      }
      expect(metrics).toContain(
        `packbot_cards_bought_total{category="pokemon",account="main"} ${orders.length}`,
      );
      expect(metrics).toMatch(/packbot_shop_cards\{decision="buy",account="main"\} \d+/);
      // The read API shows the card loop: today's cards against the caps, the last sync.
      const cards = status.accounts[0]!.cards!;
      expect(cards).toMatchObject({ max_per_day: 5, daily_cap_usd: 400, needing_review: 0 });
      expect(cards.today).toBe(
        orders.filter((o) => o.createdAt >= Math.floor(clock.now() / DAY_MS) * DAY_MS).length,
      );
      expect(typeof cards.shop_synced_at).toBe('string');
    } finally {
      ledger.close();
    }
  });
});
