/**
 * The bot's side of the cash books (src/store/books.ts): balance readings compared with the ledger
 * and recorded, listing sales credited with what the balance gained (not the strategy's assumed
 * fee), and an unexplained rise answered by reading the vault at once, since it is most often a
 * sale the last vault read did not see yet.
 */
import { iso } from '../../core/clock.js';
import { toUsd } from '../../core/money.js';
import type { Ledger, ListingRow, Observation } from '../../store/ledger.js';
import type { AccountContext } from '../common/context.js';

/** The account fact holding when the last vault read that looked for sales began (ms). */
const VAULT_READ_FACT = 'sales_vault_read_at';

export interface CashBooksOptions extends AccountContext {
  /** The balance rose and no sale explains it yet: read the vault soon. */
  onUnexplainedRise?: () => void;
}

/** The fee a sale is taken to have paid until the account's own sales measure it. */
function feeForecast(o: CashBooksOptions): number {
  return o.strategy.sell.list.seller_fee_rate;
}

/**
 * Sales found by the vault read begun at `readStart` (booked awaiting their credit) take the free
 * credits read since the vault read before it; `readStart` becomes that mark for the next pass.
 */
export function creditFoundSales(o: CashBooksOptions, readStart: number): number {
  // The credits and the mark they were taken up to in one commit (one fsync, on the loop).
  const credited = o.ledger.atomically(() => {
    const fact = o.ledger.accountFact(o.account, VAULT_READ_FACT);
    const previous = fact === undefined ? Number.NEGATIVE_INFINITY : Number(fact);
    const found = o.ledger.creditFoundSales(o.account, previous, feeForecast(o));
    o.ledger.setAccountFact(o.account, VAULT_READ_FACT, String(readStart));
    return found;
  });
  if (credited.length > 0) showBooks(o);
  return booked(o, credited);
}

/**
 * A balance the service reported at `readAt`, for a read sent at `sentAt`: compared with the books
 * and recorded, unless a purchase was unresolved, made or settled since `sentAt` (its charge may or
 * may not be in the reading; the next reading is compared instead). Null when skipped.
 */
export function readBalance(
  o: CashBooksOptions,
  reportedCents: number,
  source: string,
  sentAt: number,
  readAt: number,
): Observation | null {
  if (!o.ledger.balanceQuietSince(o.account, sentAt)) return null;
  const obs = o.ledger.observeBalance(o.account, reportedCents, source, feeForecast(o), readAt);
  booked(o, obs.credited);
  if (obs.adjustmentCents > 0) {
    o.log.info(
      { rise: toUsd(obs.adjustmentCents), source },
      'balance rose with no sale found yet: reading the vault',
    );
    o.onUnexplainedRise?.();
  } else if (obs.adjustmentCents < 0)
    o.log.warn({ fall: toUsd(-obs.adjustmentCents), source }, 'balance fell with no charge booked: adjusted');
  if (obs.credited.length > 0 || obs.adjustmentCents !== 0) showBooks(o);
  return obs;
}

/**
 * The books' gauges (the measured fee, the adjustments' sum) from the ledger: at start-up, then
 * only when a reading or a found sale changed them. Both sum the account's whole history (every
 * credited sale), which at every reading would grow with the ledger's age.
 */
export function showBooks(o: Pick<CashBooksOptions, 'ledger' | 'account' | 'metrics'>): void {
  o.metrics.books(
    o.ledger.listingFeeRate(o.account),
    o.ledger.adjustments(o.account).reduce((n, a) => n + a.amountCents, 0),
  );
}

/** Credited sales into the log (the budget reads proceeds from the books); returns their proceeds. */
function booked(o: CashBooksOptions, credited: readonly ListingRow[]): number {
  let cents = 0;
  for (const l of credited) {
    const proceeds = l.proceedsCents ?? 0;
    cents += proceeds;
    o.log.info(
      { card: l.cardId, price: toUsd(l.priceCents), proceeds: toUsd(proceeds), fee: toUsd(l.feeCents ?? 0) },
      'listing sale credited',
    );
  }
  return cents;
}

/** An account's books against its balance (src/store/books.ts), for `report` and `--json`. */
export interface BooksJson {
  account: string;
  first_balance_usd: number;
  first_balance_at: string;
  balance_now_usd: number;
  balance_change_usd: number;
  cash_pnl_usd: number;
  adjustments_usd: number;
  residual_usd: number;
  sales_awaiting_credit: number;
  listing_fee_rate: number | null;
  assumed_fee_rate: number | null;
  adjustments: { at: string; amount_usd: number; reason: string; source: string }[];
}

export function booksOf(ledger: Ledger, account: string, assumedFee: number | null): BooksJson | null {
  const id = ledger.balanceIdentity(account);
  if (!id) return null;
  return {
    account,
    first_balance_usd: toUsd(id.firstBalanceCents),
    first_balance_at: iso(id.firstAt),
    balance_now_usd: toUsd(id.balanceNowCents),
    balance_change_usd: toUsd(id.balanceNowCents - id.firstBalanceCents),
    cash_pnl_usd: toUsd(id.cashPnlCents),
    adjustments_usd: toUsd(id.adjustmentsCents),
    residual_usd: toUsd(id.residualCents),
    sales_awaiting_credit: id.salesAwaitingCredit,
    listing_fee_rate: ledger.listingFeeRate(account),
    assumed_fee_rate: assumedFee,
    adjustments: ledger.adjustments(account).map((a) => ({
      at: iso(a.at),
      amount_usd: toUsd(a.amountCents),
      reason: a.reason,
      source: a.source,
    })),
  };
}
