/**
 * The reproduced bug: the pool of `premium` says price 0 while the pack list (what is charged)
 * says 150. The bot bought 10 × premium = 1,500 USD in one order, three times its daily cap, on a
 * pack its strategy otherwise rejects. Over a simulated day it must never open that pack.
 */
import { describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { createPaperMarket } from '../../src/bot/buying/paper-market.js';
import { DAY_MS, utcDay, VirtualClock } from '../../src/core/clock.js';
import { strategy } from '../strategy-builder.js';
import { driveUntil, fixture, START, TrackingClock, testBot, testWorld } from './helpers.js';

/** A uniform band of `count` generated cards. */
const band = (bucket_id: string, min: number, max: number, odds: number, count: number) => ({
  bucket_id,
  min_value: min,
  max_value: max,
  odds: { standard: odds },
  generate: { count, distribution: 'uniform' as const },
});

/** `lucky` (10 USD, EV 18.40: open-worthy) and `premium` (150 USD, EV 21.30: never worth it). */
function world() {
  const pack = (pack_type: string, price: number, bands: ReturnType<typeof band>[]) => ({
    pack_type,
    name: pack_type,
    price,
    max_quantity: 10,
    risk_levels: ['standard' as const],
    bands,
  });
  return testWorld({
    rules: { max_packs_per_day: 1000, min_seconds_between_purchases: 60 },
    categories: {
      pokemon: {
        packs: [
          pack('lucky', 10, [band('low', 5, 9, 0.7, 400), band('high', 30, 60, 0.3, 200)]),
          pack('premium', 150, [band('p_low', 5, 9, 0.9, 200), band('p_high', 100, 200, 0.1, 50)]),
        ],
      },
    },
  });
}

/** The service as in the bug report: premium's pool lies about its price; every order recorded. */
function lyingPool(api: PartnerApi, poolPrice: number) {
  const orders: { pack_type: string; quantity: number | undefined }[] = [];
  let premiumReads = 0;
  const wrapped: PartnerApi = {
    ...api,
    getPackPool: async (query) => {
      const pool = await api.getPackPool(query);
      if (query.pack_type !== 'premium') return pool;
      premiumReads++;
      return { ...pool, price: poolPrice };
    },
    purchasePacks: async (body, key) => {
      const answer = await api.purchasePacks(body, key);
      orders.push({ pack_type: body.pack_type, quantity: body.quantity });
      return answer;
    },
  };
  return { api: wrapped, orders, reads: () => premiumReads };
}

async function runDay(poolPrice: number) {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const s = strategy(
    {
      // Fixed sizing at 10 a request: what turned a free-looking pack into a 1,500 USD order.
      open: { min_ev_ratio: 1, max_quantity: 10, sizing: 'fixed' },
      budget: {
        max_daily_spend_usd: 500,
        max_total_spend_usd: 100_000,
        min_balance_usd: 0,
        stop_loss_usd: 100_000,
      },
    },
    { base: 'bot' },
  );
  const f = fixture({ clock: virtual, world: world(), strategy: s });
  const lying = lyingPool(f.api, poolPrice);
  const fatal: unknown[] = [];
  const bot = testBot(f, { api: lying.api, clock, onFatal: (e) => fatal.push(e) });
  await bot.start();
  await driveUntil(clock, START + DAY_MS, 3);
  await bot.stop();
  // What the service charged, by UTC day (its own books, not the bot's).
  const spentByDay = new Map<number, number>();
  for (const e of f.market.ledger())
    if (e.accountId === 'acct_t' && e.kind === 'pack_purchase')
      spentByDay.set(utcDay(e.at), (spentByDay.get(utcDay(e.at)) ?? 0) + Math.abs(e.amountCents));
  return { f, bot, fatal, lying, spentByDay };
}

const rejected = async (f: { metrics: { text(): Promise<string> } }, reason: string): Promise<number> => {
  const m = new RegExp(`^packbot_pool_rejected_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(
    await f.metrics.text(),
  );
  return m ? Number(m[1]) : 0;
};

describe('a pool whose price disagrees with the pack list', () => {
  it.each([
    ['price 0', 0, 'price_not_positive'],
    ['price 1.50 (list 150)', 1.5, 'price_mismatch'],
  ])(
    '%s: never opened over a day; spend within the daily cap; counted per read; honest packs trade',
    async (_n, price, reason) => {
      const { f, bot, fatal, lying, spentByDay } = await runDay(price);
      expect(fatal).toEqual([]);
      expect(lying.orders.filter((o) => o.pack_type === 'premium')).toEqual([]);
      // The honest pack still trades, up to the cap each UTC day (the day crosses one midnight).
      expect(lying.orders.filter((o) => o.pack_type === 'lucky').length).toBeGreaterThan(0);
      expect(spentByDay.size).toBe(2);
      for (const cents of spentByDay.values()) expect(cents).toBeLessThanOrEqual(50_000);
      expect(Math.max(...spentByDay.values())).toBe(50_000);
      // Every premium pool read was scored, rejected and counted once (not once per idle slot).
      expect(lying.reads()).toBeGreaterThanOrEqual(2);
      expect(await rejected(f, reason)).toBe(lying.reads());
      expect(f.sink.messages()).toContain(
        price === 0
          ? 'pool not opened: price integrity: pool price 0.00 USD is not positive'
          : 'pool not opened: price integrity: pool price 1.50 USD differs from list price 150.00 USD',
      );
      expect(bot.lastWait).toMatch(/daily spend cap/);
      expect(f.market.audit()).toEqual([]);
    },
  );

  it('an honest premium pool is scored and left alone by the strategy, with nothing counted', async () => {
    const { lying, f } = await runDay(150);
    expect(lying.orders.filter((o) => o.pack_type === 'premium')).toEqual([]);
    expect(lying.orders.length).toBeGreaterThan(0);
    for (const reason of ['price_not_positive', 'price_mismatch', 'band_bounds', 'ev_gap'])
      expect(await rejected(f, reason)).toBe(0);
  });
});

describe('the dry-run paper market', () => {
  it('charges the pack list price, not the price a pool reports', async () => {
    const virtual = new VirtualClock(START);
    const f = fixture({ clock: virtual, world: world() });
    const paper = await createPaperMarket(lyingPool(f.api, 0).api, f.strategy, virtual);
    const answer = await paper.purchasePacks(
      { pack_type: 'premium', category: 'pokemon', risk_level: 'standard', quantity: 2 },
      'pb_paper_test_key_00000000',
    );
    expect(answer.total_charged).toBe(300);
  });
});
