/**
 * The cash books follow the balance: the service's figures are the books' figures where the spec
 * is silent (the marketplace's fee, when a sale's proceeds arrive). A listing's proceeds are what
 * the balance gained when its card left the vault; every balance change the ledger cannot
 * attribute is an `adjustment` row (amount, time, reason). So at every reading:
 *
 *   cash P&L (payouts + proceeds − charges since the first reading)
 *     = the balance's change since the first reading − Σ adjustments          (`identity`)
 *
 * A reading (`observe`) is compared with the balance the ledger expects (the last reading plus the
 * flows booked since). A rise goes first to sales found and still waiting for their credit, oldest
 * first, as many of them as the rise fits at the fee measured so far, split by their prices; the
 * rest is an adjustment whose credit stays free to attribute. A sale found later takes a free credit
 * read after the vault read before the one that found it (a sale and its credit come after the
 * last read that still showed the card listed); without one it waits for the next rise.
 */
import type { Statement } from 'better-sqlite3';
import type { Cents } from '../core/money.js';
import { type LedgerConnection, LedgerPart } from './ledger-part.js';
import { EVER } from './statements.js';
import type { ListingRow } from './types.js';

/** An unexplained balance change, or the part of a free credit a sale took (negative). */
export interface AdjustmentRow {
  id: number;
  account: string;
  amountCents: Cents;
  /** What of a credit no sale has taken yet (0 for a fall, and once taken). */
  unattributedCents: Cents;
  reason: string;
  /** The reading it came from: `reconcile`, `sell-back`, or `attribution`. */
  source: string;
  at: number;
}

/** The identity between the books and the balance for one account (null before any reading). */
export interface BalanceIdentity {
  firstBalanceCents: Cents;
  firstAt: number;
  /** The last reading plus the flows booked since. */
  balanceNowCents: Cents;
  adjustmentsCents: Cents;
  payoutsCents: Cents;
  proceedsCents: Cents;
  chargedCents: Cents;
  /** payouts + proceeds − charged since the first reading. */
  cashPnlCents: Cents;
  /** (balance now − first) − adjustments − cash P&L: 0 when the books explain the balance. */
  residualCents: Cents;
  /** Sales found whose credit no reading has shown yet (not in the cash P&L). */
  salesAwaitingCredit: number;
}

/** What one reading did to the books. */
export interface Observation {
  /** reported − expected. */
  deltaCents: Cents;
  /** Credited to sales waiting for it. */
  attributedCents: Cents;
  /** Booked as an adjustment (the rest). */
  adjustmentCents: Cents;
  /** The sales credited. */
  credited: ListingRow[];
}

/**
 * The fee a sale is taken to have paid before any sale's fee was measured: the caller's forecast
 * (the strategy's `seller_fee_rate`), else `DEFAULT_FEE_FORECAST`. It only chooses which waiting
 * sales a rise pays for; what each is credited is what the balance gained.
 */
export type FeeForecast = number | null;
const DEFAULT_FEE_FORECAST = 0.05;

const ADJ_COLS = `id, account, amount_cents AS amountCents, unattributed_cents AS unattributedCents,
  reason, source, at`;

export class Books extends LedgerPart {
  private readonly q: Record<string, Statement>;

  constructor(c: LedgerConnection) {
    super(c);
    const db = c.db;
    this.q = {
      insertAdjustment: db.prepare(`INSERT INTO adjustments (account, amount_cents, unattributed_cents,
        reason, source, at) VALUES (@account, @amount, @unattributed, @reason, @source, @at)`),
      adjustments: db.prepare(`SELECT ${ADJ_COLS} FROM adjustments WHERE account = ? ORDER BY at, id`),
      allAdjustments: db.prepare(`SELECT ${ADJ_COLS} FROM adjustments ORDER BY at, id`),
      freeCredits: db.prepare(`SELECT ${ADJ_COLS} FROM adjustments
        WHERE account = @account AND unattributed_cents > 0 AND at > @after ORDER BY at, id`),
      takeCredit: db.prepare(
        'UPDATE adjustments SET unattributed_cents = unattributed_cents - @take WHERE id = @id',
      ),
      awaiting: db.prepare(`SELECT listing_id AS listingId, price_cents AS priceCents, filled_at AS filledAt
        FROM listings WHERE account = ? AND state = 'filled' AND credited_at IS NULL AND proceeds_cents IS NULL
        ORDER BY filled_at, created_at, listing_id`),
      credit: db.prepare(`UPDATE listings SET proceeds_cents = @proceeds, credited_at = @at,
        fee_cents = price_cents - @proceeds WHERE listing_id = @listingId AND proceeds_cents IS NULL`),
      // The credited sales' fee and price, kept by triggers (migration 9).
      feeSoFar:
        db.prepare(`SELECT COALESCE(SUM(fee_cents), 0) AS fee, COALESCE(SUM(fee_price_cents), 0) AS price,
        COALESCE(SUM(fee_sales), 0) AS sales FROM listing_totals WHERE account = ?`),
      feeAll:
        db.prepare(`SELECT COALESCE(SUM(fee_cents), 0) AS fee, COALESCE(SUM(fee_price_cents), 0) AS price,
        COALESCE(SUM(fee_sales), 0) AS sales FROM listing_totals`),
      // Three indexed looks, not one scan of every intent ever (this runs on every purchase answer).
      busySince: db.prepare(`SELECT
        EXISTS (SELECT 1 FROM intents WHERE state IN ('pending', 'sent', 'in_doubt') AND account = @account
          AND key != @except)
        OR EXISTS (SELECT 1 FROM intents WHERE account = @account AND updated_at > @since AND key != @except)
        OR EXISTS (SELECT 1 FROM intents WHERE account = @account AND created_at > @since AND key != @except)
        AS busy`),
      // The filled listings' proceeds, kept by triggers (migration 9).
      proceeds: db.prepare(
        `SELECT COALESCE((SELECT proceeds_cents FROM listing_totals WHERE account = ?), 0) AS cents`,
      ),
      firstBalance: db.prepare(`SELECT id, balance_cents AS balanceCents, at FROM balances WHERE account = ?
        ORDER BY at, id LIMIT 1`),
      sinceFirst: db.prepare(`SELECT
        (SELECT COALESCE(SUM(amount_cents), 0) FROM adjustments WHERE account = @account) AS adjusted,
        (SELECT COUNT(*) FROM listings WHERE account = @account AND state = 'filled'
          AND credited_at IS NULL AND proceeds_cents IS NULL) AS awaiting`),
    };
  }

  /**
   * A balance the service reported at `at`, compared with the one the ledger expects and recorded
   * as the new reading: a rise credits sales waiting for it, the rest is an adjustment. The caller
   * skips readings that may include a charge the ledger has not booked (an order in doubt).
   */
  observe(account: string, reportedCents: Cents, source: string, fee: FeeForecast, at?: number): Observation {
    const now = this.now(at);
    return this.tx(() => {
      const last = this.stmts.latestBalance.get(account) as
        | { id: number; balanceCents: number; at: number }
        | undefined;
      let expected = reportedCents;
      if (last) {
        // The flows booked since the last reading, up to this one (a flow booked after it is not in
        // the balance it reports). Proceeds are credited only by readings: none is a flow here.
        const f = this.stmts.flowsAfter.get({ account, id: last.id, at: last.at, until: now }) as {
          payouts: number;
          charged: number;
        };
        expected = last.balanceCents + f.payouts - f.charged;
      }
      const delta = reportedCents - expected;
      let attributed = 0;
      let credited: ListingRow[] = [];
      if (delta > 0) {
        const waiting = this.q.awaiting!.all(account) as { listingId: string; priceCents: number }[];
        const shares = attribute(delta, waiting, this.feeRate(account) ?? fee ?? DEFAULT_FEE_FORECAST);
        for (const s of shares) this.q.credit!.run({ proceeds: s.cents, at: now, listingId: s.listingId });
        attributed = shares.reduce((n, s) => n + s.cents, 0);
        credited = shares.map((s) => this.stmts.getListing.get(s.listingId) as ListingRow);
      }
      const rest = delta - attributed;
      if (rest !== 0)
        this.q.insertAdjustment!.run({
          account,
          amount: rest,
          unattributed: Math.max(0, rest),
          reason: rest > 0 ? 'balance rose with no sale found yet' : 'balance fell with no charge booked',
          source,
          at: now,
        });
      this.stmts.insertBalance.run(account, reportedCents, source, now);
      return { deltaCents: delta, attributedCents: attributed, adjustmentCents: rest, credited };
    });
  }

  /**
   * Sales just found (booked with no proceeds) take free credits read after `after` (the start of
   * the vault read before the one that found them): as many of the oldest sales as the credits fit
   * at the measured fee, split by price. The credit taken leaves the adjustments (a negative row),
   * so the identity still holds. Returns the sales credited.
   */
  creditFound(account: string, after: number, fee: FeeForecast, at?: number): ListingRow[] {
    const now = this.now(at);
    return this.tx(() => {
      const credits = this.q.freeCredits!.all({ account, after }) as AdjustmentRow[];
      const free = credits.reduce((n, c) => n + c.unattributedCents, 0);
      if (free <= 0) return [];
      const waiting = this.q.awaiting!.all(account) as { listingId: string; priceCents: number }[];
      const shares = attribute(free, waiting, this.feeRate(account) ?? fee ?? DEFAULT_FEE_FORECAST);
      const taken = shares.reduce((n, s) => n + s.cents, 0);
      if (taken === 0) return [];
      // Credited when the reading showed it: it is in that reading's balance, not a flow after it.
      const shownAt = credits[0]!.at;
      for (const s of shares) this.q.credit!.run({ proceeds: s.cents, at: shownAt, listingId: s.listingId });
      let left = taken;
      for (const c of credits) {
        if (left === 0) break;
        const take = Math.min(left, c.unattributedCents);
        this.q.takeCredit!.run({ take, id: c.id });
        left -= take;
      }
      this.q.insertAdjustment!.run({
        account,
        amount: -taken,
        unattributed: 0,
        reason: `credit taken by ${shares.length} listing sale(s) found later`,
        source: 'attribution',
        at: now,
      });
      return shares.map((s) => this.stmts.getListing.get(s.listingId) as ListingRow);
    });
  }

  /**
   * Whether a balance read since `since` can be compared with the books: no purchase of the account
   * is unresolved, and none was made or settled since (its charge may or may not be in the read);
   * `except`: the purchase whose own answer is the reading.
   */
  quietSince(account: string, since: number, except = ''): boolean {
    return (this.q.busySince!.get({ account, since, except }) as { busy: number }).busy === 0;
  }

  /** Every credited sale's proceeds (the budget's cash back). */
  proceedsCents(account: string): Cents {
    return (this.q.proceeds!.get(account) as { cents: number }).cents;
  }

  /** The share of sale prices the marketplace kept, over this account's credited sales (null: none). */
  feeRate(account: string): number | null {
    const r = this.q.feeSoFar!.get(account) as { fee: number; price: number; sales: number };
    return r.sales > 0 && r.price > 0 ? r.fee / r.price : null;
  }

  /** Credited sales and what the marketplace kept of them (every account's without one). */
  feeTotals(account?: string): { sales: number; feeCents: Cents; priceCents: Cents } {
    const r = (account === undefined ? this.q.feeAll!.get() : this.q.feeSoFar!.get(account)) as {
      fee: number;
      price: number;
      sales: number;
    };
    return { sales: r.sales, feeCents: r.fee, priceCents: r.price };
  }

  adjustments(account?: string): AdjustmentRow[] {
    return (
      account === undefined ? this.q.allAdjustments!.all() : this.q.adjustments!.all(account)
    ) as AdjustmentRow[];
  }

  identity(account: string): BalanceIdentity | null {
    const first = this.q.firstBalance!.get(account) as
      | { id: number; balanceCents: number; at: number }
      | undefined;
    const last = this.stmts.latestBalance.get(account) as
      | { id: number; balanceCents: number; at: number }
      | undefined;
    if (!first || !last) return null;
    const since = {
      ...(this.stmts.flowsAfter.get({ account, id: first.id, at: first.at, until: EVER }) as {
        payouts: number;
        proceeds: number;
        charged: number;
      }),
      ...(this.q.sinceFirst!.get({ account }) as { adjusted: number; awaiting: number }),
    };
    const after = this.stmts.flowsAfter.get({ account, id: last.id, at: last.at, until: EVER }) as {
      payouts: number;
      proceeds: number;
      charged: number;
    };
    const now = last.balanceCents + after.payouts + after.proceeds - after.charged;
    const cashPnl = since.payouts + since.proceeds - since.charged;
    return {
      firstBalanceCents: first.balanceCents,
      firstAt: first.at,
      balanceNowCents: now,
      adjustmentsCents: since.adjusted,
      payoutsCents: since.payouts,
      proceedsCents: since.proceeds,
      chargedCents: since.charged,
      cashPnlCents: cashPnl,
      residualCents: now - first.balanceCents - since.adjusted - cashPnl,
      salesAwaitingCredit: since.awaiting,
    };
  }
}

/** A credit's share for one sale. */
export interface CreditShare {
  listingId: string;
  cents: Cents;
}

/**
 * Which of `waiting` (oldest first) a credit of `cents` pays, and how much each: the prefix whose
 * prices net of `fee` come closest to the credit (none when even the oldest sale's net is over
 * twice the credit), the credit split by price, at most each sale's price (a credit larger than
 * every price is not all proceeds: the rest stays free): each sale its price less the implied
 * rate rounded per sale when that adds up to the credit, else in proportion, whole cents, the
 * remainder to the first.
 */
export function attribute(
  cents: Cents,
  waiting: readonly { listingId: string; priceCents: Cents }[],
  fee: number,
): CreditShare[] {
  if (cents <= 0 || waiting.length === 0) return [];
  const net = 1 - Math.min(Math.max(fee, 0), 0.99);
  let best = 0;
  let bestGap = Number.POSITIVE_INFINITY;
  let sum = 0;
  for (let k = 1; k <= waiting.length; k++) {
    sum += waiting[k - 1]!.priceCents;
    const gap = Math.abs(cents - net * sum);
    if (gap < bestGap) {
      bestGap = gap;
      best = k;
    }
  }
  if (net * waiting[0]!.priceCents > 2 * cents) return [];
  const paid = waiting.slice(0, best);
  const prices = paid.reduce((n, w) => n + w.priceCents, 0);
  const total = Math.min(cents, prices);
  // A marketplace keeps a rate of each sale, rounded per sale: the implied rate (as a round figure
  // first) gives each sale its own cents when it accounts for the credit exactly.
  const implied = 1 - total / prices;
  for (const rate of [Math.round(implied * 1e4) / 1e4, implied]) {
    const exact = paid.map((w) => ({
      listingId: w.listingId,
      cents: w.priceCents - Math.round(w.priceCents * rate),
    }));
    if (exact.reduce((n, s) => n + s.cents, 0) === total) return exact;
  }
  const shares = paid.map((w) => ({
    listingId: w.listingId,
    cents: Math.floor((total * w.priceCents) / prices),
  }));
  shares[0]!.cents += total - shares.reduce((n, s) => n + s.cents, 0);
  return shares;
}
