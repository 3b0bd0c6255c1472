/**
 * The decision engine's imperative half: every pull is decided the moment it is recorded
 * (`decidePull`), sell-backs go out at once in batches of up to `batchSize`, listings right after.
 * A pack order's pulls are decided inside the transaction that books them (`decideBooked`, the
 * executor's hook: one commit), and their sell-back leaves right after it (`sellBooked`), ahead
 * of any other pass: the path from a pull to its sell-back is that commit and that request.
 * Everything works from the ledger's pull statuses, so a restart picks up exactly where the
 * process stopped: `open` pulls are decided, `sell_pending` sold, `list_pending` listed.
 *
 * A pull decided for the 0.9 window but paid less (or decided only after its window) is counted in
 * `sellback_window_missed_total`; the fallback is `decidePull` again at the current time, which
 * picks the late rate or a listing per the strategy.
 */
import { isPartnerApiError } from '../../api/errors.js';
import type { PartnerApi } from '../../api/partner-api.js';
import type { SellBackItem } from '../../api/schemas.js';
import { toCents, toUsd } from '../../core/money.js';
import type { NewDecision, PullRow } from '../../store/ledger.js';
import { decideBoughtCard, decidePull, type PullDecision } from '../../strategy/decide-pull.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { AccountContext } from '../common/context.js';
import { FailureOrder } from '../common/failure-order.js';
import * as notices from '../common/notices.js';
import { Mutex } from '../common/sleep.js';
import { readVault } from '../common/vault.js';
import { type CashBooksOptions, readBalance } from './cash-books.js';
import { pullFromRow } from './pull-view.js';
import { vaultCategories } from './reconciler.js';
import { learnSellIds, sellIdOf } from './sell-ids.js';

export interface SellSideOptions extends CashBooksOptions {
  batchSize: number;
  /** Told about every newly counted payout (the budget's running totals). */
  onCash?: (cents: number) => void;
  /** A monotonic stopwatch (ms) for decision latency; performance.now by default. */
  stopwatch?: () => number;
}

export class SellSide {
  /**
   * Pull id → stopwatch reading when it arrived (for decision latency): kept only until the pull is
   * sold back or decided otherwise, so listed and held pulls do not pile up here for the life of
   * the process (nor time a sell-back days later, after a delisting, as a decision).
   */
  private readonly received = new Map<string, number>();
  /** Cards whose listing request got no clear answer: delist before listing again. */
  private readonly listingInDoubt = new FailureOrder();
  /**
   * Active listings whose delisting failed (here, by the listing watch or by the reconciliation):
   * the next pass delists them after the others.
   */
  readonly delistFailures = new FailureOrder();
  /** Pulls whose sell-back request this process has on the wire (never sent twice at once). */
  private readonly selling = new Set<string>();
  private readonly stopwatch: () => number;
  private readonly mutex = new Mutex();

  constructor(private readonly o: SellSideOptions) {
    this.stopwatch = o.stopwatch ?? (() => performance.now());
  }

  /** A reloaded strategy decides from now on. */
  setStrategy(strategy: AccountContext['strategy']): void {
    (this.o as { strategy: AccountContext['strategy'] }).strategy = strategy;
  }

  /**
   * Notes when pulls arrived; call right after the order is confirmed. A pull already decided at
   * booking for anything but a sell-back (listed, held) is not timed; sealed packs are held from
   * the start: never sold back, never timed.
   */
  markReceived(pulls: readonly PullRow[]): void {
    const t = this.stopwatch();
    for (const p of pulls)
      if (p.kind === 'card' && (p.status === 'open' || p.status === 'sell_pending'))
        this.received.set(p.pullId, t);
  }

  /**
   * Decides a newly booked order's undecided card pulls. Called by the executor INSIDE the
   * transaction that books the order, so the pulls and their decisions are one commit (one fsync
   * on the path to the sell-back, and no window where a crash leaves them undecided). Each row's
   * `status` is moved to what its decision recorded, so the order's rows stay true to the ledger.
   */
  decideBooked(pulls: readonly PullRow[]): void {
    const now = this.o.clock.now();
    const rows = pulls.filter((row) => row.kind === 'card' && row.status === 'open');
    const decisions = rows.map((row) => this.decisionOf(row, now));
    // One write for the order's pulls (its own savepoint in the booking's transaction, not one each).
    this.o.ledger.recordDecisions(decisions);
    rows.forEach((row, i) => {
      const action = decisions[i]!.action;
      (row as { status: PullRow['status'] }).status =
        action === 'sell_back' ? 'sell_pending' : action === 'list' ? 'list_pending' : 'held';
    });
  }

  /**
   * Sends the sell-back of a just-booked order's pulls decided for it (`decideBooked`) at once,
   * before any other pass, without waiting for the pass lock (the listing watcher never touches
   * a pull that is not listed). A pull another pass is selling, or has sold, is left alone.
   */
  async sellBooked(pulls: readonly PullRow[]): Promise<void> {
    const { ledger } = this.o;
    const batch = pulls.filter(
      (p) =>
        p.status === 'sell_pending' &&
        !this.selling.has(p.pullId) &&
        ledger.getPull(p.pullId)?.status === 'sell_pending',
    );
    for (let i = 0; i < batch.length; i += this.o.batchSize)
      await this.sellBatch(batch.slice(i, i + this.o.batchSize));
  }

  /** Pulls still waiting for their sell-back to be timed (bounded by what awaits a sale). */
  get timedPulls(): number {
    return this.received.size;
  }

  /** Decide, sell, list: the whole pass for everything the ledger says is waiting. One at a time. */
  process(): Promise<void> {
    return this.mutex.run(async () => {
      await this.delistUnwanted();
      this.decideOpenPulls();
      await this.flushSells();
      await this.flushListings();
    });
  }

  /** Runs `fn` exclusive with `process` (the listing watcher changes the same pulls). */
  exclusive<T>(fn: () => Promise<T>): Promise<T> {
    return this.mutex.run(fn);
  }

  /**
   * Active listings whose pull was decided otherwise (an operator's hold or sell-back through the
   * control API, recorded before any request): delisted before anything else, so a crash between
   * that decision and the delisting repeats only the delisting.
   */
  async delistUnwanted(): Promise<number> {
    const { ledger, account, log } = this.o;
    let n = 0;
    // One query, not a pull read per active listing: this runs before every sell pass.
    const unwanted = this.delistFailures.sort(ledger.unwantedListings(account), (l) => l.cardId);
    for (const listing of unwanted) {
      const failed = await this.delistFailures.attempt(listing.cardId, () =>
        this.delistQuietly(listing.cardId),
      );
      if (failed) {
        log.warn({ card: listing.cardId, code: failed.code }, `delist failed, will retry: ${failed.message}`);
        // The rest at the next pass, not each after its own retries (see `flushListings`).
        break;
      }
      ledger.recordListingUpdate(listing.listingId, { delisted: true });
      log.info({ card: listing.cardId, next: listing.pullStatus }, 'delisted on request');
      n++;
    }
    if (n > 0) this.o.metrics.listingsActive(ledger.activeListings(account).length);
    return n;
  }

  /** Decides every undecided card pull (sealed packs are held from the start). */
  decideOpenPulls(): void {
    const now = this.o.clock.now();
    for (const row of this.o.ledger.undecidedPulls(this.o.account)) this.decideRow(row, now);
  }

  /** Decides one undecided card pull and records the decision. */
  private decideRow(row: PullRow, now: number): void {
    this.o.ledger.recordDecision(this.decisionOf(row, now));
  }

  /** What the strategy decides for an undecided card pull, as the ledger records it. */
  private decisionOf(row: PullRow, now: number): NewDecision & { action: PullDecision['action'] } {
    const { strategy, account, log, metrics } = this.o;
    const decision = decisionFor(row, strategy, now);
    if (row.origin === 'pack' && this.missedWindow(row, now)) {
      metrics.sellbackWindowMissed();
      log.warn({ pull: row.pullId }, 'sell-back window missed before a decision; using the fallback rule');
      this.o.notifier?.notify(notices.windowMissed(account, row, now));
    }
    if (decision.action !== 'sell_back') this.received.delete(row.pullId);
    if (decision.action === 'sell_back')
      return {
        pullId: row.pullId,
        action: 'sell_back',
        reason: decision.reason,
        priceCents: decision.payoutCents,
      };
    if (decision.action === 'list')
      return {
        pullId: row.pullId,
        action: 'list',
        reason: `${row.origin === 'purchase' ? 'bought card, ' : ''}fill ${decision.fill.toFixed(2)}`,
        priceCents: decision.priceCents,
      };
    return { pullId: row.pullId, action: 'hold', reason: decision.reason };
  }

  /**
   * Missed: the window is over, and deciding inside it would have sold back (a pull the strategy
   * lists, or one first decided otherwise, had no window to miss).
   */
  private missedWindow(row: PullRow, now: number): boolean {
    if (row.buybackValidUntil === null || now < row.buybackValidUntil) return false;
    const first = this.o.ledger.decisionsFor(row.pullId)[0];
    if (first !== undefined) return first.action === 'sell_back';
    const inWindow = decidePull(pullFromRow(row), this.o.strategy, row.buybackValidUntil - 1);
    return inWindow.action === 'sell_back';
  }

  /** Sells every `sell_pending` pull, soonest window first, in batches. */
  async flushSells(): Promise<void> {
    const pending = this.o.ledger
      .pullsAwaitingSale(this.o.account)
      .filter((p) => !this.selling.has(p.pullId));
    for (let i = 0; i < pending.length; i += this.o.batchSize)
      await this.sellBatch(pending.slice(i, i + this.o.batchSize));
  }

  /** One sell-back request and what its answer books; a retryable failure leaves the pulls pending. */
  private async sellBatch(batch: readonly PullRow[]): Promise<void> {
    const { ledger, account, api, log, metrics } = this.o;
    const items: SellBackItem[] = batch.map((p) => ({ card_id: p.cardId, pull_id: sellIdOf(p) }));
    for (const p of batch) this.selling.add(p.pullId);
    let response: Awaited<ReturnType<PartnerApi['sellBack']>>;
    const asked = this.o.clock.now();
    try {
      const sending = api.sellBack(items);
      const sentAt = this.stopwatch();
      for (const p of batch) {
        const t = this.received.get(p.pullId);
        if (t !== undefined) metrics.decisionLatency(Math.max(0, sentAt - t));
        this.received.delete(p.pullId);
      }
      response = await sending;
    } catch (e) {
      if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
      // Safe to repeat (a pull pays once): the pulls stay sell_pending for the next sweep.
      log.warn({ code: e.code, items: items.length }, `sell-back failed, will retry: ${e.message}`);
      return;
    } finally {
      for (const p of batch) this.selling.delete(p.pullId);
    }
    const expected = new Map(batch.map((p) => [p.pullId, this.expectedPayout(p)]));
    // Results under a bought card's service id are booked to its pull (sell-ids.ts).
    const ours = new Map(batch.map((p) => [sellIdOf(p), p.pullId]));
    const results = response.results.map((r) => ({ ...r, pull_id: ours.get(r.pull_id) ?? r.pull_id }));
    const outcome = ledger.recordSellBack(results, { account });
    metrics.sellbackPayout(outcome.newlyPaidCents);
    this.o.onCash?.(outcome.newlyPaidCents);
    // The balance it leaves, against the books (a sale's credit since the last reading shows here).
    const balance = toCents(response.remaining_balance);
    readBalance(this.o, balance, 'sell-back', asked, this.o.clock.now());
    metrics.balance(balance);
    let unnamed = false;
    for (const r of results) {
      const want = expected.get(r.pull_id);
      if (r.status === 'failed') {
        log.warn(
          { pull: r.pull_id, error: r.error },
          'sell-back item failed; the pull will be decided again',
        );
        const pull = batch.find((p) => p.pullId === r.pull_id);
        if (pull?.origin === 'purchase' && !pull.sellPullId) unnamed = true;
        continue;
      }
      if (r.status === 'sold' && want !== undefined && toCents(r.payout_amount ?? 0) < want) {
        metrics.sellbackWindowMissed();
        log.warn(
          { pull: r.pull_id, paid: r.payout_amount, expected: toUsd(want) },
          'sold after the 0.9 window',
        );
        const pull = batch.find((p) => p.pullId === r.pull_id);
        this.o.notifier?.notify(
          notices.windowMissed(
            account,
            { pullId: r.pull_id, name: pull?.name ?? r.pull_id },
            this.o.clock.now(),
            {
              expectedCents: want,
              paidCents: toCents(r.payout_amount ?? 0),
            },
          ),
        );
      }
    }
    log.info({ items: items.length, paid: response.total_paid }, 'sold back');
    // A bought card refused under its transaction id: the vault says what the service calls it
    // (vault reads are not rate-limited), and the next pass sells it under that.
    if (unnamed) learnSellIds(this.o, await readVault(api, vaultCategories(this.o)));
  }

  private expectedPayout(p: PullRow): number | undefined {
    const decisions = this.o.ledger.decisionsFor(p.pullId);
    const last = decisions[decisions.length - 1];
    return last?.action === 'sell_back' ? (last.priceCents ?? undefined) : undefined;
  }

  /**
   * Lists every `list_pending` pull at the price its decision chose. A failure that is not a
   * refusal ends the pass's listing: the next pass (a sweep, within 15 s) lists the rest. Cards
   * that failed go last, the latest failure last of all, so a card the service keeps failing
   * holds the others back for one pass at most.
   */
  async flushListings(): Promise<void> {
    const { ledger, account, log } = this.o;
    let refused = 0;
    const waiting = ledger.pullsAwaitingListing(account);
    if (waiting.length === 0) return;
    this.listingInDoubt.sort(waiting, (p) => p.cardId);
    for (const pull of waiting) {
      const decision = ledger.decisionsFor(pull.pullId).at(-1);
      const priceCents = decision?.priceCents;
      if (decision?.action !== 'list' || priceCents == null) {
        ledger.recordDecision({ pullId: pull.pullId, action: 'sell_back', reason: 'no listing price' });
        continue;
      }
      try {
        if (this.listingInDoubt.has(pull.cardId)) await this.delistQuietly(pull.cardId);
        const listing = await this.createListing(pull.cardId, priceCents);
        this.listingInDoubt.cleared(pull.cardId);
        ledger.recordListing({
          listingId: listing.listing_id,
          cardId: pull.cardId,
          pullId: pull.pullId,
          priceCents: toCents(listing.price),
        });
        log.info({ pull: pull.pullId, price: listing.price }, 'listed');
      } catch (e) {
        if (!isPartnerApiError(e) || e.kind === 'fatal') throw e;
        if (e.kind === 'rejected' || e.kind === 'invalid-data') {
          // The marketplace refused: fall back to selling back (the late rate if the window passed).
          log.warn({ pull: pull.pullId, code: e.code }, `listing refused, selling back: ${e.message}`);
          refused++;
          ledger.recordDecision({
            pullId: pull.pullId,
            action: 'sell_back',
            reason: `listing refused: ${e.code}`,
          });
        } else {
          this.listingInDoubt.failed(pull.cardId);
          log.warn({ pull: pull.pullId, code: e.code }, `listing outcome unknown, will retry: ${e.message}`);
          // The service is failing (the client already retried): the rest wait for the next pass,
          // not for their own retries one after the other while the sell side stays locked.
          break;
        }
      }
    }
    this.o.metrics.listingsActive(ledger.activeListings(account).length);
    // Listings refused above became sell-backs: send them now rather than at the next sweep.
    if (refused > 0) await this.flushSells();
  }

  /**
   * Lists a card. A refusal may mean our own earlier request (its answer lost in a crash) already
   * listed it: delist and try once more before the caller falls back to selling back.
   */
  private async createListing(cardId: string, priceCents: number) {
    const body = { card_id: cardId, price: toUsd(priceCents) };
    try {
      return await this.o.api.createListing(body);
    } catch (e) {
      if (!isPartnerApiError(e) || e.kind !== 'rejected') throw e;
      await this.delistQuietly(cardId);
      return await this.o.api.createListing(body);
    }
  }

  /** Delists a card that may or may not be listed; "not listed" is fine. */
  async delistQuietly(cardId: string): Promise<void> {
    try {
      await this.o.api.deleteListing({ card_id: cardId });
    } catch (e) {
      if (!isPartnerApiError(e) || e.kind !== 'rejected') throw e;
    }
  }

  /** Earliest instant a pending sell needs attention (its window end), for the sweep's sleep. */
  nextDeadline(): number | undefined {
    const p = this.o.ledger.pullsAwaitingSale(this.o.account)[0];
    return p?.buybackValidUntil ?? undefined;
  }
}

/**
 * A pull by the pull policy; a bought card by the strategy's `cards.exit` (its purchase was scored
 * by that rule). A bought card the service flagged for review is held for an operator.
 */
function decisionFor(row: PullRow, strategy: Strategy, now: number): PullDecision {
  if (row.origin !== 'purchase') return decidePull(pullFromRow(row), strategy, now);
  return decideBoughtCard(
    {
      valueCents: row.valueCents,
      pricePaidCents: row.pricePaidCents ?? row.valueCents,
      lockEndsAt: row.buybackValidUntil ?? now,
    },
    strategy,
    now,
  );
}
