/**
 * Shared fixtures for the runner's tests: a small world whose one pack the test strategy opens
 * (a low band sold back, a high band listed), the strategy, an in-memory ledger, collected logs,
 * and a clock wrapper that tells a driver when every loop is asleep.
 */
import { Writable } from 'node:stream';
import type { z } from 'zod';
import { ServerError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { VirtualClock } from '../../src/core/clock.js';
import { TrackingClock } from '../../src/core/tracking-clock.js';
import { FaultRule } from '../../src/market/faults.js';
import { Market } from '../../src/market/market.js';

type FaultRuleInput = z.input<typeof FaultRule>;

import { AccountBot, type AccountBotOptions, type Cadence } from '../../src/bot/account/account-bot.js';
import type { AccountContext } from '../../src/bot/common/context.js';
import { type ExecutorOptions, PurchaseExecutor } from '../../src/bot/spending/executor.js';
import { devKeys, parseWorld } from '../../src/market/world.js';
import type { World, WorldInput } from '../../src/market/world-schema.js';
import { createLogger, type Logger, SecretRegistry } from '../../src/obs/logger.js';
import { Metrics } from '../../src/obs/metrics.js';
import { Ledger } from '../../src/store/ledger.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { strategy } from '../strategy-builder.js';

export { TrackingClock };

export const KEY = 'sk_sim_full';

/** The runner's default cadence (docs/runner.md), for tests that drive an AccountBot. */
export const CADENCE: Cadence = {
  accountMs: 60_000,
  poolsMs: 300_000,
  vaultMs: 600_000,
  listingsMs: 300_000,
  sweepMs: 15_000,
  idleMs: 5_000,
};
export const START = Date.UTC(2026, 0, 5, 8, 0, 0);

export function testWorld(overrides: Partial<WorldInput> = {}): World {
  return parseWorld({
    format: 'packbot.world/v1',
    name: 'runner test world',
    accounts: [{ id: 'acct_t', username: 'tester', balance: 5000 }],
    keys: devKeys('acct_t'),
    categories: {
      pokemon: {
        packs: [
          {
            pack_type: 'lucky',
            name: 'Lucky Pack',
            price: 10,
            max_quantity: 10,
            risk_levels: ['standard'],
            bands: [
              {
                bucket_id: 'low',
                min_value: 5,
                max_value: 9,
                odds: { standard: 0.7 },
                generate: { count: 400, distribution: 'uniform' },
              },
              {
                bucket_id: 'high',
                min_value: 30,
                max_value: 60,
                odds: { standard: 0.3 },
                generate: { count: 200, distribution: 'uniform' },
              },
            ],
          },
        ],
      },
    },
    dynamics: {
      others_pack_openings_per_hour: 0,
      others_shop_purchases_per_hour: 0,
      value_daily_volatility: 0,
    },
    ...overrides,
  });
}

export class LogSink extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    for (const l of chunk.toString('utf8').split('\n')) if (l) this.lines.push(l);
    cb();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  messages(): string[] {
    return this.lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
  }
}

export function testLogger(
  sink = new LogSink(),
  secrets = new SecretRegistry(),
): { log: Logger; sink: LogSink } {
  secrets.add(KEY);
  return { log: createLogger({ level: 'debug', pretty: 'never', destination: sink, secrets }), sink };
}

export interface Fixture {
  clock: VirtualClock;
  market: Market;
  api: PartnerApi;
  ledger: Ledger;
  metrics: Metrics;
  log: Logger;
  sink: LogSink;
  strategy: Strategy;
}

export function fixture(opts: { world?: World; strategy?: Strategy; clock?: VirtualClock } = {}): Fixture {
  const clock = opts.clock ?? new VirtualClock(START);
  const market = new Market(opts.world ?? testWorld(), { clock, seed: 7 });
  const { log, sink } = testLogger();
  return {
    clock,
    market,
    api: market.api(KEY),
    ledger: Ledger.open(':memory:', { clock }),
    metrics: new Metrics({ defaultMetrics: false }),
    log,
    sink,
    strategy: opts.strategy ?? strategy({}, { base: 'bot' }),
  };
}

/** The fixture as the per-account context every runner part takes (account `main`). */
export function contextOf(f: Fixture, api: PartnerApi = f.api): AccountContext {
  return {
    account: 'main',
    api,
    ledger: f.ledger,
    clock: f.clock,
    log: f.log,
    metrics: f.metrics,
    strategy: f.strategy,
  };
}

/** The fixture's purchase executor (account `main`, its API, ledger and log); `over` replaces any option. */
export function executorOf(f: Fixture, over: Partial<ExecutorOptions> = {}): PurchaseExecutor {
  return new PurchaseExecutor({ account: 'main', api: f.api, ledger: f.ledger, log: f.log, ...over });
}

/**
 * The fixture's AccountBot: account `main`, the default cadence, batches of 10; a fatal error is
 * thrown (the test fails) unless `over.onFatal` collects it. `over` replaces any option.
 */
export function testBot(f: Fixture, over: Partial<AccountBotOptions> = {}): AccountBot {
  return new AccountBot({
    ...contextOf(f),
    cadence: CADENCE,
    batchSize: 10,
    onFatal: (e) => {
      throw e;
    },
    ...over,
  });
}

/** Every money movement of the simulated account, by kind. */
export function charges(market: Market): { purchases: number; refunds: number; sellbacks: number } {
  const out = { purchases: 0, refunds: 0, sellbacks: 0 };
  for (const e of market.ledger()) {
    if (e.accountId !== 'acct_t') continue;
    if (e.kind === 'pack_purchase') out.purchases++;
    if (e.kind === 'pack_refund') out.refunds++;
    if (e.kind === 'sell_back') out.sellbacks++;
  }
  return out;
}

/**
 * Advances `clock` to `until`, jumping from wake-up to wake-up once `sleepers` loops are asleep.
 * `stop` (a runner's `done`) ends the drive when it settles: loops that stopped never sleep again.
 */
export async function driveUntil(
  clock: TrackingClock,
  until: number,
  sleepers: number,
  stop?: Promise<unknown>,
): Promise<void> {
  const stopped = { now: false };
  void stop?.finally(() => {
    stopped.now = true;
  });
  for (;;) {
    await quiet(clock, sleepers, stopped);
    if (stopped.now) return;
    const next = clock.inner.nextWakeAt();
    if (next === undefined || next > until) {
      await clock.inner.advance(Math.max(0, until - clock.now()));
      await quiet(clock, sleepers, stopped);
      return;
    }
    await clock.inner.advance(Math.max(0, next - clock.now()));
  }
}

/** Every loop asleep for three turns of the event loop (or stopped); 60 s of wall time only ends a hang. */
async function quiet(clock: TrackingClock, sleepers: number, stopped: { now: boolean }): Promise<void> {
  let calm = 0;
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    await new Promise<void>((r) => setImmediate(r));
    if (stopped.now) return;
    calm = clock.pending >= sleepers ? calm + 1 : 0;
    if (calm >= 3) return;
  }
  throw new Error(`the bot never went quiet (${clock.pending}/${sleepers} asleep)`);
}

/** A fault rule with every default filled in (`market.setFaults` takes parsed rules). */
export function fault(rule: FaultRuleInput): FaultRule {
  return FaultRule.parse(rule);
}

/**
 * The fixture's API whose listing writes of `method` fail (a 500, as after the client's retries)
 * for the cards `fails` names; `tried` lists the cards asked, in order.
 */
export function failingListingWrites(
  f: Fixture,
  method: 'createListing' | 'deleteListing',
  fails: (cardId: string) => boolean,
): { api: PartnerApi; tried: string[] } {
  const tried: string[] = [];
  const api: PartnerApi = {
    ...f.api,
    [method]: (body: { card_id: string }) => {
      tried.push(body.card_id);
      if (fails(body.card_id)) return Promise.reject(new ServerError(`${method} failed`, 500));
      return (f.api[method] as (b: typeof body) => Promise<unknown>)(body);
    },
  };
  return { api, tried };
}

/** A card the service keeps failing: the first one asked about (`fails`), and which it was. */
export function poisonCard(): { fails: (cardId: string) => boolean; card: () => string } {
  let poison: string | undefined;
  return {
    fails: (cardId) => {
      poison ??= cardId;
      return cardId === poison;
    },
    card: () => poison!,
  };
}
