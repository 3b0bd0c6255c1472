/**
 * One account's bot: the scheduler (open loop), the sell sweep, the listing watcher and the
 * reconciler, each a loop sleeping only on the injected clock. The open loop wakes exactly at the
 * next allowed purchase while the strategy wants to open, acts on what the purchase answers
 * (remaining balance, 429 bodies) and hands every pull to the sell side at once.
 */
import {
  DailyLimitReachedError,
  isPartnerApiError,
  OrderRefundedError,
  type PartnerApiError,
  RateLimitedError,
} from '../api/errors.js';
import type { PackPool } from '../api/schemas.js';
import { nextUtcMidnight } from '../core/clock.js';
import { toCents } from '../core/money.js';
import type { KillSwitch } from '../obs/kill-switch.js';
import type { ConfirmedOrder } from '../store/ledger.js';
import { budgetBlock } from '../strategy/budget.js';
import { decideOpen, type OpenDecision } from '../strategy/decide-open.js';
import type { ScoreRow } from '../strategy/score.js';
import type { Strategy } from '../strategy/strategy-schema.js';
import { BudgetTracker } from './budget-state.js';
import { CardBuyer } from './card-buyer.js';
import type { AccountContext } from './context.js';
import type { EvidenceOptions } from './evidence.js';
import { type CrashPoint, PurchaseExecutor, type PurchaseOutcome } from './executor.js';
import { InDoubtResolver, type Resolution } from './in-doubt.js';
import { type AccountView, accountView, readPools, scoreView } from './market-view.js';
import { ModelWatch, orderModel } from './model-watch.js';
import * as notices from './notices.js';
import { type ReconcileOptions, reconcile } from './reconciler.js';
import { SellSide } from './sell-side.js';
import { Mutex, sleepFor, sleepUntil } from './sleep.js';

export interface Cadence {
  accountMs: number;
  poolsMs: number;
  vaultMs: number;
  listingsMs: number;
  /** Sweep for sells that failed and must be retried (short: the 0.9 window is 5 minutes). */
  sweepMs: number;
  /** How often a paused or blocked open loop looks again. */
  idleMs: number;
}

export interface AccountBotOptions extends AccountContext {
  cadence: Cadence;
  batchSize: number;
  killSwitch?: KillSwitch;
  /** A loop hit something it must not continue past (bad key, a bug): the runner stops. */
  onFatal: (error: unknown) => void;
  crashAt?: (point: CrashPoint, key: string) => void;
  stopwatch?: () => number;
  /** How orders in doubt are judged (settle time, clock skew, re-send horizon). */
  evidence?: Partial<EvidenceOptions>;
  /** Take over vault cards from no order of ours (config `orders.adopt_unknown_cards`). */
  adoptUnknownCards?: boolean;
  /** The key has `read:pulls`: the purchase report may be read as evidence (default true). */
  readsPurchaseReport?: boolean;
  /** Full shop sync period for card buying (config `polling.shop_seconds`; default 15 min). */
  shopMs?: number;
}

export class AccountBot {
  readonly sell: SellSide;
  readonly executor: PurchaseExecutor;
  readonly inDoubt: InDoubtResolver;
  readonly cards: CardBuyer;
  /** Expected vs realized: metrics and the drift alarm. */
  readonly model: ModelWatch;
  /** Pack and card purchases one at a time: each checks the caps with the other's spend booked. */
  private readonly spending = new Mutex();
  private account: AccountView | undefined;
  private pools:
    | {
        pools: PackPool[];
        maxQuantity: Map<string, number>;
        listPriceCents: Map<string, number>;
        readAt: number;
      }
    | undefined;
  private lastPurchaseAt: number | null = null;
  private readonly openAbort = new AbortController();
  private readonly allAbort = new AbortController();
  private openingStopped = false;
  private loops: Promise<void>[] = [];
  private cardLoop: Promise<void> | undefined;
  private readonly reconcileOptions: ReconcileOptions;
  /** Why the open loop last waited (for logs and tests). */
  lastWait = '';
  purchases = 0;
  /** The latest scoring and what the open loop decided from it (read API). */
  lastScores: { rows: ScoreRow[]; decision: OpenDecision; at: number } | undefined;

  private budget: BudgetTracker;
  /** The stop-loss guard held at the last look (a notification goes out when it starts to). */
  private stopLossOn = false;

  constructor(private readonly o: AccountBotOptions) {
    this.budget = new BudgetTracker(o.ledger, o.account, o.strategy, o.clock.now());
    const b = o.strategy.budget;
    o.metrics.budgetLimits({
      minBalanceUsd: b.min_balance_usd,
      dailyCapUsd: b.max_daily_spend_usd,
      totalCapUsd: b.max_total_spend_usd,
    });
    o.metrics.minEvRatio(o.strategy.open.min_ev_ratio);
    const spent = this.budget.totals(o.clock.now());
    o.metrics.budgetSpent(spent.spentTodayCents, spent.spentTotalCents);
    const onCash = (cents: number) => this.budget.cash(cents);
    this.sell = new SellSide({ ...o, batchSize: o.batchSize, onCash });
    this.reconcileOptions = {
      ...o,
      onCash,
      adoptUnknownCards: o.adoptUnknownCards === true,
      ...(o.evidence ? { evidence: o.evidence } : {}),
    };
    this.executor = new PurchaseExecutor({
      account: o.account,
      api: o.api,
      ledger: o.ledger,
      log: o.log,
      ...(o.crashAt ? { crashAt: o.crashAt } : {}),
      ...(o.notifier ? { notifier: o.notifier } : {}),
    });
    this.cards = new CardBuyer({
      ...o,
      executor: this.executor,
      budget: () => this.budget,
      shopMs: o.shopMs ?? 15 * 60_000,
      idleMs: o.cadence.idleMs,
      spending: (fn) => this.spending.run(fn),
      readAccount: (now) => this.readAccountIfStale(now),
      // A pack order merely on the wire is not in doubt (the lock below orders the two anyway).
      inDoubt: () =>
        o.ledger
          .unresolvedIntents(o.account)
          .some((i) => i.state !== 'pending' && !this.executor.isOnTheWire(i.key)),
      onBought: async (confirmed, replay) => {
        this.onConfirmed(confirmed, replay);
        this.updateDoubtGauge();
        await this.sell.process();
      },
    });
    this.model = new ModelWatch({ ...o, currentStrategy: () => this.o.strategy });
    this.inDoubt = new InDoubtResolver({
      ...o,
      executor: this.executor,
      recheckMs: Math.min(o.cadence.vaultMs, 5 * o.cadence.accountMs),
      readsReport: o.readsPurchaseReport !== false,
      ...(o.evidence ? { evidence: o.evidence } : {}),
    });
  }

  /** The account's name (config). */
  get name(): string {
    return this.o.account;
  }

  get strategy(): Strategy {
    return this.o.strategy;
  }

  /** What the read API shows of this account: a read-only snapshot. */
  snapshot() {
    return {
      account: this.account as Readonly<AccountView> | undefined,
      lastWait: this.lastWait,
      scores: this.lastScores,
      totals: this.budget.totals(this.o.clock.now()),
      strategy: this.o.strategy,
    };
  }

  /** A reloaded (validated) strategy: every loop's next decision uses it; pools are read again. */
  setStrategy(strategy: Strategy): void {
    (this.o as { strategy: Strategy }).strategy = strategy;
    this.sell.setStrategy(strategy);
    this.cards.setStrategy(strategy);
    this.o.metrics.minEvRatio(strategy.open.min_ev_ratio);
    this.reconcileOptions.strategy = strategy;
    this.budget = new BudgetTracker(this.o.ledger, this.o.account, strategy, this.o.clock.now());
    this.pools = undefined;
    if (this.loops.length > 0) this.startCardLoop();
  }

  /** Recovery, then the loops. Resolves once recovery is done (the loops keep running). */
  async start(): Promise<void> {
    await this.recover();
    this.loops = [
      this.guard('open', () => this.openLoop()),
      this.guard('sweep', () => this.sweepLoop()),
      this.guard('reconcile', () => this.reconcileLoop()),
    ];
    this.startCardLoop();
  }

  /**
   * Start-up: drop intents that never left, settle the orders in doubt where the evidence already
   * can (the open loop keeps at the rest before any new order), then decide and sell whatever the
   * ledger still holds, then reconcile with the service.
   */
  async recover(): Promise<void> {
    for (const intent of this.executor.recoverInterrupted()) {
      try {
        this.settled(await this.inDoubt.resolve(intent));
      } catch (e) {
        if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
        this.o.log.warn({ code: e.code }, `order in doubt not settled at start-up: ${e.message}`);
      }
    }
    this.updateDoubtGauge();
    try {
      await this.sell.process();
      await this.sell.exclusive(() => reconcile(this.reconcileOptions));
    } catch (e) {
      // The loops retry both; only a fatal error (bad key, a bug) stops the start.
      if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
      this.o.log.warn({ code: e.code }, `start-up sell pass or reconciliation failed: ${e.message}`);
    }
    this.refreshModel(true);
  }

  /**
   * Expected vs realized from the ledger: metrics and the drift alarm, at start (`force`) and at
   * most every MODEL_REFRESH_MS after (never stops a loop).
   */
  refreshModel(force = false): void {
    try {
      if (force) this.model.refresh();
      else this.model.refreshIfDue();
    } catch (e) {
      this.o.log.warn({ err: e }, 'expected vs realized not updated');
    }
  }

  /** Stops opening; waits for an order in flight. The sell side keeps going until `stop`. */
  async stopOpening(): Promise<void> {
    this.openingStopped = true;
    this.openAbort.abort();
    await Promise.all([this.loops[0], this.cardLoop]);
  }

  /**
   * The card buyer's loop, run only while the strategy buys cards (a pack-only bot has the three
   * loops it always had); a reloaded strategy that enables cards starts it.
   */
  private startCardLoop(): void {
    if (this.cardLoop || !this.o.strategy.cards.enabled || this.openingStopped) return;
    this.cardLoop = this.guard('cards', () =>
      this.cards.loop(AbortSignal.any([this.openAbort.signal, this.allAbort.signal])),
    );
    this.loops.push(this.cardLoop);
  }

  /** Graceful stop: no new orders, a last sell pass for pulls still in their window, loops ended. */
  async stop(): Promise<void> {
    await this.stopOpening();
    this.allAbort.abort();
    await Promise.all(this.loops);
    await this.sell.process();
  }

  private async guard(name: string, loop: () => Promise<void>): Promise<void> {
    try {
      await loop();
    } catch (e) {
      this.o.log.fatal({ loop: name, err: e }, 'bot loop stopped on an unrecoverable error');
      this.o.onFatal(e);
    }
  }

  // ------------------------------------------------------------------ open loop

  private async openLoop(): Promise<void> {
    const { clock } = this.o;
    const signal = AbortSignal.any([this.openAbort.signal, this.allAbort.signal]);
    while (!signal.aborted) {
      const until = await this.openOnce();
      if (until === 'stop') return;
      const wake = Math.max(clock.now(), until);
      if (!(await sleepUntil(clock, wake, signal))) return;
    }
  }

  /** One scheduling step; returns when to look again, or 'stop'. */
  async openOnce(): Promise<number | 'stop'> {
    const { clock, cadence, strategy, ledger, log, metrics } = this.o;
    const now = clock.now();
    if (this.openingStopped) return 'stop';
    // An order whose outcome is unknown is settled (by evidence, or its own key) before any new one.
    const doubt = ledger.unresolvedIntents(this.o.account).find((i) => i.state !== 'pending');
    if (doubt) {
      const mayResend = !this.openingStopped && !this.o.killSwitch?.isPaused();
      const r = this.settled(await this.inDoubt.resolve(doubt, mayResend));
      if (r.status === 'confirmed') await this.sell.process();
      if (r.status !== 'in_doubt') return clock.now();
      this.noteWait(`order ${doubt.key} in doubt${r.parked ? ' (parked for review)' : ''}: ${r.why}`);
      return r.until;
    }
    if (this.o.killSwitch?.isPaused()) {
      this.noteWait('kill switch is on');
      return now + cadence.idleMs;
    }
    const account = await this.readAccountIfStale(now);
    const pools = await this.readPoolsIfStale(now);
    if (!account || !pools) return now + cadence.idleMs;

    const totals = this.budget.totals(now);
    metrics.budgetSpent(totals.spentTodayCents, totals.spentTotalCents);
    const rows: ScoreRow[] = scoreView(
      pools.pools,
      pools.maxQuantity,
      strategy,
      account.balanceCents,
      metrics,
      log,
      pools.listPriceCents,
    );
    const decision = decideOpen(
      {
        balanceCents: account.balanceCents,
        ...totals,
        killSwitch: false,
        packsLeftToday: account.packsLeftToday,
        nextPurchaseAt: account.nextPurchaseAt,
        resetsAt: account.resetsAt,
        lastPurchaseAt: this.lastPurchaseAt,
      },
      rows,
      strategy,
      now,
    );
    this.lastScores = { rows, decision, at: now };
    const stopLoss = budgetBlock(
      { balanceCents: account.balanceCents, ...totals, killSwitch: false },
      strategy,
    );
    metrics.paused('stop_loss', stopLoss?.guard === 'stop_loss');
    this.noteStopLoss(stopLoss?.guard === 'stop_loss', totals.realizedPnlCents, now);
    const nextPoolRead = pools.readAt + cadence.poolsMs;
    if (decision.action === 'wait') {
      this.noteWait(decision.reason);
      // A limit that lifts at a known instant: wake exactly then. Otherwise at the next pool read.
      return decision.until ?? Math.min(nextPoolRead, account.readAt + cadence.accountMs);
    }
    if (this.openingStopped || this.o.killSwitch?.isPaused()) return now;
    const row = rows.find(
      (r) =>
        r.category === decision.category &&
        r.pack_type === decision.pack_type &&
        r.risk_level === decision.risk_level,
    );
    const q = decision.quantity;
    const model = row ? orderModel(row, pools.pools, strategy, q) : null;
    const outcome = await this.spending.run(() =>
      this.executor.open({
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
      }),
    );
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
    this.updateDoubtGauge();
    if (outcome.status === 'in_doubt') return clock.now();
    if (outcome.status === 'confirmed') {
      this.onConfirmed(outcome.confirmed, outcome.response.idempotent_replay === true);
      await this.sell.process();
      if (outcome.confirmed.recorded)
        await this.inDoubt.learnUserId(
          outcome.intent,
          outcome.confirmed.order.totalChargedCents,
          outcome.confirmed.order.packType,
        );
      return this.account ? Math.max(this.account.nextPurchaseAt, clock.now()) : clock.now();
    }
    return this.onFailed(outcome.error);
  }

  /** Books what a settlement of an order in doubt found; returns it for the caller's next step. */
  private settled(r: Resolution): Resolution {
    if (r.status === 'confirmed') this.onConfirmed(r.confirmed, r.replay);
    if (r.status === 'failed' && this.account) this.account.readAt = Number.NEGATIVE_INFINITY;
    this.updateDoubtGauge();
    return r;
  }

  /**
   * Books what a confirmed order changes here: the budget and metrics count it (a pack order's
   * packs, a card order's card), and the balance — and for packs the limits — follow from the answer.
   */
  private onConfirmed(confirmed: ConfirmedOrder, replay: boolean): void {
    const { metrics, clock } = this.o;
    const { order, pulls, recorded } = confirmed;
    const card = order.operation === 'card';
    const now = clock.now();
    this.sell.markReceived(pulls);
    if (!card) this.lastPurchaseAt = now;
    if (recorded) {
      this.budget.order(order.totalChargedCents, order.createdAt);
      metrics.spend(order.totalChargedCents);
      if (card) {
        metrics.cardBought(order.category, order.totalChargedCents);
        // The open loop refreshes these when it scores; a card-only bot may not for hours.
        const totals = this.budget.totals(now);
        metrics.budgetSpent(totals.spentTodayCents, totals.spentTotalCents);
      } else {
        metrics.packsOpened(
          order.category,
          order.packType ?? 'other',
          order.riskLevel ?? 'standard',
          order.quantity,
        );
        this.purchases++;
      }
    }
    if (card) this.noteCardReview(confirmed);
    metrics.balance(order.remainingBalanceCents);
    if (this.account && !replay && !order.checkoutId.startsWith('settled:')) {
      // The answer is fresher than any read: balance and limits follow from it. The server's
      // purchase time is before `now`, so `now + min interval` is never early.
      this.account.balanceCents = order.remainingBalanceCents;
      if (!card) {
        this.account.packsLeftToday = Math.max(0, this.account.packsLeftToday - order.quantity);
        this.account.nextPurchaseAt = now + this.account.minSecondsBetween * 1000;
        metrics.packsLeftToday(this.account.packsLeftToday);
      }
    } else if (this.account) this.account.readAt = Number.NEGATIVE_INFINITY;
  }

  /** A bought card held for review is exported and logged (its reason is its hold decision). */
  private noteCardReview({ order, pulls, recorded }: ConfirmedOrder): void {
    const { metrics, ledger, account } = this.o;
    metrics.cardsNeedingReview(ledger.cardsHeldForReview(account));
    if (!order.needsReview || !recorded) return;
    const why = ledger.decisionsFor(pulls[0]?.pullId ?? '')[0]?.reason ?? 'needs_review';
    this.o.log.error(
      { checkout: order.checkoutId, card: order.cardId, why },
      'card purchase held for review: the card is held; never re-bought under a new key',
    );
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
      if (this.account) this.account.readAt = Number.NEGATIVE_INFINITY;
      return now;
    }
    if (error.kind === 'fatal') {
      log.fatal({ code: error.code }, `opening stopped: ${error.message}`);
      return 'stop';
    }
    // Rejected (bad request, insufficient balance, pack gone): re-read everything, then look again.
    this.pools = undefined;
    this.account = undefined;
    return now + cadence.idleMs;
  }

  private async readAccountIfStale(now: number): Promise<AccountView | undefined> {
    const a = this.account;
    const stale =
      !a || now >= a.readAt + this.o.cadence.accountMs || (a.packsLeftToday <= 0 && now >= a.resetsAt);
    if (!stale) return a;
    try {
      const view = accountView(await this.o.api.getAccount(), this.o.clock.now());
      this.account = view;
      this.o.metrics.balance(view.balanceCents);
      this.o.metrics.packsLeftToday(view.packsLeftToday);
      return view;
    } catch (e) {
      return this.readFailed(e, 'account');
    }
  }

  private async readPoolsIfStale(now: number) {
    if (this.pools && now < this.pools.readAt + this.o.cadence.poolsMs) return this.pools;
    try {
      const read = await readPools(this.o.api, this.o.strategy);
      this.pools = { ...read, readAt: this.o.clock.now() };
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

  private updateDoubtGauge(): void {
    this.o.metrics.ordersInDoubt(this.o.ledger.unresolvedCount());
  }

  // ------------------------------------------------------------------ sell sweep and reconcile

  /** Retries sells and listings that did not go through, soonest window first. */
  private async sweepLoop(): Promise<void> {
    const { clock, cadence } = this.o;
    const signal = this.allAbort.signal;
    while (await sleepFor(clock, cadence.sweepMs, signal)) {
      // The kill switch file is noticed within a sweep even while the open loop waits for hours
      // (a limit, the day's budget): the paused gauge and the `paused` notification follow it.
      this.o.killSwitch?.status();
      try {
        await this.sell.process();
      } catch (e) {
        if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
        this.o.log.warn({ code: e.code }, `sell sweep failed, will retry: ${e.message}`);
      }
    }
  }

  /** Listing watch at its cadence; full reconciliation at the vault cadence. */
  private async reconcileLoop(): Promise<void> {
    const { clock, cadence } = this.o;
    const signal = this.allAbort.signal;
    const every = Math.min(cadence.listingsMs, cadence.vaultMs);
    while (await sleepFor(clock, every, signal)) {
      try {
        await this.sell.exclusive(() => reconcile(this.reconcileOptions));
        await this.sell.process();
      } catch (e) {
        if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
        this.o.log.warn({ code: e.code }, `reconciliation failed, will retry: ${e.message}`);
      }
      this.refreshModel();
    }
  }
}
