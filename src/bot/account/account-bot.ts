/**
 * One account's bot, the loop supervisor: it builds the account's parts, recovers from the ledger
 * at start-up, runs the pack opener (pack-opener.ts), the card buyer while the strategy buys cards
 * (card-buyer.ts), the sell sweep and the reconciler (listing watch), each a loop sleeping only on
 * the injected clock, stops them gracefully, and books every confirmed order (budget, metrics,
 * the account's balance and limits) and hands its pulls to the sell side at once.
 */
import { isPartnerApiError } from '../../api/errors.js';
import { DEFAULT_RISK_LEVEL } from '../../api/rules.js';
import type { KillSwitch } from '../../obs/kill-switch.js';
import type { ConfirmedOrder } from '../../store/ledger.js';
import { doubtFigures, isInDoubt, type OnTheWire } from '../../store/order-facts.js';
import type { OpenDecision } from '../../strategy/decide-open.js';
import type { ScoreRow } from '../../strategy/score.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import { CardBuyer } from '../buying/card-buyer.js';
import { SharedCatalog } from '../buying/catalog.js';
import type { AccountView } from '../buying/market-view.js';
import { ModelWatch } from '../buying/model-watch.js';
import { PackOpener } from '../buying/pack-opener.js';
import type { AccountContext } from '../common/context.js';
import { Mutex, sleepFor } from '../common/sleep.js';
import type { EvidenceOptions } from '../doubt/evidence.js';
import { InDoubtResolver, type Resolution } from '../doubt/in-doubt.js';
import { showBooks } from '../selling/cash-books.js';
import { ListingMarks } from '../selling/listing-input.js';
import { type ReconcileOptions, reconcile } from '../selling/reconciler.js';
import { SellSide } from '../selling/sell-side.js';
import { BudgetTracker } from '../spending/budget-state.js';
import { type CrashPoint, PurchaseExecutor } from '../spending/executor.js';

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
  /** The runner's catalog, shared by its accounts (default: this account's own). */
  catalog?: SharedCatalog;
  /** This account's place in the runner's start-up spread (ms; default 0). */
  staggerMs?: number;
}

/** How soon after its last pass a nudged reconciliation runs (a sale seen within a minute). */
const QUICK_RECONCILE_MS = 30_000;

export class AccountBot {
  readonly sell: SellSide;
  readonly executor: PurchaseExecutor;
  readonly inDoubt: InDoubtResolver;
  readonly cards: CardBuyer;
  readonly packs: PackOpener;
  /** Expected vs realized: metrics and the drift alarm. */
  readonly model: ModelWatch;
  /** The listed cards' values at the listing watch's last vault read (the read API's listings). */
  readonly listingMarks = new ListingMarks();
  /** Pack and card purchases one at a time: each checks the caps with the other's spend booked. */
  private readonly spending = new Mutex();
  private readonly openAbort = new AbortController();
  private readonly allAbort = new AbortController();
  private openingStopped = false;
  private loops: Promise<void>[] = [];
  private cardLoop: Promise<void> | undefined;
  private readonly reconcileOptions: ReconcileOptions;
  /** Wakes the reconcile loop's sleep (`nudgeReconcile`), and whether a pass is wanted soon. */
  private reconcileWake: AbortController | undefined;
  private reconcileWanted = false;

  private budget: BudgetTracker;
  private readonly catalog: SharedCatalog;
  /** This account's requests on the wire: unsettled, not in doubt (order-facts.ts `isInDoubt`). */
  readonly onTheWire: OnTheWire = (key) => this.executor.isOnTheWire(key);

  constructor(private readonly o: AccountBotOptions) {
    this.budget = new BudgetTracker(o.ledger, o.account, o.strategy);
    const b = o.strategy.budget;
    o.metrics.budgetLimits({
      minBalanceUsd: b.min_balance_usd,
      dailyCapUsd: b.max_daily_spend_usd,
      totalCapUsd: b.max_total_spend_usd,
    });
    o.metrics.minEvRatio(o.strategy.open.min_ev_ratio);
    const spent = this.budget.totals(o.clock.now());
    o.metrics.budgetSpent(spent.spentTodayCents, spent.spentTotalCents);
    showBooks(o);
    const onCash = (cents: number) => this.budget.cash(cents);
    const onUnexplainedRise = () => this.nudgeReconcile();
    this.sell = new SellSide({ ...o, batchSize: o.batchSize, onCash, onUnexplainedRise });
    this.reconcileOptions = {
      ...o,
      onUnexplainedRise,
      delistFailures: this.sell.delistFailures,
      listingMarks: this.listingMarks,
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
      decideBooked: (confirmed) => this.sell.decideBooked(confirmed.pulls),
    });
    this.catalog = o.catalog ?? new SharedCatalog(() => o.clock.now());
    this.catalog.want(o.account, o.strategy);
    this.cards = new CardBuyer({
      ...o,
      catalog: this.catalog,
      executor: this.executor,
      budget: () => this.budget,
      shopMs: o.shopMs ?? 15 * 60_000,
      idleMs: o.cadence.idleMs,
      pausedMs: o.cadence.accountMs,
      spending: (fn) => this.spending.run(fn),
      readAccount: (now) => this.packs.readAccountIfStale(now),
      // A pack order merely on the wire is not in doubt (the lock below orders the two anyway).
      inDoubt: () => o.ledger.unresolvedIntents(o.account).some((i) => isInDoubt(i, this.onTheWire)),
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
    this.packs = new PackOpener({
      ...o,
      catalog: this.catalog,
      executor: this.executor,
      inDoubt: this.inDoubt,
      sell: this.sell,
      budget: () => this.budget,
      spending: (fn) => this.spending.run(fn),
      openingStopped: () => this.openingStopped,
      settled: (r) => this.settled(r),
      onConfirmed: (confirmed, replay) => this.onConfirmed(confirmed, replay),
      updateDoubtGauge: () => this.updateDoubtGauge(),
      onBalanceRead: (cents, sentAt) => this.onBalanceRead(cents, sentAt),
    });
  }

  /** The account's name (config). */
  get name(): string {
    return this.o.account;
  }

  get strategy(): Strategy {
    return this.o.strategy;
  }

  /** Why the open loop last waited (for logs and tests). */
  get lastWait(): string {
    return this.packs.lastWait;
  }

  /** Pack orders confirmed since start. */
  get purchases(): number {
    return this.packs.purchases;
  }

  /** The latest scoring and what the open loop decided from it (read API). */
  get lastScores(): { rows: ScoreRow[]; decision: OpenDecision; at: number } | undefined {
    return this.packs.lastScores;
  }

  /** One step of the open loop (PackOpener.openOnce); returns when to look again, or 'stop'. */
  openOnce(): Promise<number | 'stop'> {
    return this.packs.openOnce();
  }

  /** What the read API shows of this account: a read-only snapshot. */
  snapshot() {
    return {
      account: this.packs.account as Readonly<AccountView> | undefined,
      lastWait: this.lastWait,
      scores: this.lastScores,
      totals: this.budget.totals(this.o.clock.now()),
      strategy: this.o.strategy,
    };
  }

  /** A reloaded (validated) strategy: every loop's next decision uses it; pools are read again. */
  setStrategy(strategy: Strategy): void {
    (this.o as { strategy: Strategy }).strategy = strategy;
    this.catalog.want(this.o.account, strategy);
    this.sell.setStrategy(strategy);
    this.cards.setStrategy(strategy);
    this.packs.setStrategy(strategy);
    this.o.metrics.minEvRatio(strategy.open.min_ev_ratio);
    this.reconcileOptions.strategy = strategy;
    this.budget = new BudgetTracker(this.o.ledger, this.o.account, strategy);
    if (this.loops.length > 0) this.startCardLoop();
  }

  /** Recovery, then the loops. Resolves once recovery is done (the loops keep running). */
  async start(): Promise<void> {
    await this.recover();
    this.loops = [
      this.guard('open', () =>
        this.packs.loop(AbortSignal.any([this.openAbort.signal, this.allAbort.signal])),
      ),
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
      await reconcile(this.reconcileOptions, (fn) => this.sell.exclusive(fn));
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

  // ------------------------------------------------------------------ booking

  /** Books what a settlement of an order in doubt found; returns it for the caller's next step. */
  private settled(r: Resolution): Resolution {
    if (r.status === 'confirmed') this.onConfirmed(r.confirmed, r.replay);
    const account = this.packs.account;
    if (r.status === 'failed' && account) account.readAt = Number.NEGATIVE_INFINITY;
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
    const packs = this.packs;
    this.sell.markReceived(pulls);
    if (!card) packs.lastPurchaseAt = now;
    if (recorded) {
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
          order.riskLevel ?? DEFAULT_RISK_LEVEL,
          order.quantity,
        );
        packs.purchases++;
      }
    }
    if (card) this.noteCardReview(confirmed);
    metrics.balance(order.remainingBalanceCents);
    const account = packs.account;
    if (account && !replay && !order.checkoutId.startsWith('settled:')) {
      // The answer is fresher than any read: balance and limits follow from it. The server's
      // purchase time is before `now`, so `now + min interval` is never early.
      account.balanceCents = order.remainingBalanceCents;
      if (!card) {
        account.packsLeftToday = Math.max(0, account.packsLeftToday - order.quantity);
        account.nextPurchaseAt = now + account.minSecondsBetween * 1000;
        metrics.packsLeftToday(account.packsLeftToday);
      }
    } else if (account) account.readAt = Number.NEGATIVE_INFINITY;
  }

  /** A bought card held for review is exported and logged (its reason is its hold decision). */
  private noteCardReview({ order, pulls, recorded }: ConfirmedOrder): void {
    const { metrics, ledger, account } = this.o;
    metrics.cardsNeedingReview(ledger.cardsHeldForReview(account));
    if (!order.needsReview || !recorded) return;
    const why = ledger.decisionsFor(pulls[0]?.pullId ?? '')[0]?.reason ?? 'needs_review';
    this.o.log.error(
      { intent: order.intentKey, checkout: order.checkoutId, card: order.cardId, why },
      'card purchase held for review: the card is held; never re-bought under a new key',
    );
  }

  /** The orders in doubt, parked, and the worst case of the unsettled ones (order-facts.ts). */
  private updateDoubtGauge(): void {
    // Only the unsettled orders: the budget's totals would also walk every held pull.
    const { ledger, metrics, account } = this.o;
    const f = doubtFigures(ledger.unresolvedIntents(account), this.onTheWire);
    metrics.ordersInDoubt(f.inDoubt, f.parked, f.worstCaseCents);
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

  /**
   * The balance rose and the books cannot say why: most often a listing sold since the last vault
   * read. The reconciliation runs within `QUICK_RECONCILE_MS` of its last pass instead of at its
   * cadence (vault reads are not rate-limited; at most two passes a minute stays a polite sync).
   */
  private nudgeReconcile(): void {
    this.reconcileWanted = true;
    this.reconcileWake?.abort();
  }

  /** An account read of the open loop: a balance above the books' asks for a vault read now. */
  private onBalanceRead(balanceCents: number, sentAt: number): void {
    const expected = this.o.ledger.expectedBalance(this.o.account);
    if (
      expected !== undefined &&
      balanceCents > expected &&
      this.o.ledger.balanceQuietSince(this.o.account, sentAt)
    )
      this.nudgeReconcile();
  }

  /** Listing watch at its cadence (sooner when nudged); full reconciliation at the vault cadence. */
  private async reconcileLoop(): Promise<void> {
    const { clock, cadence } = this.o;
    const signal = this.allAbort.signal;
    const every = Math.min(cadence.listingsMs, cadence.vaultMs);
    let lastPass = clock.now();
    for (;;) {
      const wake = new AbortController();
      this.reconcileWake = wake;
      const due = lastPass + (this.reconcileWanted ? Math.min(every, QUICK_RECONCILE_MS) : every);
      const slept = await sleepFor(clock, due - clock.now(), AbortSignal.any([signal, wake.signal]));
      if (signal.aborted) return;
      // Nudged: the pass is due sooner.
      if (!slept) continue;
      this.reconcileWanted = false;
      try {
        await reconcile(this.reconcileOptions, (fn) => this.sell.exclusive(fn));
        await this.sell.process();
      } catch (e) {
        if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
        this.o.log.warn({ code: e.code }, `reconciliation failed, will retry: ${e.message}`);
      }
      this.refreshModel();
      lastPass = clock.now();
    }
  }
}
