/**
 * Dry-run reads the real API and never writes to it: every POST or DELETE to the real base URL
 * fails the test, while GETs are answered (by a simulated market standing in for the service).
 * Paper purchases, sell-backs and listings still happen, on the paper market.
 */
import { appendFileSync, existsSync } from 'node:fs';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { isPartnerApiError } from '../../src/api/errors.js';
import { ENDPOINTS, type Operation } from '../../src/api/partner-api.js';
import type { PaperMarket } from '../../src/bot/buying/paper-market.js';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { toCents } from '../../src/core/money.js';
import { Market } from '../../src/market/market.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { generousStrategy, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterEach(removeTempDirs);

const BASE = 'https://partner.example.com';
const PREFIX = '/api/partner/v1';
const GET_OPS = new Map<string, Operation>(
  (Object.entries(ENDPOINTS) as [Operation, string][])
    .filter(([, e]) => e.startsWith('GET '))
    .map(([op, e]) => [e.slice(4), op]),
);

describe('dry-run', () => {
  const writes: string[] = [];
  const reads: string[] = [];
  beforeAll(() => {
    nock.disableNetConnect();
    nock.enableNetConnect(/127\.0\.0\.1/);
  });
  afterAll(() => {
    nock.cleanAll();
    nock.enableNetConnect();
  });

  /** The real API: GETs answered by `real`, every write recorded and refused. */
  function serve(real: Market): void {
    nock.cleanAll();
    writes.length = 0;
    nock(BASE)
      .persist()
      .get(/.*/)
      .reply(async (uri) => {
        const url = new URL(uri, BASE);
        reads.push(url.pathname);
        const op = GET_OPS.get(url.pathname.slice(PREFIX.length));
        if (!op) return [404, { error: 'not found' }];
        try {
          const body = await real.handle(op, {
            authorization: `Bearer ${KEY}`,
            query: Object.fromEntries(url.searchParams),
          });
          return [200, body];
        } catch (e) {
          if (isPartnerApiError(e)) return [e.toWire().status, e.toWire().body];
          throw e;
        }
      })
      .post(/.*/)
      .reply((uri) => {
        writes.push(`POST ${uri}`);
        return [500, { error: 'dry-run must not write' }];
      })
      .delete(/.*/)
      .reply((uri) => {
        writes.push(`DELETE ${uri}`);
        return [500, { error: 'dry-run must not write' }];
      });
  }

  it('never calls a write endpoint of the real API, and trades on paper', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const real = new Market(testWorld(), { clock: virtual, seed: 3 });
    const realBalance = real.balanceCents('acct_t');
    serve(real);

    const dir = tempDir('packbot-dry-');
    const path = writeConfig(dir, { baseUrl: BASE, mode: 'dry-run', strategy: generousStrategy(dir) });
    const config = loadBotConfig(path, { PB_TEST_KEY: KEY });
    expect(config.mode).toBe('dry-run');
    const sink = new LogSink();
    const runner = await Runner.start(config, { clock, logDestination: sink });
    await driveUntil(clock, START + 2 * HOUR_MS, 3);
    await runner.stop('test done');
    expect(await runner.done).toBe(0);

    expect(writes).toEqual([]);
    expect(reads.some((p) => p.endsWith('/catalog/packs/pool'))).toBe(true);
    // The real account was never charged...
    expect(real.balanceCents('acct_t')).toBe(realBalance);
    expect(real.ledger().filter((e) => e.accountId === 'acct_t')).toEqual([]);
    // ...while the paper account traded: orders, sell-backs and listings in the paper ledger, and
    // the live books were never created.
    expect(existsSync(`${dir}/ledger.db`)).toBe(false);
    const ledger = Ledger.open(`${dir}/ledger.dry-run.db`, { readonly: true });
    try {
      const data = ledger.reportData(0, clock.now());
      // The paper account mirrors the real limits: 100 packs a day, all used.
      expect(data.orders.reduce((n, o) => n + o.quantity, 0)).toBe(100);
      expect(data.sellbacks.filter((s) => s.counted).length).toBeGreaterThan(0);
      expect(data.listings.length).toBeGreaterThan(0);
    } finally {
      ledger.close();
    }
    expect(sink.text).not.toContain(KEY);
  });

  it('buys under-priced shop cards on paper at the real prices; the real account is never charged', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    // Real shop prices that fit no single markup: 0.55, 0.7 and 1.3 times the value, card by card.
    const ratios = [0.55, 0.7, 1.3];
    const shopCards = Array.from({ length: 30 }, (_, i) => {
      const value = 40 + 3 * i;
      return {
        id: `shop-${i}`,
        name: `Shop Card ${i}`,
        value,
        price: Math.round(value * ratios[i % 3]! * 100) / 100,
      };
    });
    const base = testWorld();
    const real = new Market(
      testWorld({
        categories: { pokemon: { ...base.categories.pokemon!, shop: { cards: shopCards } } },
        dynamics: {
          others_pack_openings_per_hour: 0,
          others_shop_purchases_per_hour: 0,
          value_daily_volatility: 0,
        },
      }),
      { clock: virtual, seed: 3 },
    );
    const realBalance = real.balanceCents('acct_t');
    serve(real);
    const realShop = await real.api(KEY).listShopCards({ category: 'pokemon', per_page: 1000 });
    const priceOf = new Map(realShop.cards.map((c) => [c.id, c]));
    for (const c of shopCards) expect(priceOf.get(c.id)?.price).toBe(c.price);

    const dir = tempDir('packbot-dry-cards-');
    const strategy = generousStrategy(dir);
    appendFileSync(
      strategy,
      [
        'cards:',
        '  enabled: true',
        '  categories: [pokemon]',
        '  max_per_day: 8',
        '  max_daily_spend_usd: 1000',
        '',
      ].join('\n'),
    );
    const path = writeConfig(dir, { baseUrl: BASE, mode: 'dry-run', strategy });
    const config = loadBotConfig(path, { PB_TEST_KEY: KEY });
    const sink = new LogSink();
    const runner = await Runner.start(config, { clock, logDestination: sink });
    // open, sweep, reconcile and the card buyer
    await driveUntil(clock, START + 2 * HOUR_MS, 4);
    const paper = runner.apis[0] as PaperMarket;
    await runner.stop('test done');
    expect(await runner.done).toBe(0);

    // Nothing reached the real account or its shop.
    expect(writes).toEqual([]);
    expect(real.balanceCents('acct_t')).toBe(realBalance);
    expect(real.ledger().filter((e) => e.accountId === 'acct_t')).toEqual([]);
    expect((await real.api(KEY).listShopCards({ category: 'pokemon', per_page: 1000 })).total).toBe(30);

    const ledger = Ledger.open(`${dir}/ledger.dry-run.db`, { readonly: true });
    try {
      const data = ledger.reportData(0, clock.now());
      const cards = data.orders.filter((o) => o.operation === 'card');
      expect(cards.length, sink.text.slice(-3000)).toBeGreaterThan(0);
      expect(cards.length).toBeLessThanOrEqual(8);
      // What the paper market charged, sale by sale (price and fee under the transaction id).
      const charged = new Map<string, { price: number; fee: number }>();
      for (const e of paper.market.ledger()) {
        if (e.kind !== 'card_purchase' && e.kind !== 'card_fee') continue;
        const c = charged.get(e.ref) ?? { price: 0, fee: 0 };
        if (e.kind === 'card_purchase') c.price -= e.amountCents;
        else c.fee -= e.amountCents;
        charged.set(e.ref, c);
      }
      expect(charged.size).toBe(cards.length);
      for (const o of cards) {
        const shopCard = priceOf.get(o.cardId!)!;
        // Under-priced only, at the real shop's own price for that card.
        expect(shopCard.price).toBeLessThan(shopCard.market_value);
        expect(o.priceCents).toBe(toCents(shopCard.price));
        const [pull] = ledger.pullsOfOrder(o.checkoutId);
        expect(charged.get(pull!.pullId)).toEqual({ price: o.priceCents, fee: o.feeCents });
        expect(o.totalChargedCents).toBe(o.priceCents! + o.feeCents!);
      }
      // Bought on paper: gone from the paper shop the bot reads, still in the real one.
      const paperShop = await paper.listShopCards({ category: 'pokemon', per_page: 1000 });
      expect(paperShop.total).toBe(30 - cards.length);
      for (const o of cards) expect(paperShop.cards.some((c) => c.id === o.cardId)).toBe(false);
    } finally {
      ledger.close();
    }
  });
});
