/**
 * The runner's goals, measured in this run:
 * - pull received → sell-back request sent, p50/p99 over many real orders (file ledger, fsync on),
 *   goal p99 < 50 ms (ratio = p99 / 50 ms);
 * - share of the allowed purchase slots used over a simulated day while the strategy wants to open
 *   (virtual clock), goal ≥ 99%;
 * - idle RSS and CPU of a paused bot on the wall clock (reported, no goal).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { PartnerApi } from '../src/api/partner-api.js';
import { AccountBot } from '../src/bot/account-bot.js';
import { PurchaseExecutor } from '../src/bot/executor.js';
import { SellSide } from '../src/bot/sell-side.js';
import { type Clock, DAY_MS, VirtualClock, WallClock } from '../src/core/clock.js';
import { Market } from '../src/market/market.js';
import { devKeys, parseWorld } from '../src/market/world.js';
import { KillSwitch } from '../src/obs/kill-switch.js';
import { createLogger } from '../src/obs/logger.js';
import { Metrics } from '../src/obs/metrics.js';
import { Ledger } from '../src/store/ledger.js';
import { StrategyFile } from '../src/strategy/strategy-schema.js';
import type { Benchmark, BenchResult } from './lib.js';

/** The runner's default polling cadences (config defaults), shared by both measurements. */
const CADENCE = {
  accountMs: 60_000,
  poolsMs: 300_000,
  vaultMs: 600_000,
  listingsMs: 300_000,
  sweepMs: 15_000,
  idleMs: 5_000,
};

const KEY = 'sk_sim_full';
const START = Date.UTC(2026, 0, 5);

const world = () =>
  parseWorld({
    format: 'packbot.world/v1',
    accounts: [{ id: 'acct_b', username: 'bench', balance: 1_000_000 }],
    keys: devKeys('acct_b'),
    categories: {
      pokemon: {
        packs: [
          {
            pack_type: 'lucky',
            name: 'Lucky',
            price: 10,
            risk_levels: ['standard'],
            bands: [
              {
                bucket_id: 'low',
                min_value: 5,
                max_value: 9,
                odds: { standard: 0.7 },
                generate: { count: 20_000 },
              },
              {
                bucket_id: 'high',
                min_value: 30,
                max_value: 60,
                odds: { standard: 0.3 },
                generate: { count: 10_000 },
              },
            ],
          },
        ],
      },
    },
    dynamics: { others_pack_openings_per_hour: 0, others_shop_purchases_per_hour: 0 },
    rules: { max_packs_per_day: 1_000_000 },
  });

const strategy = StrategyFile.parse({
  format: 'packbot.strategy/v1',
  packs: { categories: ['pokemon'], risk_levels: ['standard'] },
  open: { max_quantity: 10, sizing: 'fixed' },
  budget: { max_daily_spend_usd: 1e7, max_total_spend_usd: 1e8, min_balance_usd: 0, stop_loss_usd: 1e8 },
  sell: { threshold_usd: 25 },
});

const silent = () =>
  createLogger({
    level: 'warn',
    pretty: 'never',
    destination: new Writable({ write: (_c, _e, cb) => cb() }),
  });

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};

async function latency(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'packbot-bench-'));
  const clock = new VirtualClock(START);
  const market = new Market(world(), { clock, seed: 1 });
  const ledger = Ledger.open(join(dir, 'ledger.db'), { clock });
  const received = new Map<string, number>();
  const samples: number[] = [];
  const inner = market.api(KEY);
  const api: PartnerApi = {
    ...inner,
    sellBack: (items) => {
      const t = performance.now();
      for (const i of items) {
        const r = received.get(i.pull_id);
        if (r !== undefined) samples.push(t - r);
      }
      return inner.sellBack(items);
    },
  };
  const log = silent();
  const metrics = new Metrics({ defaultMetrics: false });
  const ex = new PurchaseExecutor({ account: 'b', api, ledger, log });
  const sell = new SellSide({ account: 'b', api, ledger, clock, log, metrics, strategy, batchSize: 10 });
  for (let i = 0; i < 150; i++) {
    const out = await ex.open({
      body: { pack_type: 'lucky', category: 'pokemon', quantity: 10, risk_level: 'standard' },
    });
    if (out.status !== 'confirmed') throw new Error(`bench purchase ${out.status}`);
    const t = performance.now();
    for (const p of out.confirmed.pulls) received.set(p.pullId, t);
    sell.markReceived(out.confirmed.pulls);
    await sell.process();
    clock.advanceSync(60_000);
  }
  ledger.close();
  rmSync(dir, { recursive: true, force: true });
  const p50 = pct(samples, 50);
  const p99 = pct(samples, 99);
  return [
    { name: 'runner: pull → sell-back sent p50', value: `${p50.toFixed(2)} ms (${samples.length} pulls)` },
    {
      name: 'runner: pull → sell-back sent p99',
      value: `${p99.toFixed(2)} ms`,
      ratio: p99 / 50,
      goal: 'p99 < 50 ms (ratio < 1)',
      ok: p99 < 50,
    },
  ];
}

/** Counts wake-ups: advance straight to the next sleeper once the bot is idle. */
class CountingClock implements Clock {
  pending = 0;
  constructor(readonly inner: VirtualClock) {}
  now() {
    return this.inner.now();
  }
  async sleep(ms: number, signal?: AbortSignal) {
    this.pending++;
    try {
      await this.inner.sleep(ms, signal);
    } finally {
      this.pending--;
    }
  }
}

async function slots(): Promise<BenchResult[]> {
  // Everything sold back: this measures scheduling, not a day's worth of listings piling up.
  const sellAll = StrategyFile.parse({
    ...strategy,
    format: 'packbot.strategy/v1',
    sell: { threshold_usd: 100_000 },
  });
  const virtual = new VirtualClock(START);
  const clock = new CountingClock(virtual);
  const market = new Market(world(), { clock: virtual, seed: 2 });
  const ledger = Ledger.open(':memory:', { clock });
  const bot = new AccountBot({
    account: 'b',
    api: market.api(KEY),
    ledger,
    clock,
    log: silent(),
    metrics: new Metrics({ defaultMetrics: false }),
    strategy: sellAll,
    cadence: CADENCE,
    batchSize: 10,
    onFatal: (e) => {
      throw e;
    },
  });
  await bot.start();
  const end = START + DAY_MS;
  for (;;) {
    while (clock.pending < 3) await new Promise<void>((r) => setImmediate(r));
    const next = virtual.nextWakeAt();
    if (next === undefined || next >= end) break;
    await virtual.advance(next - virtual.now());
  }
  await bot.stop();
  // One purchase per minute is allowed: 1440 slots in the day (the first at START).
  const allowed = DAY_MS / 60_000;
  const used = ledger.intentCounts().confirmed;
  ledger.close();
  const share = used / allowed;
  return [
    {
      name: 'runner: purchase slots used (1 sim day)',
      value: `${used}/${allowed}`,
      ratio: share,
      goal: '≥ 0.99',
      ok: share >= 0.99,
    },
  ];
}

async function idle(): Promise<BenchResult[]> {
  const clock = new WallClock();
  const market = new Market(world(), { clock, seed: 3 });
  const ledger = Ledger.open(':memory:', { clock });
  const ks = new KillSwitch(undefined, () => clock.now());
  ks.pause();
  const bot = new AccountBot({
    account: 'b',
    api: market.api(KEY),
    ledger,
    clock,
    log: silent(),
    metrics: new Metrics(),
    strategy,
    cadence: CADENCE,
    batchSize: 10,
    killSwitch: ks,
    onFatal: () => undefined,
  });
  await bot.start();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, 3000));
  const cpu = process.cpuUsage(cpu0);
  const wall = performance.now() - t0;
  const rss = process.memoryUsage().rss;
  await bot.stop();
  ledger.close();
  return [
    {
      name: 'runner: idle CPU (paused bot)',
      value: `${(((cpu.user + cpu.system) / 1000 / wall) * 100).toFixed(2)}% of a core`,
    },
    { name: 'runner: idle RSS', value: `${(rss / 2 ** 20).toFixed(0)} MiB` },
  ];
}

const bench: Benchmark = {
  name: 'runner',
  async run() {
    return [...(await latency()), ...(await slots()), ...(await idle())];
  },
};
export default bench;
