/**
 * The card buyer: one account's shop loop when the strategy buys cards (`cards.enabled`). A full,
 * paced sync of each category's shop stock every `shopMs` (the spec allows a few an hour), every
 * card scored by `scoreShopCard`, then the cards to buy (watchlist first, then best edge) bought
 * through the executor's intent protocol: key and body in the ledger before the request leaves,
 * `max_price` the least of the scorer's price (never above break-even) and what every cap leaves.
 *
 * Refusals: PRICE_CHANGED rescored at the new price (bought if it still passes), OWN_LISTING and
 * CARD_NO_LONGER_AVAILABLE skipped until the next sync, DAILY_CARD_LIMIT_REACHED stops buying until
 * the next UTC midnight, RATE_LIMITED waits. An order in doubt stops buying until the open loop has
 * settled it (in-doubt.ts); a `needs_review` answer is booked and its card held for an operator.
 */
import {
  CardNoLongerAvailableError,
  DailyCardLimitReachedError,
  isPartnerApiError,
  NotFoundError,
  OwnListingError,
  type PartnerApiError,
  PriceChangedError,
  RateLimitedError,
} from '../../api/errors.js';
import { iterShopCards } from '../../api/paginate.js';
import type { Category, ShopCard } from '../../api/schemas.js';
import { DAY_MS, nextUtcMidnight, utcDay } from '../../core/clock.js';
import { compareText } from '../../core/compare-text.js';
import { toCents, toUsd } from '../../core/money.js';
import type { KillSwitch } from '../../obs/kill-switch.js';
import { SHOP_DECISIONS, type ShopDecision } from '../../obs/metrics.js';
import type { ConfirmedOrder } from '../../store/ledger.js';
import { type CardRow, scoreShopCard } from '../../strategy/card-score.js';
import { type CardBuyDecision, decideCardBuy } from '../../strategy/decide-card.js';
import type { AccountContext } from '../common/context.js';
import { sleepFor, sleepUntilChange } from '../common/sleep.js';
import type { BudgetTracker } from '../spending/budget-state.js';
import type { PurchaseExecutor, PurchaseOutcome } from '../spending/executor.js';
import type { SharedCatalog } from './catalog.js';
import type { AccountView } from './market-view.js';

export interface CardBuyerOptions extends AccountContext {
  executor: PurchaseExecutor;
  /** The account's budget totals (packs and cards together). */
  budget: () => BudgetTracker;
  killSwitch?: KillSwitch;
  /** Full shop sync period (config `polling.shop_seconds`). */
  shopMs: number;
  /** Pause between two shop pages (polite paging). */
  pageGapMs?: number;
  idleMs: number;
  /** Paused, the longest sleep before a look again (a resume by the kill switch wakes it first). */
  pausedMs: number;
  /** Purchases of packs and cards run one at a time (the caps are checked against both). */
  spending: <T>(fn: () => Promise<T>) => Promise<T>;
  /** The account as last read (balance), read again when stale. */
  readAccount: (now: number) => Promise<AccountView | undefined>;
  /** An order of the account is unresolved: no new one until the open loop settles it. */
  inDoubt: () => boolean;
  /** Books a confirmed card order (budget, metrics, balance) and hands the card to the sell side. */
  onBought: (confirmed: ConfirmedOrder, replay: boolean) => Promise<void>;
  /** The shop stock, read once for every account of the runner. */
  catalog: SharedCatalog;
  /** This account's place in the runner's start-up spread (ms): the first pass waits this long. */
  staggerMs?: number;
}

interface Candidate {
  card: ShopCard;
  category: string;
  row: CardRow;
}

const DEFAULT_PAGE_GAP_MS = 500;
/** How often a card refused with PRICE_CHANGED is rescored and tried again at its new price. */
const PRICE_CHANGED_RETRIES = 1;

export class CardBuyer {
  private rows: Candidate[] = [];
  private syncedAt = Number.NEGATIVE_INFINITY;
  /** Cards not to try again until the next sync (bought, refused, gone). */
  private readonly skip = new Set<string>();
  /** DAILY_CARD_LIMIT_REACHED, or our own daily caps: no card before this instant. */
  private stoppedUntil = Number.NEGATIVE_INFINITY;
  private rateLimitedUntil = Number.NEGATIVE_INFINITY;
  /** Why the loop last waited (logs, the read API). */
  lastWait = '';
  bought = 0;
  /** The last pass found buying paused: the loop sleeps until the kill switch changes. */
  private pausedWait = false;

  constructor(private readonly o: CardBuyerOptions) {}

  /** A reloaded strategy buys from the next sync on (rows are scored again). */
  setStrategy(strategy: AccountContext['strategy']): void {
    (this.o as { strategy: AccountContext['strategy'] }).strategy = strategy;
    this.syncedAt = Number.NEGATIVE_INFINITY;
  }

  /** When the shop was last synced and how many cards it scored worth buying (read API). */
  get lastSync(): { at: number; toBuy: number } | undefined {
    if (!Number.isFinite(this.syncedAt)) return undefined;
    return { at: this.syncedAt, toBuy: this.rows.filter((c) => c.row.decision.action === 'buy').length };
  }

  /** The latest sync's rows (read API, tests). */
  get lastRows(): readonly CardRow[] {
    return this.rows.map((c) => c.row);
  }

  /**
   * One pass, then sleep until it says to look again. Paused, it sleeps until the kill switch
   * changes (as the open loop does), looking again at `pausedMs` at the latest (a strategy's own
   * `kill_switch` changes only by a reload), instead of waking every `idleMs`.
   */
  async loop(signal: AbortSignal): Promise<void> {
    const { clock, killSwitch } = this.o;
    const stagger = this.o.staggerMs ?? 0;
    if (stagger > 0 && !(await sleepFor(clock, stagger, signal))) return;
    while (!signal.aborted) {
      const until = await this.once(signal);
      await sleepUntilChange(clock, until, signal, this.pausedWait ? killSwitch : undefined);
    }
  }

  /** One pass: sync when due, buy what passes; returns when to look again. */
  async once(signal: AbortSignal): Promise<number> {
    const { clock, strategy } = this.o;
    const now = clock.now();
    const cards = strategy.cards;
    this.pausedWait = false;
    // An operator may have sold a held needs_review card back since the last pass.
    this.o.metrics.cardsNeedingReview(this.o.ledger.cardsHeldForReview(this.o.account));
    if (!cards.enabled) return this.wait('card buying is off (cards.enabled false)', now + this.o.shopMs);
    if (this.paused()) {
      this.pausedWait = true;
      return this.wait('kill switch is on', now + this.o.pausedMs);
    }
    if (this.o.inDoubt()) return this.wait('an order is in doubt', now + this.o.idleMs);
    if (now < this.stoppedUntil) return this.stoppedUntil;
    if (now < this.rateLimitedUntil) return this.rateLimitedUntil;
    if (now >= this.syncedAt + this.o.shopMs) {
      try {
        await this.sync(signal);
      } catch (e) {
        if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
        this.o.log.warn({ code: e.code }, `shop sync failed, will retry: ${e.message}`);
        return now + this.o.idleMs;
      }
    }
    await this.buyPass(signal);
    return Math.max(this.syncedAt + this.o.shopMs, clock.now() + 1);
  }

  private paused(): boolean {
    return this.o.killSwitch?.isPaused() === true || this.o.strategy.budget.kill_switch;
  }

  private wait(reason: string, until: number): number {
    if (reason !== this.lastWait) this.o.log.info({ reason }, 'not buying cards');
    this.lastWait = reason;
    return until;
  }

  /**
   * Every category's shop, scored at once: the catalog's read made since the last sync was due
   * (another account's will do), else every page read now, paced.
   */
  private async sync(signal: AbortSignal): Promise<void> {
    const { strategy, metrics, log } = this.o;
    const rows: Candidate[] = [];
    const notBefore = this.syncedAt + this.o.shopMs;
    let readAt = Number.POSITIVE_INFINITY;
    for (const category of strategy.cards.categories) {
      const read = await this.o.catalog.shop(category, notBefore, () => this.readShop(category, signal));
      if (!read) return;
      readAt = Math.min(readAt, read.readAt);
      for (const card of read.cards)
        rows.push({ card, category, row: scoreShopCard(card, category, strategy) });
    }
    const count = Object.fromEntries(SHOP_DECISIONS.map((d) => [d, 0])) as Record<ShopDecision, number>;
    for (const { row } of rows) count[row.decision.action === 'buy' ? 'buy' : row.decision.code]++;
    metrics.shopCards(count);
    this.rows = rows;
    this.syncedAt = Number.isFinite(readAt) ? readAt : this.o.clock.now();
    this.skip.clear();
    log.info({ cards: rows.length, to_buy: count.buy }, 'shop synced');
  }

  /** Every page of `category`'s shop, a pause between pages; undefined when stopped meanwhile. */
  private async readShop(category: string, signal: AbortSignal): Promise<ShopCard[] | undefined> {
    const { api, clock } = this.o;
    const gap = this.o.pageGapMs ?? DEFAULT_PAGE_GAP_MS;
    const cards: ShopCard[] = [];
    for await (const card of iterShopCards(api, { category: category as Category, per_page: 1000 })) {
      cards.push(card);
      // Between pages (the iterator fetches the next when this one is used up).
      if (cards.length % 1000 === 0 && !(await sleepFor(clock, gap, signal))) return undefined;
    }
    return cards;
  }

  /** The cards to buy, watchlist entries first (the operator asked for them), then best edge. */
  private candidates(): Candidate[] {
    return this.rows
      .filter((c) => c.row.decision.action === 'buy' && !this.skip.has(c.card.id))
      .sort(
        (a, b) =>
          Number(b.row.watch !== null) - Number(a.row.watch !== null) ||
          b.row.edge_ratio - a.row.edge_ratio ||
          compareText(a.card.id, b.card.id),
      );
  }

  private async buyPass(signal: AbortSignal): Promise<void> {
    for (const c of this.candidates()) {
      if (signal.aborted || this.paused() || this.o.inDoubt()) return;
      const now = this.o.clock.now();
      if (now < this.stoppedUntil || now < this.rateLimitedUntil) return;
      const next = await this.buyOne(c, PRICE_CHANGED_RETRIES);
      if (next === 'stop') return;
    }
  }

  /**
   * The strategy's card decision (strategy/decide-card.ts) for this card now, with the budget's
   * totals (packs and cards together, open orders at their worst case); a stop is noted.
   */
  private decide(
    priceCents: number,
    scorerMaxCents: number,
    account: AccountView,
    now: number,
  ): CardBuyDecision {
    const { ledger, account: name } = this.o;
    const today = ledger.cardsOrderedSince(name, utcDay(now) * DAY_MS);
    const totals = this.o.budget().totals(now);
    const d = decideCardBuy(
      {
        balanceCents: account.balanceCents,
        ...totals,
        killSwitch: false,
        cardsToday: today.count,
        cardOutlayTodayCents: today.chargedCents,
      },
      priceCents,
      scorerMaxCents,
      this.o.strategy,
      now,
    );
    if (d.action === 'stop') {
      if (d.until !== undefined) this.stoppedUntil = d.until;
      this.wait(d.reason, d.until ?? now + this.o.idleMs);
    }
    return d;
  }

  private async buyOne(c: Candidate, retries: number): Promise<'next' | 'stop'> {
    const { clock, log, metrics, executor } = this.o;
    if (c.row.decision.action !== 'buy') return 'next';
    const now = clock.now();
    const account = await this.o.readAccount(now);
    if (!account) return 'stop';
    const priceCents = toCents(c.card.price);
    const decisionMax = c.row.decision.maxPriceCents;
    // The room is measured inside the spending lock: a pack order booked or opened while this loop
    // waited for it counts, so the two loops together never pass a cap.
    const asked: { decision?: CardBuyDecision } = {};
    const outcome: PurchaseOutcome | undefined = await this.o.spending(async () => {
      const d = this.decide(priceCents, decisionMax, account, clock.now());
      asked.decision = d;
      if (d.action !== 'buy') return undefined;
      return executor.buyCard({
        body: { card_id: c.card.id, max_price: toUsd(d.maxPriceCents) },
        maxPriceCents: d.maxPriceCents,
        expectedValueCents: toCents(c.row.realizable),
      });
    });
    const decision = asked.decision;
    if (decision?.action === 'stop') return 'stop';
    if (!outcome || decision?.action !== 'buy') {
      // This one does not fit what is left today; a cheaper one may.
      this.skip.add(c.card.id);
      return 'next';
    }
    const room = decision.maxPriceCents;
    this.skip.add(c.card.id);
    if (outcome.status === 'confirmed') {
      this.bought++;
      await this.o.onBought(outcome.confirmed, outcome.response.idempotent_replay === true);
      log.info(
        { card: c.card.id, category: c.category, price: c.card.price, max_price: toUsd(room) },
        'card bought',
      );
      return 'next';
    }
    if (outcome.status === 'in_doubt') return 'stop';
    metrics.cardPurchaseRefused(outcome.error.code);
    return this.onRefused(c, outcome.error, retries);
  }

  private async onRefused(c: Candidate, e: PartnerApiError, retries: number): Promise<'next' | 'stop'> {
    const { clock, log, strategy } = this.o;
    const now = clock.now();
    if (e instanceof PriceChangedError) {
      // Rescored at the service's current price: bought only if it still passes (a new order).
      const card = { ...c.card, price: e.price };
      const row = scoreShopCard(card, c.category, strategy);
      log.info(
        { card: c.card.id, was: c.card.price, now: e.price, decision: row.decision.action },
        'card price changed; rescored',
      );
      const again = { card, category: c.category, row };
      const i = this.rows.findIndex((r) => r.card.id === c.card.id);
      if (i >= 0) this.rows[i] = again;
      if (row.decision.action === 'buy' && retries > 0) return this.buyOne(again, retries - 1);
      return 'next';
    }
    if (
      e instanceof OwnListingError ||
      e instanceof CardNoLongerAvailableError ||
      e instanceof NotFoundError
    ) {
      log.info({ card: c.card.id, code: e.code }, `card skipped: ${e.message}`);
      return 'next';
    }
    if (e instanceof DailyCardLimitReachedError) {
      this.stoppedUntil = nextUtcMidnight(now);
      this.wait(`the service's daily card cap is reached: ${e.message}`, this.stoppedUntil);
      return 'stop';
    }
    if (e instanceof RateLimitedError) {
      this.rateLimitedUntil = now + e.retryAfterSeconds * 1000;
      this.skip.delete(c.card.id);
      return 'stop';
    }
    if (e.kind === 'fatal') throw e;
    // Insufficient balance or another refusal: read the account again before the next pass.
    log.warn({ card: c.card.id, code: e.code }, `card purchase refused: ${e.message}`);
    return 'stop';
  }
}
