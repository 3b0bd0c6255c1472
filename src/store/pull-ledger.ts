/**
 * What the account holds, in the ledger: pulls (bought cards too) and the decisions that move them
 * (open → sell_pending / list_pending / held), sell-backs (a payout counted exactly once), and
 * listings (created, repriced, delisted, filled). Each change that moves a pull is one transaction.
 */
import type { SellBackResult } from '../api/schemas.js';
import { type Cents, toCents } from '../core/money.js';
import { LedgerError, LedgerPart } from './ledger-part.js';
import { type Raw, toPull, toSellBack } from './statements.js';
import {
  type DecisionAction,
  type DecisionRow,
  type ListingRow,
  OWNED_STATUSES,
  type PullRow,
  type PullStatus,
  type SellBackRow,
} from './types.js';

export interface SellBackOutcome {
  rows: SellBackRow[];
  /** Payout newly counted by this call: add this, and only this, to the payout metric. */
  newlyPaidCents: Cents;
}

/** A decision to record: what is done with a pull, why, and at what price. */
export interface NewDecision {
  pullId: string;
  action: DecisionAction;
  reason: string;
  priceCents?: Cents;
}

/** Where a decision moves a pull the account still owns (reprice/delist: the listing calls do). */
const NEXT_STATUS: Partial<Record<DecisionAction, PullStatus>> = {
  sell_back: 'sell_pending',
  list: 'list_pending',
  hold: 'held',
};

export class Holdings extends LedgerPart {
  // ---------------------------------------------------------------- pulls and decisions

  getPull(pullId: string): PullRow | undefined {
    const r = this.stmts.getPull.get(pullId) as Raw | undefined;
    return r ? toPull(r) : undefined;
  }

  pullsOfOrder(checkoutId: string): PullRow[] {
    return (this.stmts.pullsOfOrder.all(checkoutId) as Raw[]).map(toPull);
  }

  /** Card pulls with no decision yet (e.g. after a crash right after confirming): decide these. */
  undecidedPulls(account?: string): PullRow[] {
    return this.byStatus('open', account).filter((p) => p.kind === 'card');
  }

  /** Pulls decided for sell-back and not yet sold, soonest window first. */
  pullsAwaitingSale(account?: string): PullRow[] {
    return this.byStatus('sell_pending', account);
  }

  /** Pulls decided for listing whose listing is not recorded yet. */
  pullsAwaitingListing(account?: string): PullRow[] {
    return this.byStatus('list_pending', account);
  }

  private byStatus(status: PullStatus, account?: string): PullRow[] {
    const rows =
      account === undefined
        ? this.stmts.pullsByStatus.all(status)
        : this.stmts.pullsByStatusOf.all(account, status);
    return (rows as Raw[]).map(toPull);
  }

  /** Everything still ours: open, pending a sale or listing, listed, or held (sealed packs too). */
  holdings(account?: string): PullRow[] {
    const rows = account === undefined ? this.stmts.owned.all() : this.stmts.ownedOf.all(account);
    return (rows as Raw[]).map(toPull);
  }

  /**
   * The cards `account` still owns (its holdings without the sealed packs, which are held for good
   * and never in the vault): what the reconciliation compares with the vault.
   */
  cardHoldings(account: string): PullRow[] {
    return (this.stmts.ownedCardsOf.all(account) as Raw[]).map(toPull);
  }

  /**
   * What `account` still owns by kind, status and value, with how many pulls of each: what marking
   * its P&L reads (from the index alone, one row per distinct value).
   */
  ownedValues(
    account: string,
  ): [kind: PullRow['kind'], status: PullStatus, valueCents: Cents, count: number][] {
    return this.stmts.ownedValuesOf.all(account) as [PullRow['kind'], PullStatus, Cents, number][];
  }

  /** Whether the ledger has a pull of this id (any status). */
  hasPull(pullId: string): boolean {
    return this.stmts.hasPull.get(pullId) !== undefined;
  }

  /**
   * Records a decision and moves the pull accordingly: sell_back → sell_pending, list → list_pending,
   * hold → held. reprice/delist are recorded against a listed pull; the listing calls move it.
   */
  recordDecision(d: NewDecision, at?: number): DecisionRow {
    return this.recordDecisions([d], at)[0]!;
  }

  /**
   * Several decisions as one write (one savepoint inside a caller's transaction, as when an order's
   * pulls are decided in its booking): all are recorded, or none.
   */
  recordDecisions(ds: readonly NewDecision[], at?: number): DecisionRow[] {
    const now = this.now(at);
    return this.tx(() =>
      ds.map((d): DecisionRow => {
        const status = this.stmts.pullStatus.get(d.pullId) as PullStatus | undefined;
        if (status === undefined) throw new LedgerError(`unknown pull ${d.pullId}`);
        const info = this.stmts.insertDecision.run({
          pullId: d.pullId,
          action: d.action,
          reason: d.reason,
          priceCents: d.priceCents ?? null,
          now,
        });
        const to = NEXT_STATUS[d.action];
        if (to && OWNED_STATUSES.includes(status))
          this.stmts.setPullStatus.run({ pullId: d.pullId, status: to, now });
        return {
          id: Number(info.lastInsertRowid),
          pullId: d.pullId,
          action: d.action,
          reason: d.reason,
          priceCents: d.priceCents ?? null,
          decidedAt: now,
        };
      }),
    );
  }

  decisionsFor(pullId: string): DecisionRow[] {
    return this.stmts.decisionsOf.all(pullId) as DecisionRow[];
  }

  /** The reconciler found the card gone from the vault without a sale we know of. */
  markPullGone(pullId: string, status: 'shipped' | 'gone', at?: number): void {
    if (!this.getPull(pullId)) throw new LedgerError(`unknown pull ${pullId}`);
    this.stmts.setPullStatus.run({ pullId, status, now: this.now(at) });
  }

  // ---------------------------------------------------------------- sell-backs

  /**
   * Records the results of one sell-back request. A pull's payout is counted exactly once: the first
   * `sold` or `already_sold` result counts (the latter covers a sale whose answer was lost), later
   * ones are kept for the record with `counted = false`. A `failed` item returns its pull to `open`
   * so it is decided again. `account` is used only for pulls the ledger does not know.
   */
  recordSellBack(results: readonly SellBackResult[], options: { account?: string; at?: number } = {}) {
    const now = this.now(options.at);
    return this.tx((): SellBackOutcome => {
      const rows: SellBackRow[] = [];
      let newlyPaidCents = 0;
      for (const r of results) {
        const pull = this.getPull(r.pull_id);
        const ok = r.status !== 'failed';
        const counted = ok && !this.stmts.countedSale.get(r.pull_id);
        const payoutCents = ok ? toCents(r.payout_amount ?? 0) : 0;
        const info = this.stmts.insertSellBack.run({
          pullId: r.pull_id,
          cardId: r.card_id,
          account: pull?.account ?? options.account ?? 'unknown',
          status: r.status,
          payoutCents,
          payoutRate: r.payout_rate ?? null,
          transactionId: r.transaction_id ?? null,
          error: r.error ?? null,
          counted: counted ? 1 : 0,
          now,
        });
        if (counted) newlyPaidCents += payoutCents;
        if (pull && ok && pull.status !== 'sold')
          this.stmts.setPullStatus.run({ pullId: pull.pullId, status: 'sold', now });
        if (pull && !ok && pull.status === 'sell_pending')
          this.stmts.setPullStatus.run({ pullId: pull.pullId, status: 'open', now });
        rows.push(toSellBack(this.stmts.getSellBack.get(info.lastInsertRowid) as Raw));
      }
      return { rows, newlyPaidCents };
    });
  }

  /** The counted sale of a pull, if it was sold back. */
  saleOf(pullId: string): SellBackRow | undefined {
    const r = this.stmts.countedSale.get(pullId) as Raw | undefined;
    return r ? toSellBack(r) : undefined;
  }

  // ---------------------------------------------------------------- listings

  /** A listing the service created; the pull (found by id or by card) becomes `listed`. */
  recordListing(
    l: { listingId: string; cardId: string; priceCents: Cents; pullId?: string; account?: string },
    at?: number,
  ): ListingRow {
    const now = this.now(at);
    return this.tx(() => {
      const pull = l.pullId ? this.getPull(l.pullId) : this.ownedPullByCard(l.cardId);
      const account = pull?.account ?? l.account;
      if (!account) throw new LedgerError(`listing ${l.listingId}: unknown card ${l.cardId} and no account`);
      this.stmts.insertListing.run({
        listingId: l.listingId,
        cardId: l.cardId,
        pullId: pull?.pullId ?? null,
        account,
        priceCents: l.priceCents,
        now,
      });
      this.stmts.insertListingEvent.run(l.listingId, 'created', l.priceCents, now);
      if (pull) this.stmts.setPullStatus.run({ pullId: pull.pullId, status: 'listed', now });
      return this.getListing(l.listingId)!;
    });
  }

  /**
   * A change to an active listing: a new price (kept under the same listing id) or a delisting
   * (the card is back in the vault and its pull `open`, to be decided again).
   */
  recordListingUpdate(listingId: string, update: { priceCents?: Cents; delisted?: boolean }, at?: number) {
    const now = this.now(at);
    return this.tx((): ListingRow => {
      const listing = this.requireActiveListing(listingId);
      if (update.priceCents !== undefined) {
        this.stmts.repriceListing.run({ listingId, priceCents: update.priceCents, now });
        this.stmts.insertListingEvent.run(listingId, 'repriced', update.priceCents, now);
      }
      if (update.delisted) {
        this.stmts.delistListing.run({ listingId, now });
        this.stmts.insertListingEvent.run(listingId, 'delisted', null, now);
        const pull = listing.pullId ? this.getPull(listing.pullId) : undefined;
        if (pull?.status === 'listed')
          this.stmts.setPullStatus.run({ pullId: pull.pullId, status: 'open', now });
      }
      return this.getListing(listingId)!;
    });
  }

  /**
   * The listing sold: its pull is `sold`. Proceeds are what the account was credited (cents), or
   * null while the sale waits for a balance reading to show its credit (books.ts attributes it).
   */
  recordListingFill(listingId: string, proceedsCents: Cents | null, at?: number): ListingRow {
    const now = this.now(at);
    return this.tx(() => {
      const listing = this.requireActiveListing(listingId);
      this.stmts.fillListing.run({ listingId, proceedsCents, now });
      this.stmts.insertListingEvent.run(listingId, 'filled', proceedsCents, now);
      if (listing.pullId) this.stmts.setPullStatus.run({ pullId: listing.pullId, status: 'sold', now });
      return this.getListing(listingId)!;
    });
  }

  getListing(listingId: string): ListingRow | undefined {
    return this.stmts.getListing.get(listingId) as ListingRow | undefined;
  }

  activeListings(account?: string): ListingRow[] {
    const rows =
      account === undefined ? this.stmts.activeListings.all() : this.stmts.activeListingsOf.all(account);
    return rows as ListingRow[];
  }

  /** Active listings of `account` whose pull is now held or to be sold back, with that status. */
  unwantedListings(account: string): (ListingRow & { pullStatus: 'held' | 'sell_pending' })[] {
    return this.stmts.unwantedListings.all(account) as (ListingRow & {
      pullStatus: 'held' | 'sell_pending';
    })[];
  }

  activeListingForCard(cardId: string): ListingRow | undefined {
    return this.stmts.activeListingForCard.get(cardId) as ListingRow | undefined;
  }

  private requireActiveListing(listingId: string): ListingRow {
    const listing = this.getListing(listingId);
    if (!listing) throw new LedgerError(`unknown listing ${listingId}`);
    if (listing.state !== 'active') throw new LedgerError(`listing ${listingId} is ${listing.state}`);
    return listing;
  }

  /** The pull of ours that holds card `cardId` now (the latest), if any. */
  ownedPullByCard(cardId: string): PullRow | undefined {
    const r = this.stmts.ownedPullByCard.get(cardId) as Raw | undefined;
    return r ? toPull(r) : undefined;
  }

  /** The pull_id the service's vault shows for a bought card (see PullRow.sellPullId). */
  setSellPullId(pullId: string, sellPullId: string): void {
    this.stmts.setSellPullId.run({ pullId, sellPullId });
  }
}
