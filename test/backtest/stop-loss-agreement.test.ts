/**
 * The stop-loss trips at the same order in the bot and in the backtest (issue #36, one marked
 * P&L): both read `markedPnlCents` (src/strategy/budget.ts), which counts sealed packs at the
 * strategy's `sealed_value_fraction` of their value.
 *
 * A world with no chance in it: one pack of 10 USD whose only band is the consolation band, 60
 * sealed packs of 10.01 USD each; no other users, no restock, no value drift. The strategy opens
 * one pack an order whatever its edge (sizing fixed, `min_ev_ratio` 0) and marks a sealed pack at
 * 0.35: each order moves the marked P&L by 0.35 × 1001 − 1000 = −649.65 cents. With a stop-loss of
 * 129.95 USD the 21st order is the last one (after 20: −12 993, after 21: −13 643, sealed worth
 * rounded once). Leaving the sealed packs out (−1000 an order) stopped the backtest after 13
 * orders; rounding each pack's worth alone (−650 an order) stopped the bot after 20.
 *
 * The bot is the real AccountBot on the in-process simulator built from the same snapshot, on a
 * virtual clock; the backtest is the engine's static loop, the general loop on the static market
 * and the dynamic market.
 */
import { describe, expect, it } from 'vitest';
import type { SnapshotFile } from '../../src/api/snapshot-schema.js';
import { runPath } from '../../src/backtest/path/path.js';
import type { MarketKind } from '../../src/backtest/path/path-io.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { AccountBot } from '../../src/bot/account/account-bot.js';
import { BudgetTracker } from '../../src/bot/spending/budget-state.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { worldFromSnapshot } from '../../src/market/world.js';
import { createLogger } from '../../src/obs/logger.js';
import { Metrics } from '../../src/obs/metrics.js';
import { Ledger } from '../../src/store/ledger.js';
import { stopLossHit } from '../../src/strategy/budget.js';
import { CADENCE, driveUntil, LogSink, TrackingClock } from '../bot/helpers.js';
import { band, card, pool } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { account, snapshot } from './helpers.js';

/** Orders until the stop-loss holds, and the marked P&L (cents) it then reads. */
const LAST_ORDER = 21;
const MARKED_AT_STOP = -13_643;

const SEALED = Array.from({ length: 60 }, (_, i) => card(`sealed${i}`, 'sealed', 10.01));
const SNAPSHOT: SnapshotFile = snapshot(
  [
    pool({
      pack_type: 'sealed-only',
      price: 10,
      expected_value: 10.01,
      bands: [band('sealed', 1, 10.01, 10.01, SEALED.length, true)],
      cards: SEALED,
    }),
  ],
  account({}, 10_000),
);

const STRATEGY = strategy(
  {
    open: { max_quantity: 1 },
    budget: { stop_loss_usd: 129.95 },
    sell: { sealed_value_fraction: 0.35 },
  },
  { base: 'backtest' },
);

/** Nothing moves but our own orders. */
const STILL = {
  others_pack_openings_per_hour: 0,
  others_shop_purchases_per_hour: 0,
  restock_cards_per_hour_per_pack: 0,
  restock_fraction_per_hour: 0,
  value_daily_volatility: 0,
  value_daily_trend: 0,
};

describe('the stop-loss trips at the same order in the bot and the backtest (sealed packs held)', () => {
  it('the bot on the simulator stops after the 21st order', async () => {
    const start = Date.parse(SNAPSHOT.taken_at);
    const virtual = new VirtualClock(start);
    const clock = new TrackingClock(virtual);
    const market = new Market(worldFromSnapshot(SNAPSHOT, { dynamics: STILL }), { clock: virtual, seed: 1 });
    const ledger = Ledger.open(':memory:', { clock: virtual });
    const fatal: unknown[] = [];
    const bot = new AccountBot({
      account: 'main',
      api: market.api('sk_sim_full'),
      ledger,
      clock,
      log: createLogger({ level: 'warn', pretty: 'never', destination: new LogSink() }),
      metrics: new Metrics({ defaultMetrics: false }),
      strategy: STRATEGY,
      cadence: CADENCE,
      batchSize: 10,
      onFatal: (e) => fatal.push(e),
    });
    await bot.start();
    // 21 orders a minute apart, then an hour more in which nothing may be opened.
    await driveUntil(clock, start + 2 * HOUR_MS, 3);
    await bot.stop();
    expect(fatal).toEqual([]);
    expect(ledger.intentCounts()).toMatchObject({ failed: 0, in_doubt: 0, pending: 0, sent: 0 });

    const orders = ledger.reportData(0, virtual.now() + 1).orders;
    expect(orders.map((o) => o.quantity)).toEqual(Array(LAST_ORDER).fill(1));
    const held = ledger.holdings('main');
    expect(held).toHaveLength(LAST_ORDER);
    expect(held.every((p) => p.kind === 'sealed_pack' && p.valueCents === 1001)).toBe(true);
    const totals = new BudgetTracker(ledger, 'main', STRATEGY).totals(virtual.now());
    expect(totals.markedPnlCents).toBe(MARKED_AT_STOP);
    expect(stopLossHit(totals, STRATEGY)).toBe(true);
    ledger.close();
  });

  const runs: [string, MarketKind, (e: Engine) => ReturnType<Engine['runPath']>][] = [
    ['static loop', 'static', (e) => e.runPath(0)],
    [
      'general loop, static market',
      'static',
      (e) => runPath(e.model, e.marketFor(0), 0, { days: 1, seed: 1, cards: e.cards }),
    ],
    ['dynamic market', 'dynamic', (e) => e.runPath(0)],
  ];
  it.each(runs)('the backtest (%s) stops after the 21st order', (_label, market, run) => {
    const engine = new Engine({
      snapshot: SNAPSHOT,
      strategy: STRATEGY,
      days: 1,
      seed: 1,
      market,
      ...(market === 'dynamic' ? { dynamics: STILL } : {}),
    });
    const r = run(engine);
    expect(r.packs).toBe(LAST_ORDER);
    // Stopped by the stop-loss (a path's `ruined`), not by the cash or a cap.
    expect(r.ruined).toBe(true);
    expect(r.spendCents).toBe(LAST_ORDER * 1000);
    // Nothing sold or listed: the final equity is the marked P&L's own sum.
    expect(r.netPnlCents).toBe(MARKED_AT_STOP);
  });
});
