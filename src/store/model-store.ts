/**
 * The model's promise per order in the ledger (migration 4): written with the purchase intent, in
 * its transaction, before the request leaves; read back with what the order's pulls did since
 * (first decision, counted sale, listings), for model-orders.ts to turn into model-gap.ts's input.
 * The strategy version is kept whole once per digest, so a report can price a listing still
 * running with the very listing life the order was decided by, whatever the strategy file is now.
 */
import type { Database, Statement } from 'better-sqlite3';
import type { OrderPromise } from '../strategy/model-promise.js';
import { strategyDigest, strategyText } from '../strategy/strategy-digest.js';
import type { Strategy } from '../strategy/strategy-schema.js';
import type { DecisionAction, PullRow } from './types.js';

/** What the executor records with a pack order's intent. */
export interface OrderModelInput {
  strategy: Strategy;
  category: string;
  packType: string;
  riskLevel: string;
  promise: OrderPromise;
}

/**
 * The statements of this file, prepared once per connection (by their text: the model's reads
 * build theirs from the filters asked for, a handful of shapes). Preparing one costs about as much
 * as running the order's INSERT, and an order is booked every minute per account.
 */
const prepared = new WeakMap<Database, Map<string, Statement>>();

function statement(db: Database, sql: string): Statement {
  let byText = prepared.get(db);
  if (!byText) {
    byText = new Map();
    prepared.set(db, byText);
  }
  let st = byText.get(sql);
  if (!st) {
    st = db.prepare(sql);
    byText.set(sql, st);
  }
  return st;
}

export function insertOrderModel(
  db: Database,
  key: string,
  account: string,
  m: OrderModelInput,
  now: number,
): void {
  const digest = strategyDigest(m.strategy);
  statement(
    db,
    `INSERT OR IGNORE INTO model_strategies (digest, name, strategy, first_used_at) VALUES (?, ?, ?, ?)`,
  ).run(digest, m.strategy.name, strategyText(m.strategy), now);
  const p = m.promise;
  statement(
    db,
    `INSERT INTO order_models (intent_key, account, strategy_digest, category, pack_type, risk_level,
      quantity, price_cents, ev_cents, realized_ev_cents, sd_cents, p_loss, sell_back_mean_cents,
      sell_back_sd_cents, listing_mean_cents, listing_sd_cents, held_mean_cents, held_sd_cents, decided_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    key,
    account,
    digest,
    m.category,
    m.packType,
    m.riskLevel,
    p.packs,
    p.priceCents,
    p.evCents,
    p.realizedEvCents,
    p.sdCents,
    p.pLoss,
    p.parts.sell_back.meanCents,
    p.parts.sell_back.sdCents,
    p.parts.listing.meanCents,
    p.parts.listing.sdCents,
    p.parts.held.meanCents,
    p.parts.held.sdCents,
    now,
  );
}

/**
 * Which orders to read: created in [since, until] (ms), decided at or after `decidedSince`, of one
 * account and strategy name if given.
 */
export interface ModelRowsQuery {
  account?: string;
  strategyName?: string;
  since?: number;
  until?: number;
  decidedSince?: number;
  /** Orders to leave out, by `ModelOrderRow.modelRow`: those a reader has summed for good already. */
  skip?: readonly number[];
}

/** An order with its recorded promise, as booked (only confirmed orders have one). */
export interface ModelOrderRow {
  intentKey: string;
  /** The promise's row: a short handle for the order while the process runs (`skip`). */
  modelRow: number;
  account: string;
  digest: string;
  strategyName: string;
  category: string;
  packType: string;
  riskLevel: string;
  promise: OrderPromise;
  decidedAt: number;
  checkoutId: string;
  /** Packs the order booked, what it was charged, when it was booked. */
  quantity: number;
  totalChargedCents: number;
  createdAt: number;
}

/** A pull's listings, summed: first listed, whether one is active, a sale's proceeds, the last end. */
export interface PullListings {
  firstListedAt: number;
  active: boolean;
  proceedsCents: number | null;
  /** When the last of them ended (sold or delisted); null while none has. */
  endedAt: number | null;
}

export interface ModelRows {
  orders: ModelOrderRow[];
  /** Strategy versions by digest: the validated strategy as JSON text. */
  strategies: Map<string, { name: string; json: string }>;
  pulls: PullRow[];
  firstDecision: Map<string, DecisionAction>;
  /** Counted sell-back payout per pull. */
  sales: Map<string, number>;
  listings: Map<string, PullListings>;
}

const PULL_COLS = `p.pull_id AS pullId, p.checkout_id AS checkoutId, p.account, p.card_id AS cardId, p.name,
  p.kind, p.value_cents AS valueCents, p.bucket, p.rarity_tier AS rarityTier, p.is_chase AS isChase,
  p.buyback_cents AS buybackCents, p.buyback_rate AS buybackRate,
  p.buyback_valid_until AS buybackValidUntil, p.after_cents AS afterCents, p.after_rate AS afterRate,
  p.after_valid_until AS afterValidUntil, p.pulled_at AS pulledAt, p.status, p.status_at AS statusAt,
  p.origin, p.price_paid_cents AS pricePaidCents, p.sell_pull_id AS sellPullId`;

export function readModelRows(db: Database, q: ModelRowsQuery): ModelRows {
  const params = {
    account: q.account ?? null,
    name: q.strategyName ?? null,
    since: q.since ?? 0,
    until: q.until ?? Number.MAX_SAFE_INTEGER,
    decided: q.decidedSince ?? 0,
    skip: JSON.stringify(q.skip ?? []),
  };
  // Only the conditions asked for: an account's orders from an instant come by index.
  const where = ['o.created_at >= @since', 'o.created_at <= @until', 'm.decided_at >= @decided'];
  if (q.account !== undefined) where.unshift('m.account = @account');
  if (q.strategyName !== undefined) where.push('s.name = @name');
  if (q.skip !== undefined && q.skip.length > 0)
    where.push('m.rowid NOT IN (SELECT value FROM json_each(@skip))');
  // The orders in question, once, for every query below.
  const selected = `WITH sel AS (
      SELECT m.*, m.rowid AS model_row, s.name AS strategy_name, o.checkout_id, o.quantity AS booked, o.total_charged_cents,
        o.created_at AS booked_at
      FROM order_models m CROSS JOIN orders o ON o.intent_key = m.intent_key
      CROSS JOIN model_strategies s ON s.digest = m.strategy_digest
      WHERE ${where.join(' AND ')})`;
  const orders = (
    statement(db, `${selected} SELECT * FROM sel ORDER BY booked_at, intent_key`).all(params) as Raw[]
  ).map(toOrder);
  const strategies = new Map<string, { name: string; json: string }>();
  const digests = new Set(orders.map((o) => o.digest));
  for (const r of statement(db, `SELECT digest, name, strategy FROM model_strategies`).all() as Raw[])
    if (digests.has(r.digest as string))
      strategies.set(r.digest as string, { name: r.name as string, json: r.strategy as string });
  // One pass over the selected orders' pulls (indexes on pulls.checkout_id, decisions.pull_id,
  // the counted sale and listings.pull_id): the cost follows the orders asked for, not the ledger.
  const rows = statement(
    db,
    `${selected} SELECT ${PULL_COLS},
        (SELECT d.action FROM decisions d WHERE d.pull_id = p.pull_id ORDER BY d.id LIMIT 1) AS firstAction,
        (SELECT s.payout_cents FROM sellbacks s WHERE s.pull_id = p.pull_id AND s.counted = 1) AS saleCents,
        l.firstListedAt, l.active, l.proceeds, l.endedAt
      FROM sel CROSS JOIN pulls p ON p.checkout_id = sel.checkout_id
      LEFT JOIN (SELECT l.pull_id, MIN(l.created_at) AS firstListedAt, MAX(l.state = 'active') AS active,
          SUM(CASE WHEN l.state = 'filled' THEN l.proceeds_cents END) AS proceeds,
          MAX(COALESCE(l.filled_at, l.delisted_at)) AS endedAt
        FROM sel CROSS JOIN pulls p ON p.checkout_id = sel.checkout_id
        CROSS JOIN listings l ON l.pull_id = p.pull_id
        GROUP BY l.pull_id) l ON l.pull_id = p.pull_id
      ORDER BY p.rowid`,
  ).all(params) as Raw[];
  const pulls: PullRow[] = [];
  const firstDecision = new Map<string, DecisionAction>();
  const sales = new Map<string, number>();
  const listings = new Map<string, PullListings>();
  for (const r of rows) {
    const pull = { ...(r as unknown as PullRow), isChase: r.isChase === 1 };
    pulls.push(pull);
    if (r.firstAction != null) firstDecision.set(pull.pullId, r.firstAction as DecisionAction);
    if (r.saleCents != null) sales.set(pull.pullId, r.saleCents as number);
    if (r.firstListedAt != null)
      listings.set(pull.pullId, {
        firstListedAt: r.firstListedAt as number,
        active: r.active === 1,
        proceedsCents: (r.proceeds as number | null) ?? null,
        endedAt: (r.endedAt as number | null) ?? null,
      });
  }
  return { orders, strategies, pulls, firstDecision, sales, listings };
}

type Raw = Record<string, unknown>;

function toOrder(r: Raw): ModelOrderRow {
  const n = (k: string) => r[k] as number;
  return {
    intentKey: r.intent_key as string,
    modelRow: r.model_row as number,
    account: r.account as string,
    digest: r.strategy_digest as string,
    strategyName: r.strategy_name as string,
    category: r.category as string,
    packType: r.pack_type as string,
    riskLevel: r.risk_level as string,
    promise: {
      packs: n('quantity'),
      priceCents: n('price_cents'),
      evCents: n('ev_cents'),
      realizedEvCents: n('realized_ev_cents'),
      sdCents: n('sd_cents'),
      pLoss: n('p_loss'),
      parts: {
        sell_back: { meanCents: n('sell_back_mean_cents'), sdCents: n('sell_back_sd_cents') },
        listing: { meanCents: n('listing_mean_cents'), sdCents: n('listing_sd_cents') },
        held: { meanCents: n('held_mean_cents'), sdCents: n('held_sd_cents') },
      },
    },
    decidedAt: n('decided_at'),
    checkoutId: r.checkout_id as string,
    quantity: n('booked'),
    totalChargedCents: n('total_charged_cents'),
    createdAt: n('booked_at'),
  };
}
