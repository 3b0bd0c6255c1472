/**
 * An order as every view shows it: `GET /api/v1/orders` and its events, the dashboard, and
 * `packbot orders` (table and `--json`). The facts are src/store/order-facts.ts's (what was
 * ordered, what it cost or may cost, in doubt or not); here they become USD and ISO times, so the
 * views cannot disagree about an order (docs/api.md, "GET /api/v1/orders").
 */
import { iso } from '../../core/clock.js';
import { type Cents, toUsd } from '../../core/money.js';
import type { OrdersResponse, OrderView } from '../../obs/api-schemas.js';
import type { ReadQuery } from '../../obs/bot-view.js';
import type { Intent, Ledger } from '../../store/ledger.js';
import { inDoubtFirst, type OnTheWire, orderFacts } from '../../store/order-facts.js';

const usd = (cents: Cents | null): number | null => (cents === null ? null : toUsd(cents));

/** One order; `onTheWire` is the running bot's executors' (none when read from the ledger alone). */
export function orderView(i: Intent, ledger: Ledger, onTheWire?: OnTheWire): OrderView {
  const order = i.state === 'confirmed' ? ledger.orderForIntent(i.key) : undefined;
  // A card order's one pull is its card (its name); a pack order's pulls are the pulls view's.
  const pulls = order && i.operation === 'card' ? ledger.pullsOfOrder(order.checkoutId) : [];
  const f = orderFacts(i, order && { order, pulls }, onTheWire);
  return {
    key: f.key,
    account: f.account,
    operation: f.operation,
    state: f.state,
    in_doubt: f.inDoubt,
    category: f.category,
    pack_type: f.packType,
    risk_level: f.riskLevel,
    quantity: f.quantity,
    card_id: f.cardId,
    card_name: f.cardName,
    charged_usd: usd(f.chargedCents),
    price_usd: usd(f.priceCents),
    fee_usd: usd(f.feeCents),
    bound_usd: toUsd(f.boundCents),
    amount_is_bound: f.amountIsBound,
    created_at: iso(i.createdAt),
    updated_at: iso(i.updatedAt),
    first_sent_at: i.firstSentAt === null ? null : iso(i.firstSentAt),
    attempts: i.attempts,
    key_forgotten: i.keyForgotten,
    error_code: i.errorCode,
    error_message: i.errorMessage,
    settled_by: i.settledBy,
  };
}

/**
 * The orders read: the newest first (default 50), or with `inDoubt` only those in doubt, parked
 * first, then the oldest (the order to settle them in); `in_doubt` counts the account's (or every
 * account's) orders in doubt either way.
 */
export function ordersOf(ledger: Ledger, q: ReadQuery, onTheWire?: OnTheWire): OrdersResponse {
  const limit = q.limit ?? 50;
  const doubt = inDoubtFirst(ledger.unresolvedIntents(q.account), onTheWire);
  const intents = q.inDoubt
    ? doubt
    : ledger
        .recentIntents(q.account === undefined ? limit : 1000)
        .filter((i) => q.account === undefined || i.account === q.account);
  return {
    in_doubt: doubt.length,
    orders: intents.slice(0, limit).map((i) => orderView(i, ledger, onTheWire)),
  };
}
