/**
 * Shop cards in the dynamic backtest: the shop's laws (prices follow the category index at the
 * recorded ratio, other buyers, restock), the buying loop (the scorer's buys only, best edge
 * first, within every cap), the watchlist, and what a snapshot without a shop gives.
 */
import { describe, expect, it } from 'vitest';
import type { ShopCard } from '../../src/api/schemas.js';
import { SNAPSHOT_FORMAT_V1, type SnapshotFile } from '../../src/api/snapshot-schema.js';
import { runPath } from '../../src/backtest/path/path.js';
import type { CardBuy } from '../../src/backtest/path/path-io.js';
import { renderHtml } from '../../src/backtest/report/report-html.js';
import { terminalSummary } from '../../src/backtest/report/terminal.js';
import { Engine, type EngineSpec } from '../../src/backtest/run/engine.js';
import { runBacktest, runBacktestPaths } from '../../src/backtest/run/run.js';
import { makePart, mergeParts } from '../../src/backtest/run/shard.js';
import type { DynamicMarket, DynamicsInput } from '../../src/backtest/world/dynamic-market.js';
import type { Shop } from '../../src/backtest/world/shop.js';
import { BacktestPartFile } from '../../src/config/backtest-part.js';
import { DAY_MS, HOUR_MS } from '../../src/core/clock.js';
import { roundHalfAway, toCents } from '../../src/core/money.js';
import { scoreShop, scoreShopCard } from '../../src/strategy/card-score.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { singleBand } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { snapshot } from './helpers.js';

/** `n` shop cards of a category, worth base, base + step, … and priced at `ratio` × value. */
function shopCards(category: string, n: number, ratio: number, base = 40, step = 7): ShopCard[] {
  return Array.from({ length: n }, (_, i) => {
    const value = base + step * i;
    return {
      id: `${category}-${i}`,
      category,
      name: `${category} card ${i}`,
      grading_company: 'PSA',
      grading_rank: 9,
      market_value: value,
      price: roundHalfAway(value * ratio * 100) / 100,
      sale_status: 'shop',
    };
  });
}

function withShop(shop: { category: string; cards: ShopCard[] }[]): SnapshotFile {
  return { ...snapshot([singleBand]), shop: shop.map((s) => ({ ...s, total: s.cards.length })) };
}

/** The strategy opens no pack: only its cards move money. */
function cardStrategy(cards: Record<string, unknown>, over: Record<string, Record<string, unknown>> = {}) {
  return strategy(
    {
      ...over,
      open: { min_ev_ratio: 1000 },
      cards: { enabled: true, categories: ['pokemon', 'onepiece'], ...cards },
    },
    { base: 'backtest' },
  );
}

const QUIET: DynamicsInput = {
  others_pack_openings_per_hour: 0,
  others_shop_purchases_per_hour: 0,
  shop_restock_fraction_per_hour: 0,
  value_daily_volatility: 0,
};

function shopOf(spec: Omit<EngineSpec, 'days' | 'seed' | 'market'>, index = 0, seed = 1) {
  const engine = new Engine({ ...spec, days: 1, seed, market: 'dynamic' });
  const market = engine.marketFor(index) as DynamicMarket;
  return { engine, market, shop: market.shopState as Shop };
}

/** The two shops of the brief: pokemon sells at 0.6 × value, onepiece at 1.3 × value. */
const twoShops = withShop([
  { category: 'pokemon', cards: shopCards('pokemon', 40, 0.6) },
  { category: 'onepiece', cards: shopCards('onepiece', 40, 1.3) },
]);

describe('the shop model', () => {
  type Row = {
    law: string;
    dynamics: DynamicsInput;
    hours: number;
    paths: number;
    check: (shops: Shop[], recorded: SnapshotFile) => void;
  };
  const recorded = withShop([
    { category: 'pokemon', cards: shopCards('pokemon', 150, 0.6, 1000, 13) },
    { category: 'onepiece', cards: shopCards('onepiece', 50, 1.3, 1000, 13) },
  ]);
  const byId = new Map(recorded.shop!.flatMap((s) => s.cards.map((c) => [c.id, c] as const)));
  const removed = (s: Shop) => 200 - s.count;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

  const rows: Row[] = [
    {
      law: 'without drift, buyers or restock the shop stays as recorded',
      dynamics: QUIET,
      hours: 48,
      paths: 1,
      check: ([s]) => expect(s!.listing().map((x) => x.cards)).toEqual(recorded.shop!.map((x) => x.cards)),
    },
    {
      law: "prices follow the category's value index at each card's recorded price/value ratio",
      dynamics: { ...QUIET, value_daily_volatility: 0.05 },
      hours: 72,
      paths: 3,
      check: (shops) => {
        for (const s of shops) {
          const moves: number[] = [];
          for (const cat of s.listing()) {
            const first = cat.cards[0]!;
            const index = first.market_value / byId.get(first.id)!.market_value;
            moves.push(index);
            for (const c of cat.cards) {
              const r = byId.get(c.id)!;
              // value = recorded value × index (to the cent); price = value × recorded ratio (to the cent).
              expect(Math.abs(toCents(c.market_value) - toCents(r.market_value) * index)).toBeLessThanOrEqual(
                2,
              );
              expect(
                Math.abs(toCents(c.price) - toCents(c.market_value) * (r.price / r.market_value)),
              ).toBeLessThanOrEqual(0.5 + 1e-9);
            }
          }
          // Each category has its own index, and it moved.
          expect(moves[0]).not.toBe(moves[1]);
          expect(moves[0]).not.toBe(1);
        }
      },
    },
    {
      law: 'other buyers take others_shop_purchases_per_hour cards an hour (Poisson)',
      dynamics: { ...QUIET, others_shop_purchases_per_hour: 2 },
      hours: 24,
      paths: 200,
      // 48 per path expected; the mean over 200 paths has a standard error of 0.49.
      check: (shops) => expect(Math.abs(mean(shops.map(removed)) - 48)).toBeLessThan(2),
    },
    {
      law: 'they pick a category in proportion to its stock, then a card uniformly',
      dynamics: { ...QUIET, others_shop_purchases_per_hour: 1 },
      hours: 10,
      paths: 200,
      check: (shops) => {
        const fromFirst = mean(shops.map((s) => 150 - s.counts()[0]!));
        // 150 of 200 cards: three quarters of ~10 purchases (the shares barely move in 10 hours).
        expect(Math.abs(fromFirst / mean(shops.map(removed)) - 0.75)).toBeLessThan(0.05);
      },
    },
    {
      law: 'restock refills shop_restock_fraction_per_hour of the gap: steady gap b(1 − s)/s',
      dynamics: { ...QUIET, others_shop_purchases_per_hour: 10, shop_restock_fraction_per_hour: 0.2 },
      hours: 96,
      paths: 100,
      check: (shops) => {
        // s = 1 − e^−0.2 = 0.1813, b = 10: each tick 10 bought, then s of the gap refilled → 45.2.
        const s = 1 - Math.exp(-0.2);
        expect(Math.abs(mean(shops.map(removed)) - (10 * (1 - s)) / s)).toBeLessThan(3);
        for (const x of shops)
          for (const [k, n] of x.counts().entries()) expect(n).toBeLessThanOrEqual(k === 0 ? 150 : 50);
      },
    },
    {
      law: "a restocked card is a copy of a recorded one of its category, at its recorded value in today's money",
      dynamics: { ...QUIET, others_shop_purchases_per_hour: 10, shop_restock_fraction_per_hour: 0.5 },
      hours: 24,
      paths: 2,
      check: (shops) => {
        for (const s of shops)
          for (const cat of s.listing()) {
            const copies = cat.cards.filter((c) => c.id.endsWith('~restock'));
            expect(copies.length).toBeGreaterThan(0);
            for (const c of copies) {
              const r = byId.get(c.id.replace('~restock', ''))!;
              expect(r.category).toBe(cat.category);
              expect(c.market_value).toBe(r.market_value);
              expect(c.price).toBe(r.price);
            }
          }
      },
    },
  ];

  it.each(rows)('$law', ({ dynamics, hours, paths, check }) => {
    const st = cardStrategy({});
    const shops: Shop[] = [];
    for (let i = 0; i < paths; i++) {
      const { engine, market, shop } = shopOf({ snapshot: recorded, strategy: st, dynamics }, i);
      market.advance(engine.model.startMs + hours * HOUR_MS);
      shops.push(shop);
    }
    check(shops, recorded);
  });

  it('the same seed and path give the same shop; another path another', () => {
    const dyn = { others_shop_purchases_per_hour: 5 };
    const run = (i: number) => {
      const { engine, market, shop } = shopOf(
        { snapshot: twoShops, strategy: cardStrategy({}), dynamics: dyn },
        i,
      );
      market.advance(engine.model.startMs + 30 * HOUR_MS);
      return JSON.stringify(shop.listing());
    };
    expect(run(3)).toBe(run(3));
    expect(run(3)).not.toBe(run(4));
  });

  it.each<[string, Record<string, unknown>]>([
    ['list', { exit: 'list' }],
    ['hold', { exit: 'hold', min_edge_ratio: 1.05 }],
    [
      'sell_back (watched cards only)',
      { exit: 'sell_back', watchlist: [{ name: 'pokemon card 1', max_price_usd: 40 }] },
    ],
    [
      'list with a price cap and a watchlist',
      { max_price_usd: 60, watchlist: [{ name: 'onepiece card 2', max_price_usd: 80 }] },
    ],
  ])("offers are exactly scoreShop's buys on the shop as listed (%s)", (_, cards) => {
    // Ratios from 0.45 to 1.35 over many values: buys and skips on both sides of every bound.
    const snap = withShop([
      {
        category: 'pokemon',
        cards: shopCards('pokemon', 60, 1, 3, 11).map((c, i) => ({
          ...c,
          price: roundHalfAway(c.market_value * (0.45 + 0.015 * i) * 100) / 100,
        })),
      },
      { category: 'onepiece', cards: shopCards('onepiece', 30, 1.3, 20, 3) },
    ]);
    const st = cardStrategy(cards);
    const { engine, market, shop } = shopOf({
      snapshot: snap,
      strategy: st,
      dynamics: { value_daily_volatility: 0.1, others_shop_purchases_per_hour: 4 },
    });
    let buys = 0;
    for (let h = 0; h <= 72; h += 6) {
      market.advance(engine.model.startMs + h * HOUR_MS);
      const expected = scoreShop(shop.listing(), st).filter((r) => r.decision.action === 'buy');
      const got = shop.offers();
      const key = (x: { cardId: string; priceCents: number }) => `${x.cardId}@${x.priceCents}`;
      expect(got.map(key).sort()).toEqual(
        expected.map((r) => key({ cardId: r.card_id, priceCents: toCents(r.price) })).sort(),
      );
      for (let i = 1; i < got.length; i++)
        if (got[i]!.watched === got[i - 1]!.watched)
          expect(got[i]!.edge).toBeLessThanOrEqual(got[i - 1]!.edge);
        else expect(got[i - 1]!.watched).toBe(true);
      buys += got.length;
    }
    expect(buys).toBeGreaterThan(0);
  });
});

/** Every purchase of path i, with the path's result. */
function logged(engine: Engine, i: number) {
  const cardLog: CardBuy[] = [];
  const r = runPath(engine.model, engine.marketFor(i), i, {
    days: engine.spec.days,
    seed: engine.spec.seed,
    cards: engine.cards,
    cardLog,
  });
  return { r, cardLog };
}

const utcDay = (t: number) => Math.floor(t / DAY_MS);
function perDay(log: CardBuy[], f: (b: CardBuy) => number): Map<number, number> {
  const m = new Map<number, number>();
  for (const b of log) m.set(utcDay(b.at), (m.get(utcDay(b.at)) ?? 0) + f(b));
  return m;
}

describe('buying shop cards in a backtest', () => {
  it('buys only in the cheap shop, never above the scorer, within its caps, at a profit', async () => {
    const st = cardStrategy({ max_per_day: 3, max_daily_spend_usd: 200 });
    const spec: EngineSpec = { snapshot: twoShops, strategy: st, days: 10, seed: 5, market: 'dynamic' };
    const engine = new Engine(spec);
    for (let i = 0; i < 20; i++) {
      const { r, cardLog } = logged(engine, i);
      expect(cardLog.length).toBeGreaterThan(0);
      for (const b of cardLog) {
        expect(b.category).toBe('pokemon');
        expect(b.priceCents).toBeLessThanOrEqual(b.maxPriceCents);
        // The scorer's own verdict on the card as the shop showed it then.
        const row = scoreShopCard(
          {
            id: b.cardId,
            name: 'x',
            market_value: b.valueCents / 100,
            price: b.priceCents / 100,
            sale_status: 'shop',
          },
          'pokemon',
          st,
        );
        expect(row.decision).toEqual({ action: 'buy', maxPriceCents: b.maxPriceCents });
      }
      for (const n of perDay(cardLog, () => 1).values()) expect(n).toBeLessThanOrEqual(3);
      for (const c of perDay(cardLog, (b) => b.priceCents + 100).values())
        expect(c).toBeLessThanOrEqual(20_000);
      expect(r.cards[0]).toBe(cardLog.length);
      expect(r.cards[1]).toBe(cardLog.reduce((a, b) => a + b.priceCents, 0));
      expect(r.cards[2]).toBe(100 * cardLog.length);
      // No pack opened: the path's whole P&L is its cards'.
      expect(r.packs).toBe(0);
      expect(r.netPnlCents).toBe(r.cards[6]);
    }
    const report = await runBacktest({ ...spec, paths: 100, workers: 0 });
    const c = report.cards!;
    expect(c.backtested).toBe(true);
    expect(c.notice).toBeNull();
    expect(c.per_category!.map((x) => x.category)).toEqual(['pokemon', 'onepiece']);
    expect(c.per_category![1]!.bought_mean).toBe(0);
    expect(c.bought!.mean).toBeGreaterThan(10);
    expect(c.max_cards_per_utc_day).toBeLessThanOrEqual(3);
    expect(c.net_pnl_usd!.mean).toBeGreaterThan(0);
    expect(c.net_pnl_usd!.p5).toBeGreaterThan(0);
    // net = proceeds + holdings − spend − fees, and the account's net is the cards'. Each mean is
    // rounded to the cent on its own (stats.ts `describe`), so the identity holds within the five
    // roundings' half cents.
    const parts = c.proceeds_usd!.mean + c.holdings_value_usd!.mean - c.spend_usd!.mean - c.fees_usd!.mean;
    expect(Math.abs(c.net_pnl_usd!.mean - parts)).toBeLessThanOrEqual(0.025 + 1e-9);
    expect(report.summary.net_pnl_usd.mean).toBeCloseTo(c.net_pnl_usd!.mean, 6);
    expect(report.summary.spend_usd.mean).toBe(0);
    expect(report.summary.roi.mean).toBeGreaterThan(0);
    expect(terminalSummary(report)).toMatch(/card net P&L\s+mean\s+\$\d/);
    expect(renderHtml(report)).toContain('<h2>Shop cards</h2>');
  });

  it("the world's daily caps hold: 20 cards, then 5,000 USD of prices", () => {
    const many = withShop([{ category: 'pokemon', cards: shopCards('pokemon', 200, 0.6, 50, 1) }]);
    const count = new Engine({
      snapshot: many,
      strategy: cardStrategy({ max_per_day: 100, max_daily_spend_usd: 1e6 }),
      days: 3,
      seed: 1,
      market: 'dynamic',
      dynamics: QUIET,
    });
    const a = logged(count, 0).cardLog;
    expect(Math.max(...perDay(a, () => 1).values())).toBe(20);
    const dear = withShop([{ category: 'pokemon', cards: shopCards('pokemon', 60, 0.6, 1500, 10) }]);
    const spend = new Engine({
      snapshot: dear,
      strategy: cardStrategy({ max_per_day: 100, max_daily_spend_usd: 1e6, max_price_usd: 5000 }),
      days: 3,
      seed: 1,
      market: 'dynamic',
      dynamics: QUIET,
    });
    const b = logged(spend, 0).cardLog;
    expect(b.length).toBeGreaterThan(0);
    for (const s of perDay(b, (x) => x.priceCents).values()) expect(s).toBeLessThanOrEqual(500_000);
  });

  it('the budget counts card outlays: the reserve and the total cap hold', () => {
    const st = cardStrategy(
      { max_per_day: 100, max_daily_spend_usd: 1e6 },
      { budget: { max_total_spend_usd: 300, min_balance_usd: 0 } },
    );
    const engine = new Engine({ snapshot: twoShops, strategy: st, days: 5, seed: 2, market: 'dynamic' });
    const { cardLog } = logged(engine, 0);
    const outlay = cardLog.reduce((a, b) => a + b.priceCents + 100, 0);
    expect(outlay).toBeLessThanOrEqual(30_000);
    expect(outlay).toBeGreaterThan(20_000);
    const poor = new Engine({
      snapshot: twoShops,
      // Kept cards bring no cash back: the reserve leaves 50 USD to spend for good.
      strategy: cardStrategy(
        { exit: 'hold', min_edge_ratio: 1, max_per_day: 100, max_daily_spend_usd: 1e6 },
        { budget: { min_balance_usd: 950 } },
      ),
      days: 5,
      seed: 2,
      market: 'dynamic',
      balanceUsd: 1000,
      dynamics: { ...QUIET },
    });
    const p = logged(poor, 0).cardLog;
    const spent = p.reduce((a, b) => a + b.priceCents + 100, 0);
    expect(spent).toBeLessThanOrEqual(5_000);
    expect(spent).toBeGreaterThan(5_000 - 2_500); // and it does spend it (the cheapest card is 25 USD)
  });

  it('exit hold: kept, worth its market value at the end', () => {
    const st = cardStrategy({ exit: 'hold', min_edge_ratio: 1, max_per_day: 2, max_daily_spend_usd: 1e6 });
    const engine = new Engine({
      snapshot: twoShops,
      strategy: st,
      days: 3,
      seed: 9,
      market: 'dynamic',
      dynamics: QUIET,
    });
    const { r, cardLog } = logged(engine, 0);
    expect(cardLog.length).toBe(2 * 4); // 2 a UTC day: the start's day and three more
    // Without drift a kept card is worth its value at purchase.
    expect(r.cards[5]).toBe(cardLog.reduce((a, b) => a + b.valueCents, 0));
    expect(r.cards[3]! + r.cards[4]!).toBe(0);
    expect(r.netPnlCents).toBe(r.cards[5]! - r.cards[1]! - r.cards[2]!);
  });

  it('exit sell_back: sold back at once at 0.8 of min(price, value) (a watched card: no edge can pay)', () => {
    const st = cardStrategy({ exit: 'sell_back', watchlist: [{ card_id: 'pokemon-0', max_price_usd: 30 }] });
    const engine = new Engine({
      snapshot: twoShops,
      strategy: st,
      days: 3,
      seed: 9,
      market: 'dynamic',
      dynamics: QUIET,
    });
    const { r, cardLog } = logged(engine, 0);
    // pokemon-0: worth 40 USD, sold at 24 USD; 0.8 × 24 = 19.20 USD back at once.
    expect(cardLog.map((b) => b.cardId)).toEqual(['pokemon-0']);
    expect([r.cards[4], r.cards[5], r.cards[6]]).toEqual([1920, 0, 1920 - 2400 - 100]);
  });

  it('a watched card is bought at or under its limit whatever the edge, and only then', () => {
    const run = (limit: number, by: Record<string, unknown>) => {
      const st = cardStrategy({ watchlist: [{ ...by, max_price_usd: limit }] });
      const engine = new Engine({
        snapshot: twoShops,
        strategy: st,
        days: 2,
        seed: 4,
        market: 'dynamic',
        dynamics: QUIET,
      });
      return logged(engine, 0).cardLog.filter((b) => b.category === 'onepiece');
    };
    // onepiece-3 is worth 61 USD and sold at 1.3 × that, 79.30 USD: no edge, but watched.
    const got = run(80, { card_id: 'onepiece-3' });
    expect(got.map((b) => [b.cardId, b.priceCents, b.maxPriceCents])).toEqual([['onepiece-3', 7930, 8000]]);
    expect(got[0]!.at).toBe(Date.parse(twoShops.taken_at)); // at the first sync
    expect(run(79, { card_id: 'onepiece-3' })).toEqual([]);
    // By name (and grade): the one card whose name matches, under a limit above max_price_usd.
    const big = run(600, { name: 'ONEPIECE CARD 39', grading_company: 'psa', min_grade: 9 });
    expect(big.map((b) => b.cardId)).toEqual(['onepiece-39']);
    expect(run(600, { name: 'onepiece card 39', min_grade: 9.5 })).toEqual([]);
  });
});

describe('cards that cannot be backtested', () => {
  const base = { strategy: cardStrategy({}), days: 2, paths: 4, seed: 1, workers: 0 };
  it.each<[string, SnapshotFile, 'static' | 'dynamic', RegExp]>([
    [
      'a v1 snapshot',
      { ...snapshot([singleBand]), format: SNAPSHOT_FORMAT_V1 },
      'dynamic',
      /records no shop/,
    ],
    [
      'a shop recorded as null (--no-shop)',
      { ...snapshot([singleBand]), shop: null },
      'dynamic',
      /records no shop/,
    ],
    [
      'a shop without the categories',
      withShop([{ category: 'sports', cards: shopCards('sports', 3, 0.5) }]),
      'dynamic',
      /no category of cards\.categories \(pokemon, onepiece\)/,
    ],
    ['the static market', twoShops, 'static', /dynamic market only/],
  ])('%s: a notice in every view, no card figures, no crash', async (_, snap, market, notice) => {
    const r = await runBacktest({ ...base, snapshot: snap, market });
    expect(r.cards).toEqual({ backtested: false, notice: expect.stringMatching(notice) });
    expect(terminalSummary(r)).toMatch(/WARNING cards: .*not backtested/);
    expect(renderHtml(r)).toContain('not backtested');
  });

  it('a recorded shop missing one of the categories: bought from the others, with a notice', async () => {
    const snap = withShop([{ category: 'pokemon', cards: shopCards('pokemon', 10, 0.6) }]);
    const r = await runBacktest({ ...base, snapshot: snap, market: 'dynamic' });
    expect(r.cards!.backtested).toBe(true);
    expect(r.cards!.notice).toMatch(/no onepiece/);
    expect(r.cards!.per_category!.map((x) => x.category)).toEqual(['pokemon']);
  });

  it('a strategy that buys no cards has no card rows at all', async () => {
    const r = await runBacktest({
      ...base,
      strategy: strategy({}, { base: 'backtest' }),
      snapshot: twoShops,
      market: 'dynamic',
    });
    expect('cards' in r).toBe(false);
    expect(terminalSummary(r)).not.toMatch(/card/);
  });
});

describe('card backtests are deterministic and shard', () => {
  const opts = {
    snapshot: twoShops,
    strategy: cardStrategy({ max_per_day: 3 }) as Strategy,
    days: 4,
    paths: 30,
    seed: 11,
    market: 'dynamic' as const,
    chunk: 4,
  };
  const strip = (r: object) => JSON.stringify({ ...r, elapsed_ms: 0 });

  it('the same report for any number of workers', async () => {
    const here = await runBacktest({ ...opts, workers: 0 });
    const two = await runBacktest({ ...opts, workers: 2 });
    expect(strip(two)).toBe(strip(here));
    expect(here.cards!.bought!.mean).toBeGreaterThan(0);
  });

  it('shards merged give the unsharded report, card rows included', async () => {
    const whole = await runBacktest({ ...opts, workers: 0 });
    const parts = await Promise.all(
      [1, 2, 3].map(async (index) => {
        const o = { ...opts, workers: 0, shard: { index, count: 3 } };
        const p = makePart(o, await runBacktestPaths(o));
        return { file: `part-${index}.json`, part: BacktestPartFile.parse(JSON.parse(JSON.stringify(p))) };
      }),
    );
    expect(strip(mergeParts(parts))).toBe(strip(whole));
    expect(parts[0]!.part.raw.cards!.length).toBe(10 * (8 + 3 * 2));
  });
});
