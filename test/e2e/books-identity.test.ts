/**
 * The books equal the service's where the spec is silent: against a simulator whose marketplace
 * keeps 10% (the strategy assumes 5%) and which drops 10% of purchase answers after the charge, for
 * a simulated day of packs, listings and shop cards over real HTTP, `packbot report`'s cash P&L,
 * the balance's change and the simulator's own books agree to the cent, every order is booked at
 * what the simulator charged, every sale at what it credited, and the identity's residual is 0.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { booksOf } from '../../src/bot/selling/cash-books.js';
import { renderModel } from '../../src/cli/model-table.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { toCents } from '../../src/core/money.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { Ledger } from '../../src/store/ledger.js';
import { ledgerModel } from '../../src/store/model-orders.js';
import { computeReport } from '../../src/store/pnl.js';
import { PACK } from '../bot/card-world.js';
import { driveUntil, fault, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { BALANCED, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterAll(removeTempDirs);

/** open, sweep, reconcile and the card buyer. */
const SLEEPERS = 4;
const ACCOUNT = 'acct_t';

function world() {
  const base = testWorld();
  return testWorld({
    categories: {
      pokemon: {
        ...base.categories.pokemon!,
        packs: [...base.categories.pokemon!.packs, { ...PACK, pack_type: 'cheap' }],
        shop: {
          markup: 0.6,
          min_value: 20,
          max_value: 150,
          generate: { count: 40, distribution: 'uniform' },
        },
      },
    },
    rules: { seller_fee_rate: 0.1 },
  } as never);
}

describe('the books follow the balance (10% marketplace fee, 10% of purchase answers lost)', () => {
  let server: SimServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  it('agree to the cent with the balance and the simulator after a day', async () => {
    const virtual = new VirtualClock(START);
    const clock = new TrackingClock(virtual);
    const market = new Market(world(), { clock: virtual, seed: 5 });
    market.setFaults({
      'POST /packs/purchase': fault({ drop_after_rate: 0.1 }),
      'POST /cards/purchase': fault({ drop_after_rate: 0.1 }),
    });
    server = await startSimServer({ market, clock: virtual, port: 0 });
    const dir = tempDir();
    const strategy = join(dir, 'strategy.yaml');
    writeFileSync(
      strategy,
      `${readFileSync(BALANCED, 'utf8')
        .replace(/max_daily_spend_usd: \d+/, 'max_daily_spend_usd: 600')
        .replace(
          /categories: \[pokemon, onepiece, sports, riftbound, watches\] # categories/,
          'categories: [pokemon] # categories',
        )}
cards:
  enabled: true
  categories: [pokemon]
  min_edge_ratio: 1.1
  max_price_usd: 300
  max_per_day: 6
  max_daily_spend_usd: 600
  exit: list
`,
    );
    const configPath = writeConfig(dir, { baseUrl: server.url, strategy });
    const sink = new LogSink();
    const runner = await Runner.start(loadBotConfig(configPath, { PB_TEST_KEY: KEY }), {
      clock,
      logDestination: sink,
      cadence: { sweepMs: 60_000 },
    });
    await driveUntil(clock, START + DAY_MS, SLEEPERS);
    await runner.stop('test done');
    expect(await runner.done).toBe(0);
    // Faults off; a last bot run settles what is in doubt and reads the balance once more.
    market.setFaults({});
    const last = await Runner.start(loadBotConfig(configPath, { PB_TEST_KEY: KEY }), {
      clock,
      logDestination: sink,
      cadence: { sweepMs: 60_000 },
    });
    await driveUntil(clock, clock.now() + 20 * 60_000, SLEEPERS);
    await last.stop('test done');
    expect(await last.done).toBe(0);

    const sim = market.ledger().filter((e) => e.accountId === ACCOUNT);
    const simChange = sim.reduce((n, e) => n + e.amountCents, 0);
    expect(market.balanceCents(ACCOUNT) - toCents(5000)).toBe(simChange);
    const ledger = Ledger.open(join(dir, 'ledger.db'), { readonly: true });
    try {
      const data = ledger.reportData(0, clock.now());
      expect(ledger.unresolvedCount()).toBe(0);
      // It traded: pack orders, card orders, listings sold at the world's fee, answers lost.
      const orders = data.orders;
      expect(orders.filter((o) => o.operation === 'card').length).toBeGreaterThan(0);
      const sold = data.listings.filter((l) => l.state === 'filled');
      expect(sold.length).toBeGreaterThan(2);
      expect(sink.text).toMatch(/in doubt|replay/);

      // Every order is booked at what the simulator charged for it.
      const charged = new Map<string, number>();
      for (const e of sim)
        if (e.kind === 'pack_purchase' || e.kind === 'card_purchase' || e.kind === 'card_fee')
          charged.set(e.ref, (charged.get(e.ref) ?? 0) - e.amountCents);
      // (The simulator names a card sale by its transaction id, the bought card's pull id here.)
      const refOf = (o: (typeof orders)[number]) =>
        o.operation === 'card' ? data.pulls.find((p) => p.checkoutId === o.checkoutId)!.pullId : o.checkoutId;
      for (const o of orders) expect(o.totalChargedCents, o.checkoutId).toBe(charged.get(refOf(o)));
      expect(orders.length).toBe(charged.size);
      // Every sale is credited with what the simulator paid: the price less its 10%.
      const credited = new Map<string, number>();
      for (const e of sim)
        if (e.kind === 'listing_sale' || e.kind === 'seller_fee')
          credited.set(e.ref, (credited.get(e.ref) ?? 0) + e.amountCents);
      for (const l of sold) expect(l.proceedsCents, l.listingId).toBe(credited.get(l.listingId));
      expect(ledger.listingFeeRate('main')).toBeCloseTo(0.1, 3);
      // The model's listing part names the fee the balance showed against the one it priced.
      const model = ledgerModel(ledger, { account: 'main' }, clock.now());
      expect(model.listing_fee).toEqual({ sales: sold.length, measured_rate: 0.1, assumed_rates: [0.05] });
      expect(renderModel(model)).toContain('the marketplace kept 10.00% of');

      // The identity: cash P&L = balance change − adjustments, residual 0, and no adjustment.
      const books = booksOf(ledger, 'main', 0.05)!;
      expect(books.residual_usd).toBe(0);
      expect(books.adjustments_usd).toBe(0);
      expect(books.sales_awaiting_credit).toBe(0);
      expect(toCents(books.balance_now_usd)).toBe(market.balanceCents(ACCOUNT));
      expect(toCents(books.balance_change_usd)).toBe(simChange);
      // `packbot report`'s cash P&L (payouts + proceeds − spend) is the same figure.
      const t = computeReport(data, 0, clock.now()).totals;
      expect(t.sellbackPayoutCents + t.listingProceedsCents - t.spendCents).toBe(simChange);
      expect(toCents(books.cash_pnl_usd)).toBe(simChange);
    } finally {
      ledger.close();
    }
  }, 300_000);
});
