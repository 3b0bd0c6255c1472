/**
 * The pack opener: one account's open loop. It wakes exactly at the next allowed purchase while
 * the strategy wants to open, reads the account and the pools when they are stale, scores them
 * and asks `decideOpen`, sends the order through the executor's intent protocol, and acts on what
 * the purchase answers (remaining balance, 429 bodies). An order in doubt is settled first
 * (in-doubt.ts). What a confirmed order books is the account bot's (account-bot.ts), which runs
 * this loop beside the card buyer (card-buyer.ts), the sell sweep and the reconciler.
 */
import {
  DailyLimitReachedError,
  isPartnerApiError,
  OrderRefundedError,
  type PartnerApiError,
  RateLimitedError,
} from '../../api/errors.js';
import { nextUtcMidnight } from '../../core/clock.js';
import { toCents } from '../../core/money.js';
import type { KillSwitch } from '../../obs/kill-switch.js';
import type { ConfirmedOrder } from '../../store/ledger.js';
import { isInDoubt } from '../../store/order-facts.js';
import { stopLossHit } from '../../strategy/budget.js';
import { decideOpen, type OpenDecision } from '../../strategy/decide-open.js';
import type { ScoreRow } from '../../strategy/score.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { AccountContext } from '../common/context.js';
import * as notices from '../common/notices.js';
import { sleepFor, sleepUntilChange } from '../common/sleep.js';
import type { InDoubtResolver, Resolution } from '../doubt/in-doubt.js';
import type { SellSide } from '../selling/sell-side.js';
import type { BudgetTracker, SpendTotals } from '../spending/budget-state.js';
import type { PurchaseExecutor, PurchaseOutcome } from '../spending/executor.js';
import type { SharedCatalog } from './catalog.js';
import { type AccountView, accountView, type PoolsRead, readPools, scoreView } from './market-view.js';
import { orderModel } from './model-watch.js';

/** How often the opener reads the account and the pools, and looks again while paused or blocked. */
export interface OpenCadence {
  accountMs: number;
  poolsMs: number;
  idleMs: number;
}

export interface PackOpenerOptions extends AccountContext {
  cadence: OpenCadence;
  executor: PurchaseExecutor;
  inDoubt: InDoubtResolver;
  sell: SellSide;
  killSwitch?: KillSwitch;
  /** The account's budget totals (packs and cards together). */
  budget: () => BudgetTracker;
  /** Purchases of packs and cards run one at a time (the caps are checked against both). */
  spending: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Whether opening was stopped (graceful stop): no new order. */
  openingStopped: () => boolean;
  /** Books what a settlement of an order in doubt found; returns it (AccountBot). */
  settled: (r: Resolution) => Resolution;
  /** Books a confirmed order: budget, metrics, the pulls to the sell side, the account (AccountBot). */
  onConfirmed: (confirmed: ConfirmedOrder, replay: boolean) => void;
  /** Brings the orders-in-doubt gauge up to date. */
  updateDoubtGauge: () => void;
  /** Told the balance of every account read, and when the read was sent (the books' nudge). */
  onBalanceRead?: (balanceCents: number, sentAt: number) => void;
  /** The pools and pack lists, read once for every account of the runner. */
  catalog: SharedCatalog;
  /**
   * This account's place in the runner's spread (ms): its first look waits this long, and it looks
   * at fresh pools this long after they are due, so many accounts do not score at once.
   */
  staggerMs?: number;
}

export class PackOpener {
  /** The account as last read, kept up to date by every order's answer (booked by AccountBot). */
  account: AccountView | undefined;
  private pools: (PoolsRead & { readAt: number }) | undefined;
  /** Pools read before this time do not do (an order refused because its pool changed). */
  private poolsNotBefore = Number.NEGATIVE_INFINITY;
  /** When our last pack order was confirmed (the strategy's cool-down counts from it). */
  lastPurchaseAt: number | null = null;
  /** Why the open loop last waited (for logs and tests). */
  lastWait = '';
  /** Pack orders confirmed since start (counted by AccountBot's booking). */
  purchases = 0;
  /** The latest scoring and what the open loop decided from it (read API). */
  lastScores: { rows: ScoreRow[]; decision: OpenDecision; at: number } | undefined;
  /** The last look found the kill switch on: the loop sleeps until it changes. */
  private pausedWait = false;
  /** The stop-loss guard held at the last look (a notification goes out when it starts to). */
  private stopLossOn = false;

  constructor(private readonly o: PackOpenerOptions) {}

  /** A reloaded (validated) strategy: the next decision uses it; pools are read again. */
  setStrategy(strategy: Strategy): void {
    (this.o as { strategy: Strategy }).strategy = strategy;
    this.pools = undefined;
  }

  /**
   * The open loop: one step (`openOnce`), then sleep until it says to look again. Paused by the
   * kill switch, it sleeps until the switch changes (a resume by endpoint wakes it at once, the
   * file's removal at the next check of it: the sell sweep's), looking again at the account
   * cadence at the latest, instead of polling the switch.
   */
  async loop(signal: AbortSignal): Promise<void> {
    const { clock, killSwitch } = this.o;
    const stagger = this.o.staggerMs ?? 0;
    if (stagger > 0 && !(await sleepFor(clock, stagger, signal))) return;
    while (!signal.aborted) {
      const until = await this.openOnce();
      if (until === 'stop') return;
      await sleepUntilChange(clock, until, signal, this.pausedWait ? killSwitch : undefined);
      if (signal.aborted) return;
    }
  }

  /** One scheduling step; returns when to look again, or 'stop'. */
  async openOnce(): Promise<number | 'stop'> {
    const { clock, cadence, strategy, ledger, log, metrics } = this.o;
    const now = clock.now();
    this.pausedWait = false;
    if (this.o.openingStopped()) return 'stop';
    // An order in doubt is settled (by evidence, or its own key) before any new one. The card
    // buyer's order on the wire is not: the spending lock orders it before this loop's next order.
    const onTheWire = (key: string) => this.o.executor.isOnTheWire(key);
    const doubt = ledger.unresolvedIntents(this.o.account).find((i) => isInDoubt(i, onTheWire));
    if (doubt) {
      const mayResend = !this.o.openingStopped() && !this.o.killSwitch?.isPaused();
      const r = this.o.settled(await this.o.inDoubt.resolve(doubt, mayResend));
      if (r.status === 'confirmed') await this.o.sell.process();
      if (r.status !== 'in_doubt') return clock.now();
      this.noteWait(`order ${doubt.key} in doubt${r.parked ? ' (parked for review)' : ''}: ${r.why}`);
      return r.until;
    }
    this.pausedWait = this.o.killSwitch?.isPaused() === true;
    if (this.pausedWait) {
      this.noteWait('kill switch is on');
      return now + cadence.accountMs;
    }
    const account = await this.readAccountIfStale(now);
    const pools = await this.readPoolsIfStale(now);
    if (!account || !pools) return now + cadence.idleMs;
    // Decide as of when the reads came back: the account's next_purchase_at is the service's time
    // of the read, so judged against the time before a slow read (a busy machine, a sped-up clock)
    // it lies in the future, and a bot whose reads go stale meanwhile never opens at all.
    const at = clock.now();

    const totals = this.o.budget().totals(at);
    metrics.budgetSpent(totals.spentTodayCents, totals.spentTotalCents);
    const { catalog } = this.o;
    const rows: ScoreRow[] = scoreView({
      read: pools,
      strategy,
      balanceCents: account.balanceCents,
      metrics,
      log,
      distributionOf: (pool) => catalog.distribution(pool),
    });
    const decide = (at: number, spent: SpendTotals): OpenDecision =>
      decideOpen(
        {
          balanceCents: account.balanceCents,
          ...spent,
          killSwitch: false,
          packsLeftToday: account.packsLeftToday,
          nextPurchaseAt: account.nextPurchaseAt,
          resetsAt: account.resetsAt,
          lastPurchaseAt: this.lastPurchaseAt,
        },
        rows,
        strategy,
        at,
      );
    const decision = decide(at, totals);
    this.lastScores = { rows, decision, at };
    // Exported even while a kill switch also stops opening (budgetBlock names only the first guard).
    const stopLoss = stopLossHit(totals, strategy);
    metrics.paused('stop_loss', stopLoss);
    this.noteStopLoss(stopLoss, totals.markedPnlCents, at);
    const nextPoolRead = pools.readAt + cadence.poolsMs + (this.o.staggerMs ?? 0);
    if (decision.action === 'wait') {
      this.noteWait(decision.reason);
      // A limit that lifts at a known instant: wake exactly then. Otherwise at the next pool read.
      return decision.until ?? Math.min(nextPoolRead, account.readAt + cadence.accountMs);
    }
    if (this.o.openingStopped() || this.o.killSwitch?.isPaused()) return at;
    const row = rows.find(
      (r) =>
        r.category === decision.category &&
        r.pack_type === decision.pack_type &&
        r.risk_level === decision.risk_level,
    );
    const q = decision.quantity;
    // The model's promise for this order (expected vs realized), recorded with its intent.
    const model = row
      ? orderModel(row, pools.pools, strategy, q, (pool) => catalog.distribution(pool))
      : null;
    const outcome = await this.o.spending(async () => {
      // The card buyer may have spent while this loop waited for the lock: the caps are asked again
      // with what is booked and open now, and anything but the same order waits for the next step.
      const inLock = clock.now();
      // A card order that went into doubt while this loop waited is settled first (next step).
      if (ledger.unresolvedIntents(this.o.account).some((i) => isInDoubt(i, onTheWire))) return undefined;
      if (!sameOrder(decide(inLock, this.o.budget().totals(inLock)), decision)) return undefined;
      return this.o.executor.open({
        body: {
          pack_type: decision.pack_type,
          category: decision.category as never,
          quantity: q,
          risk_level: decision.risk_level as never,
        },
        unitPriceCents: decision.priceCents,
        ...(row
          ? { expectedValueCents: toCents(row.ev * q), stdevCents: toCents(row.stdev * Math.sqrt(q)) }
          : {}),
        ...(model ? { model } : {}),
      });
    });
    if (!outcome) return clock.now();
    return this.afterOutcome(outcome);
  }

  private noteStopLoss(on: boolean, pnlCents: number, now: number): void {
    if (on && !this.stopLossOn)
      this.o.notifier?.notify(
        notices.stopLoss(this.o.account, pnlCents, toCents(this.o.strategy.budget.stop_loss_usd), now),
      );
    this.stopLossOn = on;
  }

  private noteWait(reason: string): void {
    if (reason !== this.lastWait) this.o.log.info({ reason }, 'not opening');
    this.lastWait = reason;
  }

  /** Acts on the purchase's answer; an order in doubt is settled by the next step (openOnce). */
  private async afterOutcome(outcome: PurchaseOutcome): Promise<number | 'stop'> {
    const { clock } = this.o;
    if (outcome.status === 'confirmed') {
      this.o.onConfirmed(outcome.confirmed, outcome.response.idempotent_replay === true);
      // The pulls decided at booking are sold back first; the gauges and the other passes after.
      await this.o.sell.sellBooked(outcome.confirmed.pulls);
      this.o.updateDoubtGauge();
      await this.o.sell.process();
      if (outcome.confirmed.recorded)
        await this.o.inDoubt.learnUserId(
          outcome.intent,
          outcome.confirmed.order.totalChargedCents,
          outcome.confirmed.order.packType,
        );
      return this.account ? Math.max(this.account.nextPurchaseAt, clock.now()) : clock.now();
    }
    this.o.updateDoubtGauge();
    if (outcome.status === 'in_doubt') return clock.now();
    return this.onFailed(outcome.error);
  }

  private onFailed(error: PartnerApiError): number | 'stop' {
    const { clock, cadence, log } = this.o;
    const now = clock.now();
    if (error instanceof RateLimitedError) {
      if (this.account) this.account.nextPurchaseAt = now + error.retryAfterSeconds * 1000;
      return now + error.retryAfterSeconds * 1000;
    }
    if (error instanceof DailyLimitReachedError) {
      const resets = Date.parse(error.resetsAt);
      const at = Number.isFinite(resets) ? resets : nextUtcMidnight(now);
      if (this.account) {
        this.account.packsLeftToday = 0;
        this.account.resetsAt = at;
      }
      return at;
    }
    if (error instanceof OrderRefundedError) {
      // Nothing was charged; the pool changed under us. Re-read and re-score before trying again.
      this.pools = undefined;
      this.poolsNotBefore = now;
      if (this.account) this.account.readAt = Number.NEGATIVE_INFINITY;
      return now;
    }
    if (error.kind === 'fatal') {
      log.fatal({ code: error.code }, `opening stopped: ${error.message}`);
      return 'stop';
    }
    // Rejected (bad request, insufficient balance, pack gone): re-read everything, then look again.
    this.pools = undefined;
    this.poolsNotBefore = now;
    this.account = undefined;
    return now + cadence.idleMs;
  }

  async readAccountIfStale(now: number): Promise<AccountView | undefined> {
    const a = this.account;
    const stale =
      !a || now >= a.readAt + this.o.cadence.accountMs || (a.packsLeftToday <= 0 && now >= a.resetsAt);
    if (!stale) return a;
    try {
      const sentAt = this.o.clock.now();
      const view = accountView(await this.o.api.getAccount(), this.o.clock.now());
      this.account = view;
      this.o.onBalanceRead?.(view.balanceCents, sentAt);
      this.o.metrics.balance(view.balanceCents);
      this.o.metrics.packsLeftToday(view.packsLeftToday);
      return view;
    } catch (e) {
      return this.readFailed(e, 'account');
    }
  }

  private async readPoolsIfStale(now: number) {
    const held = this.pools;
    if (held && now < held.readAt + this.o.cadence.poolsMs) return held;
    // Due: a read made once these were (another account's will do), else a new one.
    const notBefore = Math.max(this.poolsNotBefore, held ? held.readAt + this.o.cadence.poolsMs : -Infinity);
    try {
      this.pools = await readPools(this.o.catalog, this.o.api, this.o.strategy, notBefore);
      return this.pools;
    } catch (e) {
      return this.readFailed(e, 'pools');
    }
  }

  private readFailed(e: unknown, what: string): undefined {
    if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
    this.o.log.warn({ code: e.code, what }, `read failed, will retry: ${e.message}`);
    return undefined;
  }
}

/** Whether `again` opens exactly what `first` decided (same pack, risk, quantity and price). */
function sameOrder(again: OpenDecision, first: OpenDecision & { action: 'open' }): boolean {
  return (
    again.action === 'open' &&
    again.category === first.category &&
    again.pack_type === first.pack_type &&
    again.risk_level === first.risk_level &&
    again.quantity === first.quantity &&
    again.priceCents === first.priceCents
  );
}
