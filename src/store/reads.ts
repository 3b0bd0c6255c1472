/**
 * What the ledger answers without changing anything: the counters budgets and status read (orders,
 * charges, packs and cards since a time, holdings' categories, cards held for review), the
 * dashboard and read API (recent pulls, balance history, cash flows, listing histories, intents
 * changed since) and the rows of a P&L report (computed in pnl.ts).
 */
import type { Cents } from '../core/money.js';
import type { Intents } from './intents.js';
import { type LedgerConnection, LedgerPart } from './ledger-part.js';
import { type Raw, toIntent, toOrder, toPull, toSellBack } from './statements.js';
import type { BalanceRow, Intent, ListingRow, OrderRow, PullRow, SellBackRow } from './types.js';

export interface ReportData {
  orders: OrderRow[];
  pulls: PullRow[];
  sellbacks: SellBackRow[];
  listings: ListingRow[];
}

/** A listing as `listingHistories` gives it (times in ms; value null when its pull is unknown). */
export interface ListingHistoryRow {
  listing_id: string;
  state: 'active' | 'delisted' | 'filled';
  created_at: number;
  delisted_at: number | null;
  filled_at: number | null;
  value_cents: number | null;
  prices: { priceCents: number; at: number }[];
}

export class Reads extends LedgerPart {
  constructor(
    c: LedgerConnection,
    private readonly intents: Intents,
  ) {
    super(c);
  }

  // ---------------------------------------------------------------- orders and intents

  /** The newest intents first (for `packbot orders`). */
  recentIntents(limit = 1000): Intent[] {
    return (this.stmts.intentsByCreation.all({ limit }) as Raw[]).map(toIntent);
  }

  /** Orders of `account` booked in [from, to] (ms). */
  ordersBetween(account: string, from: number, to: number): OrderRow[] {
    return (this.stmts.ordersBetween.all(account, from, to) as Raw[]).map(toOrder);
  }

  /**
   * What every order of `account` booked after row `afterRow` charged, in booking order: however
   * it was booked (an answer, evidence, an adopted extra charge), a spend counter misses none.
   */
  chargesAfter(account: string, afterRow: number): { row: number; cents: Cents; at: number }[] {
    return this.stmts.chargesAfter.all(account, afterRow) as { row: number; cents: Cents; at: number }[];
  }

  /** Every sell-back payout of `account` counted so far (the budget's cash back at start-up). */
  payoutsCounted(account: string): Cents {
    return (this.stmts.payoutsCounted.get(account) as { cents: Cents }).cents;
  }

  /** Packs of confirmed orders of `account` booked at or after `since` (ms). */
  packsOrderedSince(account: string, since: number): number {
    return (this.stmts.packsOrderedSince.get(account, since) as { n: number }).n;
  }

  /** Card orders booked since `since` (ms) and what they charged (prices and fees). */
  cardsOrderedSince(account: string, since: number): { count: number; chargedCents: Cents } {
    const r = this.stmts.cardsOrderedSince.get(account, since) as { n: number; cents: number };
    return { count: r.n, chargedCents: r.cents };
  }

  /** Categories of the orders whose pulls or bought cards are still ours (the vault to read). */
  holdingCategories(account: string): string[] {
    return (this.stmts.holdingCategories.all(account) as { category: string }[]).map((r) => r.category);
  }

  /** Bought cards of `needs_review` purchases still held (not yet sold, listed or shipped). */
  cardsHeldForReview(account: string): number {
    return (this.stmts.heldForReview.get(account) as { n: number }).n;
  }

  // ---------------------------------------------------------------- dashboard and read API

  /**
   * Pulls newest first, each with `seq` (its insertion order: the read API's events stream sends
   * the pulls after the last `seq` it sent). `afterSeq` keeps only pulls inserted after it.
   */
  recentPulls(limit: number, afterSeq = 0): (PullRow & { seq: number })[] {
    const rows = this.stmts.recentPulls.all(afterSeq, limit) as Raw[];
    return rows.map((r) => ({ ...toPull(r), seq: r.seq as number }));
  }

  /** Every balance the service reported for `account` at or after `since`, oldest first. */
  balanceHistory(account: string, since = 0): BalanceRow[] {
    return this.stmts.balanceHistory.all(account, since) as BalanceRow[];
  }

  /**
   * The account's cash flows, oldest first: charges (negative), counted sell-back payouts and
   * listing proceeds (positive). Their running sum is the cash P&L over time.
   */
  cashFlows(account: string): { at: number; cents: Cents }[] {
    return this.stmts.cashFlows.all({ account }) as { at: number; cents: Cents }[];
  }

  /**
   * Every listing with the value of its card at the pull, its prices over time (created and
   * repriced events) and how it ended: what calibrating the fill law needs.
   */
  listingHistories(): ListingHistoryRow[] {
    const rows = this.stmts.listingHistories.all() as Omit<ListingHistoryRow, 'prices'>[];
    const events = this.stmts.listingPrices;
    return rows.map((r) => ({
      ...r,
      prices: (events.all(r.listing_id) as { price_cents: number; at: number }[]).map((e) => ({
        priceCents: e.price_cents,
        at: e.at,
      })),
    }));
  }

  /** The pull's latest listing (any state). */
  listingOfPull(pullId: string): ListingRow | undefined {
    return this.stmts.listingOfPull.get(pullId) as ListingRow | undefined;
  }

  /** The intent an order came from (its stored response carries the cards' images and grades). */
  intentOfOrder(checkoutId: string): Intent | undefined {
    const r = this.stmts.orderByCheckout.get(checkoutId) as Raw | undefined;
    const o = r ? toOrder(r) : undefined;
    return o ? this.intents.getIntent(o.intentKey) : undefined;
  }

  /** Intents changed after `since` (ms), newest first. */
  intentsUpdatedSince(since: number, limit = 100): Intent[] {
    return (this.stmts.intentsUpdatedSince.all(since, limit) as Raw[]).map(toIntent);
  }

  // ---------------------------------------------------------------- report

  /**
   * Time of the last thing written (0 when empty). A bot on a sped-up clock writes times ahead of
   * the wall clock; a report "up to now" must reach them.
   */
  latestActivityAt(): number {
    return (this.stmts.latestActivity.get() as { at: number }).at;
  }

  /**
   * Rows for a P&L report: orders created in [since, until], their pulls, their sell-backs up to
   * `until` and their listings (pure computation in `pnl.ts`).
   */
  reportData(since: number, until: number): ReportData {
    return {
      orders: (this.stmts.reportOrders.all(since, until) as Raw[]).map(toOrder),
      pulls: (this.stmts.reportPulls.all(since, until) as Raw[]).map(toPull),
      sellbacks: (this.stmts.reportSellBacks.all(until, since, until) as Raw[]).map(toSellBack),
      listings: this.stmts.reportListings.all(since, until) as ListingRow[],
    };
  }
}
