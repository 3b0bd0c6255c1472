/**
 * The whole bot against the simulator over real HTTP, on a virtual clock shared by both: four
 * simulated days in seconds. Limits are met without a single 429, every sell-back lands in the 0.9
 * window, listings fill or are delisted and sold back after max_days, the metrics show it all, the
 * key appears nowhere, and a restart resumes from the ledger without a second charge.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { toCents } from '../../src/core/money.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { BALANCED, DESIGN_METRICS, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterAll(removeTempDirs);

const SLEEPERS = 3; // open, sweep and reconcile loops of the one account

describe('runner end to end over HTTP (virtual clock)', () => {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const market = new Market(testWorld(), { clock: virtual, seed: 11 });
  let server: SimServer;
  const dir = tempDir();
  const sink = new LogSink();
  let configPath: string;

  beforeAll(async () => {
    server = await startSimServer({ market, clock: virtual, port: 0 });
    // Balanced, with a daily spend cap above what 100 packs cost: the server's limit binds, not ours.
    const strategy = join(dir, 'strategy.yaml');
    writeFileSync(
      strategy,
      readFileSync(BALANCED, 'utf8').replace(/max_daily_spend_usd: \d+/, 'max_daily_spend_usd: 5000'),
    );
    configPath = writeConfig(dir, { baseUrl: server.url, strategy });
  });
  afterAll(async () => {
    await server.close();
  });

  const config = () => loadBotConfig(configPath, { PB_TEST_KEY: KEY });

  it('trades four simulated days inside every limit and window', async () => {
    const runner = await Runner.start(config(), {
      clock,
      logDestination: sink,
      cadence: { sweepMs: 60_000 },
    });
    await driveUntil(clock, START + 4 * DAY_MS, SLEEPERS);
    const metricsText = await (await fetch(`${runner.obs!.url}/metrics`)).text();
    await runner.stop('test done');
    expect(await runner.done).toBe(0);

    const ledger = Ledger.open(`${dir}/ledger.db`, { readonly: true });
    try {
      const data = ledger.reportData(0, clock.now());
      // Limits: the test world allows 100 packs per UTC day; the bot opens exactly that, 4 days
      // in a row (the first day starts at 08:00, so every slot of it was usable too).
      const perDay = new Map<number, number>();
      for (const o of data.orders)
        perDay.set(
          Math.floor(o.createdAt / DAY_MS),
          (perDay.get(Math.floor(o.createdAt / DAY_MS)) ?? 0) + o.quantity,
        );
      expect([...perDay.values()].slice(0, 4)).toEqual([100, 100, 100, 100]);
      // No 429 and no other error status on any endpoint.
      expect(metricsText).not.toMatch(/packbot_api_requests_total\{[^}]*status="(4xx|429|5xx|transport)"/);
      // The simulator charged each order once, and every pull is in the ledger.
      const simPurchases = market.ledger().filter((e) => e.kind === 'pack_purchase');
      expect(simPurchases.length).toBe(data.orders.length);
      expect(data.pulls.length).toBe(data.orders.reduce((n, o) => n + o.quantity, 0));
      expect(ledger.unresolvedCount()).toBe(0);
      expect(ledger.undecidedPulls()).toEqual([]);
      // Sell-backs: every low pull paid at 0.9, none missed.
      const sales = data.sellbacks.filter((s) => s.counted);
      const firstSale = new Map(sales.map((s) => [s.pullId, s]));
      const low = data.pulls.filter((p) => p.kind === 'card' && p.valueCents < toCents(25));
      expect(low.length).toBeGreaterThan(100);
      const unsold = low.filter((p) => firstSale.get(p.pullId)?.payoutRate !== 0.9);
      expect(
        unsold.map((p) => [p.status, p.valueCents, ledger.decisionsFor(p.pullId).map((d) => d.action)]),
      ).toEqual([]);
      expect(metricsText).toMatch(/packbot_sellback_window_missed_total\{account="main"\} 0\b/);
      // Listings: some filled with proceeds, the rest delisted and sold back after 3 days.
      const filled = data.listings.filter((l) => l.state === 'filled');
      const delisted = data.listings.filter((l) => l.state === 'delisted');
      expect(filled.length).toBeGreaterThan(0);
      expect(delisted.length).toBeGreaterThan(0);
      for (const l of delisted)
        expect(ledger.getPull(l.pullId!)?.status).toMatch(/sold|open|sell_pending|listed/);
      // The money matches to the cent: the simulator's balance is what the ledger last saw.
      expect(toCents(Number(/packbot_balance_usd\{account="main"\} ([\d.]+)/.exec(metricsText)?.[1]))).toBe(
        market.balanceCents('acct_t'),
      );
    } finally {
      ledger.close();
    }
    for (const name of DESIGN_METRICS) expect(metricsText, name).toContain(name);
    expect(metricsText).not.toContain(KEY);
    expect(sink.text).not.toContain(KEY);
    expect(sink.lines.length).toBeGreaterThan(100);
  });

  it('resumes from the ledger after a restart: nothing charged twice, holdings still managed', async () => {
    const before = market.ledger().filter((e) => e.kind === 'pack_purchase').length;
    const runner = await Runner.start(config(), { clock, logDestination: sink });
    await driveUntil(clock, clock.now() + 10 * 60_000, SLEEPERS);
    await runner.stop('test done');
    expect(await runner.done).toBe(0);
    const after = market.ledger().filter((e) => e.kind === 'pack_purchase').length;
    const ledger = Ledger.open(`${dir}/ledger.db`, { readonly: true });
    try {
      const orders = ledger.reportData(0, clock.now()).orders;
      expect(after).toBe(orders.length);
      expect(after).toBeGreaterThanOrEqual(before);
    } finally {
      ledger.close();
    }
    expect(market.audit()).toEqual([]);
  });
});
