/**
 * One account's status (`AccountStatus` of the read API): the one read model behind the running
 * bot's `GET /api/v1/status` and the offline `packbot status`, so both list the same fields and the
 * same pauses. The pauses are the budget's own guards (`budgetPauses`), asked with the budget's own
 * totals (`BudgetTracker`), plus orders in doubt. What only a running bot knows (the last account
 * read, why the open loop waits, the card buyer's last sync) is passed in when there is one.
 */
import { DAY_MS, iso } from '../../core/clock.js';
import { toUsd } from '../../core/money.js';
import type { AccountStatus } from '../../obs/api-schemas.js';
import type { PauseStatus } from '../../obs/kill-switch.js';
import type { Intent, Ledger } from '../../store/ledger.js';
import { inDoubtFirst, type OnTheWire } from '../../store/order-facts.js';
import { computeReport } from '../../store/pnl.js';
import { budgetPauses } from '../../strategy/budget.js';
import type { Strategy } from '../../strategy/strategy-schema.js';
import type { CardBuyer } from '../buying/card-buyer.js';
import type { AccountView } from '../buying/market-view.js';
import { booksOf } from '../selling/cash-books.js';
import type { SpendTotals } from '../spending/budget-state.js';

export interface AccountStatusInput {
  ledger: Ledger;
  name: string;
  strategy: Strategy;
  now: number;
  /** The operator's kill switch (file and endpoint). */
  killSwitch: PauseStatus;
  /** The budget's totals at `now` (BudgetTracker.totals). */
  totals: SpendTotals;
  /** The running bot's last account read; absent offline. */
  view?: AccountView;
  /** Why the open loop last waited; absent offline ("the bot is not running"). */
  waiting?: string | null;
  /** The running card buyer; absent offline. */
  cards?: Pick<CardBuyer, 'lastWait' | 'lastSync'>;
  /** The running bot's requests on the wire (not in doubt: order-facts.ts); absent offline. */
  onTheWire?: OnTheWire;
}

const isoOrNull = (ms: number | null | undefined): string | null =>
  ms === null || ms === undefined || !Number.isFinite(ms) ? null : iso(ms);

export function accountStatusOf(i: AccountStatusInput): AccountStatus {
  const { ledger, name, strategy, now, totals, view } = i;
  const recorded = ledger.latestBalance(name);
  const fromView = view && (!recorded || view.readAt > recorded.at);
  const balance = fromView ? view.balanceCents : recorded?.balanceCents;
  const balanceAt = fromView ? view.readAt : recorded?.at;
  const until = Math.max(now, ledger.latestActivityAt());
  const report = computeReport(ledger.reportData(0, until), 0, until, { account: name });
  const cash = ledger.cashFlows(name).reduce((n, f) => n + f.cents, 0);
  const budget = strategy.budget;
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  const doubts = inDoubtFirst(ledger.unresolvedIntents(name), i.onTheWire);
  const ks = i.killSwitch;
  const pauses: AccountStatus['pauses'] = budgetPauses(
    { balanceCents: balance ?? 0, ...totals, killSwitch: ks.paused },
    strategy,
  ).map((p) => ({
    reason: p.pause,
    detail: p.pause === 'kill_switch' ? `paused by ${ks.reasons.join(' and ')}` : p.reason,
  }));
  if (doubts.length > 0) pauses.push({ reason: 'order_in_doubt', detail: doubtDetail(doubts) });
  return {
    name,
    strategy: strategy.name,
    balance_usd: balance === undefined ? null : toUsd(balance),
    balance_at: isoOrNull(balanceAt),
    net_pnl_usd: toUsd(report.totals.netCents),
    marked_pnl_usd: toUsd(totals.markedPnlCents),
    cash_pnl_usd: toUsd(cash),
    books: booksStatus(ledger, name),
    packs: {
      today: ledger.packsOrderedSince(name, dayStart),
      left_today: view ? view.packsLeftToday : null,
      max_per_day: view ? view.maxPacksPerDay : null,
      resets_at: isoOrNull(view?.resetsAt),
    },
    spend: {
      today_usd: toUsd(totals.spentTodayCents),
      daily_cap_usd: budget.max_daily_spend_usd,
      total_usd: toUsd(totals.spentTotalCents),
      total_cap_usd: budget.max_total_spend_usd,
      min_balance_usd: budget.min_balance_usd,
      stop_loss_usd: budget.stop_loss_usd,
    },
    next_purchase_at: isoOrNull(view?.nextPurchaseAt),
    waiting: i.waiting === undefined ? 'the bot is not running' : i.waiting || null,
    pauses,
    orders_in_doubt: doubts.length,
    listings_active: ledger.activeListings(name).length,
    // Counted from the index (sealed packs are held for good: the rows grow with the ledger's age).
    holdings: ledger.ownedValues(name).reduce((n, [, , , count]) => n + count, 0),
    cards: cardStatus(ledger, name, strategy, now, i.cards),
  };
}

/** The card buying part of the status (null when the strategy buys no cards). */
function cardStatus(
  ledger: Ledger,
  account: string,
  strategy: Strategy,
  now: number,
  buyer?: Pick<CardBuyer, 'lastWait' | 'lastSync'>,
): AccountStatus['cards'] {
  if (!strategy.cards.enabled) return null;
  const today = ledger.cardsOrderedSince(account, Math.floor(now / DAY_MS) * DAY_MS);
  const sync = buyer?.lastSync;
  return {
    today: today.count,
    max_per_day: strategy.cards.max_per_day,
    spent_today_usd: toUsd(today.chargedCents),
    daily_cap_usd: strategy.cards.max_daily_spend_usd,
    needing_review: ledger.cardsHeldForReview(account),
    shop_synced_at: sync ? iso(sync.at) : null,
    to_buy: sync ? sync.toBuy : null,
    waiting: buyer ? buyer.lastWait || null : 'the bot is not running',
  };
}

/**
 * What an order in doubt pause says: how many, and why the first parked one is not settled yet
 * (`doubts` in doubt, parked first: order-facts.ts `inDoubtFirst`).
 */
function doubtDetail(doubts: readonly Intent[]): string {
  const parked = doubts.find((d) => d.parkedAt !== null);
  const why = parked ? `; ${parked.key} parked: ${parked.errorMessage ?? 'evidence cannot settle it'}` : '';
  return `${doubts.length} order(s) in doubt are settled first${why}`;
}

/** The books against the balance (cash-books.ts `booksOf`): the identity and the latest adjustments. */
function booksStatus(ledger: Ledger, account: string): AccountStatus['books'] {
  const b = booksOf(ledger, account, null);
  if (!b) return null;
  const { balance_change_usd, cash_pnl_usd, adjustments_usd, residual_usd, sales_awaiting_credit } = b;
  return {
    balance_change_usd,
    cash_pnl_usd,
    adjustments_usd,
    residual_usd,
    sales_awaiting_credit,
    listing_fee_rate: b.listing_fee_rate,
    adjustments: b.adjustments.slice(-20),
  };
}
