/**
 * The bot live: the real src/bot code (AccountBot: opener, executor, sell side, card buyer,
 * listing watch and reconciler, an in-memory ledger) against an in-process simulator built from
 * the world's snapshot with the world's dynamics, every loop sleeping on one virtual clock, so a
 * simulated day takes a fraction of a second and nothing waits on the wall clock. The same
 * approach as test/backtest/runner-agreement.test.ts, whose case-by-case checks this generalises:
 * a run's money is read from the simulator's books and its holdings marked as the backtest marks
 * them, so the two give the same figures of the same world.
 */
import { Writable } from 'node:stream';
import type { SnapshotFile } from '../src/api/snapshot-schema.js';
import type { DynamicsInput } from '../src/backtest/world/dynamic-market.js';
import { AccountBot, type Cadence } from '../src/bot/account/account-bot.js';
import { DAY_MS, VirtualClock } from '../src/core/clock.js';
import { applyRate, toCents } from '../src/core/money.js';
import { TrackingClock } from '../src/core/tracking-clock.js';
import { Market } from '../src/market/market.js';
import { worldFromSnapshot } from '../src/market/world.js';
import { createLogger } from '../src/obs/logger.js';
import { Metrics } from '../src/obs/metrics.js';
import { Ledger } from '../src/store/ledger.js';
import { sealedValueCents } from '../src/strategy/pull-policy.js';
import type { Strategy } from '../src/strategy/strategy-schema.js';

/**
 * The runner's default polling, but for two loops. The sell sweep only retries sells and listings
 * that failed, and nothing fails here: every 5 minutes instead of 15 s changes no figure. The pools
 * are read every 15 minutes instead of 5 (a bot config may say so): reading every pool of the
 * world is most of a live run's time, and the backtest of the comparison rescores at the same
 * interval (its rescore_minutes), so both still decide on pools as fresh as each other's.
 */
export const LIVE_CADENCE: Cadence = {
  accountMs: 60_000,
  poolsMs: 900_000,
  vaultMs: 600_000,
  listingsMs: 300_000,
  sweepMs: 300_000,
  idleMs: 5_000,
};

/** The simulator's account a snapshot world holds (worldFromSnapshot). */
const ACCOUNT = 'acct_snapshot';

/** One bot run's figures, in the backtest's terms (cents). */
export interface LiveTotals {
  packs: number;
  spendCents: number;
  netCents: number;
  /** Orders the simulator refused, and what the bot logged at error level (both should be none). */
  failedOrders: number;
  errors: string[];
}

/** Lines at error level and above, kept for the row's notes. */
class ErrorSink extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, cb: () => void): void {
    for (const l of chunk.toString('utf8').split('\n')) if (l) this.lines.push(l);
    cb();
  }
}

/** The bot on `seed`'s simulator of the snapshot for `days` from the snapshot's instant. */
export async function liveRun(
  snapshot: SnapshotFile,
  strategy: Strategy,
  dynamics: DynamicsInput,
  seed: number,
  days: number,
): Promise<LiveTotals> {
  const start = Date.parse(snapshot.taken_at);
  const virtual = new VirtualClock(start);
  const clock = new TrackingClock(virtual);
  const { rescore_minutes: _r, card_sync_minutes: _c, ...rates } = dynamics;
  const world = worldFromSnapshot(snapshot, { dynamics: rates, shop: strategy.cards.enabled });
  const market = new Market(world, { clock: virtual, seed });
  const api = market.api('sk_sim_full');
  const sink = new ErrorSink();
  const ledger = Ledger.open(':memory:', { clock: virtual });
  const fatal: unknown[] = [];
  const bot = new AccountBot({
    account: 'main',
    api,
    ledger,
    clock,
    log: createLogger({ level: 'error', pretty: 'never', destination: sink }),
    metrics: new Metrics({ defaultMetrics: false }),
    strategy,
    cadence: LIVE_CADENCE,
    batchSize: 10,
    onFatal: (e) => fatal.push(e),
  });
  const startCash = market.balanceCents(ACCOUNT);
  try {
    await bot.start();
    // The open, sweep and reconcile loops, and the card buyer's while the strategy buys cards.
    await driveUntil(
      clock,
      start + days * DAY_MS - 1,
      strategy.cards.enabled ? 4 : 3,
      () => fatal.length > 0,
    );
    await bot.stop();
    const errors = [
      ...fatal.map((e) => `fatal: ${e instanceof Error ? e.message : String(e)}`),
      ...market.audit().map((p) => `simulator audit: ${p}`),
      ...sink.lines,
    ];
    let spend = 0;
    for (const e of market.ledger())
      if (e.accountId === ACCOUNT && (e.kind === 'pack_purchase' || e.kind === 'pack_refund'))
        spend -= e.amountCents;
    let packs = 0;
    for (const o of ledger.reportData(0, virtual.now() + 1).orders)
      if (o.operation === 'pack') packs += o.quantity;
    const cash = market.balanceCents(ACCOUNT) - startCash;
    return {
      packs,
      spendCents: spend,
      netCents: cash + (await holdingsCents(api, ledger, strategy)),
      failedOrders: ledger.intentCounts().failed,
      errors,
    };
  } finally {
    ledger.close();
  }
}

/**
 * What the account holds at the end, marked as a backtest path marks it: sealed packs at the
 * strategy's fraction of their value; pulled cards and listed bought cards at their sell-back
 * offer (0.8 of the locked basis); bought cards kept (`cards.exit: hold`) at market value.
 */
async function holdingsCents(
  api: ReturnType<Market['api']>,
  ledger: Ledger,
  strategy: Strategy,
): Promise<number> {
  let cents = 0;
  for (const p of ledger.holdings('main'))
    if (p.kind === 'sealed_pack') cents += sealedValueCents(p.valueCents, strategy);
  for (let page = 1; ; page++) {
    const v = await api.getVault({ page, per_page: 200 });
    for (const c of v.cards) {
      const kept = c.pull_id === null && !c.listed;
      cents += kept ? toCents(c.value) : applyRate(toCents(c.buyback?.basis_value ?? c.value), 0.8);
    }
    if (page * v.per_page >= v.total) break;
  }
  return Math.round(cents);
}

// ---------------------------------------------------------------------------------------------
// Driving the virtual clock: advance only once every loop is asleep (no request in flight), so
// behaviour, never the wall clock, sets the pace.

/**
 * Advances `clock` to `until`, from wake-up to wake-up, each time once every loop sleeps. `sleepers`
 * is how many loops the bot runs; one that ended (a strategy whose opening stopped for good) is
 * noticed when the count stays below it (`quiet`), and `stopped` (a fatal error) ends the drive.
 */
async function driveUntil(
  clock: TrackingClock,
  until: number,
  sleepers: number,
  stopped: () => boolean,
): Promise<void> {
  let loops = sleepers;
  for (;;) {
    loops = await quiet(clock, loops);
    if (stopped()) return;
    const next = clock.inner.nextWakeAt();
    if (next === undefined || next > until) {
      await clock.inner.advance(Math.max(0, until - clock.now()));
      await quiet(clock, loops);
      return;
    }
    await clock.inner.advance(Math.max(0, next - clock.now()));
  }
}

/** Turns of the event loop with no sleeper added or woken after which fewer loops are taken to run. */
const SETTLED_TURNS = 200;

/**
 * Waits until `loops` loops sleep for three turns of the event loop, or until the count has not
 * moved for SETTLED_TURNS turns (a loop ended: an in-process request settles within a few turns);
 * returns the loops still running. 60 s of wall time only ends a hang, reported as an error.
 */
async function quiet(clock: TrackingClock, loops: number): Promise<number> {
  let calm = 0;
  let still = 0;
  let last = -1;
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    await new Promise<void>((r) => setImmediate(r));
    const n = clock.pending;
    calm = n >= loops ? calm + 1 : 0;
    if (calm >= 3) return loops;
    still = n === last ? still + 1 : 0;
    last = n;
    if (still >= SETTLED_TURNS) return n;
  }
  throw new Error(`the live bot never went quiet (${clock.pending}/${loops} loops asleep)`);
}
