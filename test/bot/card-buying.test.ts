/**
 * Card buying end to end on the simulator (issue #18's acceptance): a shop selling below market
 * value in one category and above it in another; a watchlist card whose price falls through its
 * limit; the service's own daily card cap; a needs_review answer.
 */
import { describe, expect, it } from 'vitest';
import { CardNoLongerAvailableError, TransportError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { renderReport } from '../../src/cli/report.js';
import { DAY_MS, HOUR_MS, MINUTE_MS, nextUtcMidnight, VirtualClock } from '../../src/core/clock.js';
import { KillSwitch } from '../../src/obs/kill-switch.js';
import type { OrderRow } from '../../src/store/ledger.js';
import { computeReport } from '../../src/store/pnl.js';
import { highestPriceCents } from '../../src/strategy/card-score.js';
import { type StrategyOverride, strategy } from '../strategy-builder.js';
import { PACK, shopWorld } from './card-world.js';
import { driveUntil, fault, fixture, START, TrackingClock, testBot } from './helpers.js';

/** open, sweep, reconcile and the card buyer. */
const SLEEPERS = 4;

const CARDS = {
  enabled: true,
  categories: ['pokemon', 'onepiece'],
  min_edge_ratio: 1.1,
  max_price_usd: 300,
  max_per_day: 5,
  max_daily_spend_usd: 400,
  exit: 'list',
} satisfies StrategyOverride['cards'];

function makeBot(
  world: ReturnType<typeof shopWorld>,
  cards: Record<string, unknown> = {},
  wrap: (api: PartnerApi) => PartnerApi = (api) => api,
) {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  // Packs never score 100× their price: this bot only buys cards.
  const s = strategy(
    {
      open: { min_ev_ratio: 100, max_quantity: 1, sizing: 'fixed' },
      cards: { ...CARDS, ...cards },
    },
    { base: 'bot' },
  );
  const f = fixture({ clock: virtual, world, strategy: s });
  const fatal: unknown[] = [];
  const killSwitch = new KillSwitch(undefined, () => virtual.now());
  const bot = testBot(f, { api: wrap(f.api), clock, killSwitch, onFatal: (e) => fatal.push(e) });
  return { f, clock, bot, fatal, strategy: s, killSwitch };
}

function cardOrders(f: ReturnType<typeof fixture>): OrderRow[] {
  return f.ledger.reportData(0, Number.MAX_SAFE_INTEGER).orders.filter((o) => o.operation === 'card');
}

/** The simulator's own record of what the account paid for cards (price and fee), by transaction. */
function simCardCharges(f: ReturnType<typeof fixture>): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of f.market.ledger())
    if (e.accountId === 'acct_t' && (e.kind === 'card_purchase' || e.kind === 'card_fee'))
      out.set(e.ref, (out.get(e.ref) ?? 0) - e.amountCents);
  return out;
}

describe('card buying on the simulator', () => {
  it('buys only under-priced cards, never above break-even, lists them, within its caps, to the cent', async () => {
    const { f, clock, bot, fatal, strategy } = makeBot(shopWorld());
    await bot.start();
    const end = nextUtcMidnight(START) + DAY_MS + 6 * HOUR_MS;
    await driveUntil(clock, end, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);

    const orders = cardOrders(f);
    // Two UTC days (and part of a third) at 5 a day.
    expect(orders.length).toBeGreaterThanOrEqual(10);
    expect(new Set(orders.map((o) => o.category))).toEqual(new Set(['pokemon']));
    const byDay = new Map<number, OrderRow[]>();
    for (const o of orders) {
      const day = Math.floor(o.createdAt / DAY_MS);
      byDay.set(day, [...(byDay.get(day) ?? []), o]);
    }
    for (const day of byDay.values()) {
      expect(day.length).toBeLessThanOrEqual(CARDS.max_per_day);
      expect(day.reduce((n, o) => n + o.totalChargedCents, 0)).toBeLessThanOrEqual(
        CARDS.max_daily_spend_usd * 100,
      );
    }
    const sim = simCardCharges(f);
    for (const o of orders) {
      const [card] = f.ledger.pullsOfOrder(o.checkoutId);
      expect(card?.origin).toBe('purchase');
      // Never above the break-even price of the card's value at purchase.
      const breakEven = highestPriceCents(card!.valueCents, strategy, 1);
      expect(o.priceCents!).toBeLessThanOrEqual(breakEven!);
      expect(o.feeCents).toBe(100);
      expect(o.totalChargedCents).toBe(o.priceCents! + o.feeCents!);
      // Listed (or already sold through its listing).
      expect(f.ledger.listingOfPull(card!.pullId)).toBeDefined();
      // The simulator charged exactly what the ledger booked, order by order.
      expect(sim.get(card!.pullId)).toBe(o.totalChargedCents);
    }
    expect(sim.size).toBe(orders.length);
    const metrics = await f.metrics.text();
    expect(metrics).toContain(`packbot_cards_bought_total{category="pokemon"} ${orders.length}`);
    expect(metrics).not.toContain('packbot_cards_bought_total{category="onepiece"}');
    const spent = orders.reduce((n, o) => n + o.totalChargedCents, 0) / 100;
    expect(metrics).toContain(`packbot_card_spend_usd_total ${spent}`);
    expect(metrics).toMatch(/packbot_shop_cards\{decision="edge"\} [1-9]/);

    // packbot report: card purchases as their own rows.
    const report = computeReport(f.ledger.reportData(0, end), 0, end);
    const c = report.cards!;
    expect(c.orders).toBe(orders.length);
    expect(c.feesCents).toBe(100 * orders.length);
    expect(c.spendCents).toBe(orders.reduce((n, o) => n + o.totalChargedCents, 0));
    expect(c.pricesCents + c.feesCents).toBe(c.spendCents);
    expect(c.holdings + (c.listingProceedsCents > 0 ? 1 : 0)).toBeGreaterThan(0);
    expect(c.netCents).toBe(
      c.sellbackPayoutCents + c.listingProceedsCents + c.holdingsSellbackCents - c.spendCents,
    );
    expect(report.byPack.map((g) => g.key)).toContain('card purchase/pokemon');
    expect(renderReport(report)).toMatch(/card purchases\s+cards\s+prices\s+fees\s+spend/);
  });

  it("watches a card bought outside the packs' categories: no phantom sale, nothing lost", async () => {
    const gen = { min_value: 20, max_value: 150, generate: { count: 40, distribution: 'uniform' } };
    const world = shopWorld(
      {},
      {
        pokemon: { packs: [PACK], shop: { ...gen, markup: 1.3 } },
        onepiece: { shop: { ...gen, markup: 0.6 } },
      },
    );
    const { f, clock, bot, fatal } = makeBot(world);
    await bot.start();
    await driveUntil(clock, START + DAY_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const orders = cardOrders(f);
    expect(orders.length).toBeGreaterThan(0);
    expect(new Set(orders.map((o) => o.category))).toEqual(new Set(['onepiece']));
    const data = f.ledger.reportData(0, clock.now());
    // Every fill the ledger recorded is a sale the simulator made, and no card went missing.
    const sold = new Set(
      f.market
        .ledger()
        .filter((e) => e.accountId === 'acct_t' && e.kind === 'listing_sale')
        .map((e) => e.ref),
    );
    const filled = data.listings.filter((l) => l.state === 'filled');
    for (const l of filled) expect(sold.has(l.listingId)).toBe(true);
    expect(data.pulls.filter((p) => p.status === 'gone' || p.status === 'shipped')).toEqual([]);
  });

  it("stops for the UTC day at the service's daily card cap, and starts again after midnight", async () => {
    const { f, clock, bot, fatal } = makeBot(shopWorld({ rules: { card_daily_count_cap: 2 } }));
    await bot.start();
    const midnight = nextUtcMidnight(START);
    await driveUntil(clock, midnight - 1, SLEEPERS);
    expect(cardOrders(f)).toHaveLength(2);
    const refusedDay1 = (await f.metrics.text()).match(
      /packbot_card_purchases_refused_total\{code="DAILY_CARD_LIMIT_REACHED"\} (\d+)/,
    );
    // One refusal, then no request until midnight.
    expect(refusedDay1?.[1]).toBe('1');
    await driveUntil(clock, midnight + 2 * HOUR_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(cardOrders(f)).toHaveLength(4);
  });

  it('buys a watchlist card once its price falls under the limit, and not before', async () => {
    const world = shopWorld(
      {
        dynamics: {
          others_pack_openings_per_hour: 0,
          others_shop_purchases_per_hour: 0,
          value_daily_volatility: 0,
          value_daily_trend: -0.1,
        },
      },
      {
        pokemon: { packs: [PACK] },
        onepiece: {
          shop: {
            markup: 1,
            cards: [
              {
                id: 'wanted-1',
                name: 'Charizard Gold Star',
                value: 100,
                grading_company: 'PSA',
                grading_rank: 10,
              },
              {
                id: 'wanted-2',
                name: 'Charizard Gold Star',
                value: 100,
                grading_company: 'BGS',
                grading_rank: 10,
              },
            ],
          },
        },
      },
    );
    const { f, clock, bot, fatal } = makeBot(world, {
      categories: ['onepiece'],
      watchlist: [{ name: 'charizard', grading_company: 'PSA', min_grade: 9, max_price_usd: 90 }],
    });
    await bot.start();
    await driveUntil(clock, START + 12 * HOUR_MS, SLEEPERS);
    // The price is still above 90: nothing bought.
    expect(cardOrders(f)).toHaveLength(0);
    await driveUntil(clock, START + 3 * DAY_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const orders = cardOrders(f);
    expect(orders.map((o) => o.cardId)).toEqual(['wanted-1']);
    // Bought at the first sync after the price crossed the limit (it falls ~0.4% an hour).
    expect(orders[0]!.priceCents).toBeLessThanOrEqual(9000);
    expect(orders[0]!.priceCents).toBeGreaterThan(8900);
  });

  it('holds a card the service flagged needs_review and never buys it again', async () => {
    const { f, clock, bot, fatal } = makeBot(shopWorld(), { max_per_day: 1 });
    f.market.setFaults({ 'POST /cards/purchase': fault({ needs_review_rate: 1 }) });
    await bot.start();
    await driveUntil(clock, START + 6 * HOUR_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const orders = cardOrders(f);
    expect(orders).toHaveLength(1);
    expect(orders[0]!.needsReview).toBe(true);
    const [card] = f.ledger.pullsOfOrder(orders[0]!.checkoutId);
    expect(card?.status).toBe('held');
    expect(f.ledger.listingOfPull(card!.pullId)).toBeUndefined();
    expect(await f.metrics.text()).toContain('packbot_cards_needing_review 1');
  });

  it('settles a card purchase whose answer was lost, booking it once at the price paid', async () => {
    let drops = 2;
    const { f, clock, bot, fatal } = makeBot(shopWorld(), { max_per_day: 3 }, (api) => ({
      ...api,
      // The order commits on the service, then the answer is lost: twice.
      purchaseCard: async (body, key) => {
        const r = await api.purchaseCard(body, key);
        if (drops-- > 0) throw new TransportError('reset', 'connection reset after the order committed');
        return r;
      },
    }));
    await bot.start();
    await driveUntil(clock, START + 6 * HOUR_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const orders = cardOrders(f);
    expect(orders).toHaveLength(3);
    const sim = simCardCharges(f);
    expect(sim.size).toBe(3);
    for (const o of orders) {
      const [card] = f.ledger.pullsOfOrder(o.checkoutId);
      // Re-sent under the same key: the replay carries the exact price (not a settled estimate).
      expect(o.checkoutId.startsWith('settled:')).toBe(false);
      expect(sim.get(card!.pullId)).toBe(o.totalChargedCents);
    }
    expect(f.ledger.unresolvedIntents()).toEqual([]);
    expect(f.sink.messages().filter((m) => m.startsWith('order outcome unknown'))).toHaveLength(2);
  });

  it('settles by the vault when the service forgot the key: charged once, at its max_price', async () => {
    const keys = new Set<string>();
    const { f, clock, bot, fatal } = makeBot(shopWorld(), { max_per_day: 1 }, (api) => ({
      ...api,
      purchaseCard: async (body, key) => {
        // A service that lost the key answers a re-send as a new order: the card is gone (ours).
        if (keys.has(key)) throw new CardNoLongerAvailableError('this card is no longer available');
        keys.add(key);
        await api.purchaseCard(body, key);
        throw new TransportError('reset', 'connection reset after the order committed');
      },
    }));
    await bot.start();
    await driveUntil(clock, START + 3 * HOUR_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const orders = cardOrders(f);
    expect(orders).toHaveLength(1);
    const order = orders[0]!;
    const intent = f.ledger.getIntent(order.intentKey)!;
    expect(intent.keyForgotten).toBe(true);
    expect(intent.settledBy).toMatch(/the card is in the vault/);
    // Booked at the most it could have cost (its max_price) plus the fee; the sim charged no more.
    const maxPrice = Math.round(Number(intent.body.max_price) * 100);
    expect(order.totalChargedCents).toBe(maxPrice + 100);
    const [card] = f.ledger.pullsOfOrder(order.checkoutId);
    const charged = simCardCharges(f);
    expect(charged.size).toBe(1);
    expect(charged.get(card!.pullId)).toBeLessThanOrEqual(order.totalChargedCents);
    expect(card?.origin).toBe('purchase');
    expect(f.ledger.listingOfPull(card!.pullId)).toBeDefined();
  });

  it('holds for review a card the service charged above its max_price', async () => {
    const { f, clock, bot, fatal } = makeBot(shopWorld(), { max_per_day: 1 }, (api) => ({
      ...api,
      // A service that overcharges: the answer reports a price above the order's max_price.
      purchaseCard: async (body, key) => {
        const r = await api.purchaseCard(body, key);
        const price = Math.round((body.max_price + 5) * 100) / 100;
        return { ...r, price, total_charged: Math.round((price + r.fee) * 100) / 100 };
      },
    }));
    await bot.start();
    await driveUntil(clock, START + 3 * HOUR_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    const [order] = cardOrders(f);
    expect(order?.needsReview).toBe(true);
    const [card] = f.ledger.pullsOfOrder(order!.checkoutId);
    expect(card?.status).toBe('held');
    expect(f.ledger.decisionsFor(card!.pullId)[0]?.reason).toMatch(/above the order's max_price/);
    expect(await f.metrics.text()).toContain('packbot_cards_needing_review 1');
  });

  it('buys nothing while the kill switch is on', async () => {
    const { f, clock, bot, fatal, killSwitch } = makeBot(shopWorld());
    killSwitch.pause({ by: 'test' });
    await bot.start();
    await driveUntil(clock, START + 3 * HOUR_MS, SLEEPERS);
    expect(cardOrders(f)).toHaveLength(0);
    killSwitch.resume();
    await driveUntil(clock, START + 5 * HOUR_MS, SLEEPERS);
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(cardOrders(f).length).toBeGreaterThan(0);
  });

  it('paused, the card loop looks again at the account cadence, and a resume wakes it at once', async () => {
    const { f, clock, bot, fatal, killSwitch } = makeBot(shopWorld());
    killSwitch.pause({ by: 'test' });
    let looks = 0;
    const once = bot.cards.once.bind(bot.cards);
    bot.cards.once = (signal) => {
      looks++;
      return once(signal);
    };
    await bot.start();
    await driveUntil(clock, START + 30 * MINUTE_MS, SLEEPERS);
    // One look at the start and one a minute (CADENCE.accountMs), not one every idleMs (5 s).
    expect(looks).toBeGreaterThanOrEqual(30);
    expect(looks).toBeLessThanOrEqual(31);
    expect(bot.cards.lastWait).toBe('kill switch is on');
    expect(killSwitch.watchers).toBeLessThanOrEqual(2);
    const resumedAt = clock.now() + 10_000;
    await driveUntil(clock, resumedAt, SLEEPERS);
    const before = looks;
    killSwitch.resume();
    await driveUntil(clock, resumedAt + 1000, SLEEPERS);
    expect(looks).toBeGreaterThan(before);
    expect(bot.cards.lastWait).not.toBe('kill switch is on');
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(cardOrders(f).length).toBeGreaterThan(0);
  });
});
