/**
 * The ledger's SQL: every statement, prepared once when the ledger opens, and the mapping of raw
 * rows to the typed rows of types.ts (SQLite has no booleans: 0/1 become false/true, bodies JSON).
 * The parts of the ledger (intents.ts, pull-ledger.ts, accounts.ts, reads.ts) run these and nothing
 * else, so no call prepares a statement.
 */
import type Database from 'better-sqlite3';
import { UNSETTLED_STATES } from './order-facts.js';
import { type Intent, type OrderRow, OWNED_STATUSES, type PullRow, type SellBackRow } from './types.js';

const INTENT_COLS = `key, account, operation, body AS bodyJson, state, attempts, error_code AS errorCode,
  error_message AS errorMessage, response AS responseJson, expected_value_cents AS expectedValueCents,
  stdev_cents AS stdevCents, created_at AS createdAt, updated_at AS updatedAt,
  first_sent_at AS firstSentAt, last_sent_at AS lastSentAt, last_answer_at AS lastAnswerAt,
  unit_price_cents AS unitPriceCents, delivered, key_forgotten AS keyForgotten, parked_at AS parkedAt,
  settled_by AS settledBy`;
const ORDER_COLS = `checkout_id AS checkoutId, intent_key AS intentKey, account, operation,
  pack_type AS packType, category, risk_level AS riskLevel, card_id AS cardId, quantity,
  total_charged_cents AS totalChargedCents, remaining_balance_cents AS remainingBalanceCents,
  expected_value_cents AS expectedValueCents, stdev_cents AS stdevCents, created_at AS createdAt,
  price_cents AS priceCents, fee_cents AS feeCents, source, needs_review AS needsReview`;
const PULL_COLS = `pull_id AS pullId, checkout_id AS checkoutId, account, card_id AS cardId, name, kind,
  value_cents AS valueCents, bucket, rarity_tier AS rarityTier, is_chase AS isChase,
  buyback_cents AS buybackCents, buyback_rate AS buybackRate, buyback_valid_until AS buybackValidUntil,
  after_cents AS afterCents, after_rate AS afterRate, after_valid_until AS afterValidUntil,
  pulled_at AS pulledAt, status, status_at AS statusAt, origin, price_paid_cents AS pricePaidCents,
  sell_pull_id AS sellPullId`;
const DECISION_COLS = `id, pull_id AS pullId, action, reason, price_cents AS priceCents, decided_at AS decidedAt`;
const SELLBACK_COLS = `id, pull_id AS pullId, card_id AS cardId, account, status, payout_cents AS payoutCents,
  payout_rate AS payoutRate, transaction_id AS transactionId, error, counted, at`;
const LISTING_COLS = `listing_id AS listingId, card_id AS cardId, pull_id AS pullId, account,
  price_cents AS priceCents, state, created_at AS createdAt, repriced_at AS repricedAt,
  delisted_at AS delistedAt, filled_at AS filledAt, proceeds_cents AS proceedsCents,
  credited_at AS creditedAt, fee_cents AS feeCents`;
const BALANCE_COLS = `id, account, balance_cents AS balanceCents, source, at`;

export type Raw = Record<string, unknown>;

/**
 * The account's last balance reading when a flow is booked (books.ts: flows between readings): the
 * last entry of the (account) index, a seek, on every order and every sale booked.
 */
const LAST_READING = '(SELECT id FROM balances WHERE account = @account ORDER BY id DESC LIMIT 1)';
/** An `@until` past every row: the flows up to now. */
export const EVER = Number.MAX_SAFE_INTEGER;

export const toIntent = (r: Raw): Intent => ({
  ...(r as unknown as Intent),
  body: JSON.parse(r.bodyJson as string),
  delivered: r.delivered === 1,
  keyForgotten: r.keyForgotten === 1,
});
export const toOrder = (r: Raw): OrderRow => ({
  ...(r as unknown as OrderRow),
  needsReview: r.needsReview === 1,
});
export const toPull = (r: Raw): PullRow => ({ ...(r as unknown as PullRow), isChase: r.isChase === 1 });
export const toSellBack = (r: Raw): SellBackRow => ({
  ...(r as unknown as SellBackRow),
  counted: r.counted === 1,
});
const ownedList = OWNED_STATUSES.map((s) => `'${s}'`).join(', ');
const unsettledList = UNSETTLED_STATES.map((s) => `'${s}'`).join(', ');

/** Every statement of the ledger, prepared on `db` once (at open). */
export function prepareStatements(db: Database.Database) {
  return {
    insertIntent: db.prepare(`INSERT INTO intents (key, account, operation, body, state, attempts,
      expected_value_cents, stdev_cents, unit_price_cents, created_at, updated_at)
      VALUES (@key, @account, @operation, @body, 'pending', 0, @ev, @sd, @price, @now, @now)`),
    getIntent: db.prepare(`SELECT ${INTENT_COLS} FROM intents WHERE key = ?`),
    setIntentState: db.prepare(`UPDATE intents SET state = @state, error_code = @code,
      error_message = @message, updated_at = @now, last_answer_at = @now,
      delivered = MAX(delivered, @delivered), settled_by = COALESCE(@settledBy, settled_by),
      parked_at = CASE WHEN @state = 'in_doubt' THEN parked_at ELSE NULL END WHERE key = @key`),
    markSent: db.prepare(`UPDATE intents SET state = 'sent', attempts = attempts + 1, error_code = NULL,
      error_message = NULL, updated_at = @now, first_sent_at = COALESCE(first_sent_at, @now),
      last_sent_at = @now WHERE key = @key`),
    confirmIntent: db.prepare(`UPDATE intents SET state = 'confirmed', response = @response,
      error_code = NULL, error_message = NULL, updated_at = @now, last_answer_at = @now,
      parked_at = NULL, settled_by = @settledBy WHERE key = @key`),
    markKeyForgotten: db.prepare(`UPDATE intents SET key_forgotten = 1, updated_at = @now WHERE key = @key`),
    park: db.prepare(`UPDATE intents SET parked_at = COALESCE(parked_at, @now), error_code = @code,
      error_message = @message, updated_at = @now WHERE key = @key`),
    intentsByCreation: db.prepare(`SELECT ${INTENT_COLS} FROM intents ORDER BY created_at DESC, key
      LIMIT @limit`),
    getFact: db.prepare(`SELECT value FROM account_facts WHERE account = ? AND fact = ?`),
    setFact: db.prepare(`INSERT INTO account_facts (account, fact, value, at) VALUES (@account, @fact,
      @value, @now) ON CONFLICT (account, fact) DO UPDATE SET value = @value, at = @now`),
    ordersBetween: db.prepare(`SELECT ${ORDER_COLS} FROM orders WHERE account = ? AND created_at >= ?
      AND created_at <= ? ORDER BY created_at`),
    cardsOrderedSince: db.prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(total_charged_cents), 0) AS cents
      FROM orders WHERE account = ? AND operation = 'card' AND created_at >= ?`),
    holdingCategories: db.prepare(`SELECT DISTINCT o.category AS category FROM pulls p
      JOIN orders o ON o.checkout_id = p.checkout_id WHERE p.account = ? AND p.status IN (${ownedList})`),
    heldForReview:
      db.prepare(`SELECT COUNT(*) AS n FROM pulls p JOIN orders o ON o.checkout_id = p.checkout_id
      WHERE o.needs_review = 1 AND p.status = 'held' AND p.account = ?`),
    packsOrderedSince: db.prepare(`SELECT COALESCE(SUM(quantity), 0) AS n FROM orders
      WHERE account = ? AND operation = 'pack' AND created_at >= ?`),
    chargesAfter: db.prepare(`SELECT rowid AS row, total_charged_cents AS cents, created_at AS at
      FROM orders WHERE account = ? AND rowid > ? ORDER BY rowid`),
    payoutsCounted: db.prepare(`SELECT COALESCE(SUM(payout_cents), 0) AS cents FROM sellbacks
      WHERE account = ? AND counted = 1`),
    unresolved: db.prepare(`SELECT ${INTENT_COLS} FROM intents
      WHERE state IN (${unsettledList}) ORDER BY created_at, key`),
    countByState: db.prepare(`SELECT state, COUNT(*) AS n FROM intents GROUP BY state`),
    insertOrder: db.prepare(`INSERT INTO orders (checkout_id, intent_key, account, operation, pack_type,
      category, risk_level, card_id, quantity, total_charged_cents, remaining_balance_cents,
      expected_value_cents, stdev_cents, created_at, price_cents, fee_cents, source, needs_review, balance_seen)
      VALUES (@checkoutId, @intentKey, @account, @operation, @packType, @category, @riskLevel, @cardId,
      @quantity, @totalChargedCents, @remainingBalanceCents, @expectedValueCents, @stdevCents, @createdAt,
      @priceCents, @feeCents, @source, @needsReview, ${LAST_READING})`),
    orderByIntent: db.prepare(`SELECT ${ORDER_COLS} FROM orders WHERE intent_key = ?`),
    orderByCheckout: db.prepare(`SELECT ${ORDER_COLS} FROM orders WHERE checkout_id = ?`),
    insertPull: db.prepare(`INSERT INTO pulls (pull_id, checkout_id, account, card_id, name, kind,
      value_cents, bucket, rarity_tier, is_chase, buyback_cents, buyback_rate, buyback_valid_until,
      after_cents, after_rate, after_valid_until, pulled_at, status, status_at, origin, price_paid_cents)
      VALUES (@pullId, @checkoutId, @account, @cardId, @name, @kind, @valueCents, @bucket, @rarityTier,
      @isChase, @buybackCents, @buybackRate, @buybackValidUntil, @afterCents, @afterRate,
      @afterValidUntil, @pulledAt, @status, @pulledAt, @origin, @pricePaidCents)`),
    pullsOfOrder: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE checkout_id = ? ORDER BY rowid`),
    getPull: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE pull_id = ?`),
    ownedPullByCard: db.prepare(`SELECT ${PULL_COLS} FROM pulls
      WHERE card_id = ? AND status IN (${ownedList}) ORDER BY pulled_at DESC LIMIT 1`),
    setSellPullId: db.prepare('UPDATE pulls SET sell_pull_id = @sellPullId WHERE pull_id = @pullId'),
    setPullStatus: db.prepare(`UPDATE pulls SET status = @status, status_at = @now WHERE pull_id = @pullId`),
    pullsByStatus: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE status = ?
      ORDER BY buyback_valid_until IS NULL, buyback_valid_until, pulled_at`),
    pullsByStatusOf: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE account = ? AND status = ?
      ORDER BY buyback_valid_until IS NULL, buyback_valid_until, pulled_at`),
    owned: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE status IN (${ownedList}) ORDER BY pulled_at`),
    ownedOf: db.prepare(
      `SELECT ${PULL_COLS} FROM pulls WHERE account = ? AND status IN (${ownedList}) ORDER BY pulled_at`,
    ),
    ownedCardsOf: db.prepare(`SELECT ${PULL_COLS} FROM pulls
      WHERE account = ? AND status IN (${ownedList}) AND kind = 'card' ORDER BY pulled_at`),
    // Only what marking needs, as arrays: read before every order, so it stays small.
    ownedValuesOf: db
      .prepare(`SELECT kind, status, value_cents, COUNT(*) FROM pulls
        WHERE account = ? AND status IN (${ownedList}) GROUP BY kind, status, value_cents`)
      .raw(),
    hasPull: db.prepare('SELECT 1 FROM pulls WHERE pull_id = ?').pluck(),
    pullStatus: db.prepare('SELECT status FROM pulls WHERE pull_id = ?').pluck(),
    insertDecision: db.prepare(`INSERT INTO decisions (pull_id, action, reason, price_cents, decided_at)
      VALUES (@pullId, @action, @reason, @priceCents, @now)`),
    decisionsOf: db.prepare(`SELECT ${DECISION_COLS} FROM decisions WHERE pull_id = ? ORDER BY id`),
    countedSale: db.prepare(`SELECT ${SELLBACK_COLS} FROM sellbacks WHERE pull_id = ? AND counted = 1`),
    insertSellBack: db.prepare(`INSERT INTO sellbacks (pull_id, card_id, account, status, payout_cents,
      payout_rate, transaction_id, error, counted, at, balance_seen) VALUES (@pullId, @cardId, @account, @status,
      @payoutCents, @payoutRate, @transactionId, @error, @counted, @now, ${LAST_READING})`),
    getSellBack: db.prepare(`SELECT ${SELLBACK_COLS} FROM sellbacks WHERE id = ?`),
    insertListing: db.prepare(`INSERT INTO listings (listing_id, card_id, pull_id, account, price_cents,
      state, created_at) VALUES (@listingId, @cardId, @pullId, @account, @priceCents, 'active', @now)`),
    getListing: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE listing_id = ?`),
    repriceListing: db.prepare(`UPDATE listings SET price_cents = @priceCents, repriced_at = @now
      WHERE listing_id = @listingId`),
    delistListing: db.prepare(`UPDATE listings SET state = 'delisted', delisted_at = @now
      WHERE listing_id = @listingId`),
    fillListing: db.prepare(`UPDATE listings SET state = 'filled', filled_at = @now,
      proceeds_cents = @proceedsCents, credited_at = CASE WHEN @proceedsCents IS NULL THEN NULL ELSE @now END,
      fee_cents = price_cents - @proceedsCents WHERE listing_id = @listingId`),
    insertListingEvent: db.prepare(`INSERT INTO listing_events (listing_id, event, price_cents, at)
      VALUES (?, ?, ?, ?)`),
    activeListings: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE state = 'active'
      ORDER BY created_at`),
    activeListingsOf: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE account = ? AND state = 'active'
      ORDER BY created_at`),
    // Active listings whose pull an operator decided otherwise (held, or to be sold back): each
    // listing's pull by its key, not the set of every held pull (sealed packs are held for good).
    unwantedListings: db.prepare(`SELECT * FROM (SELECT ${LISTING_COLS},
        (SELECT status FROM pulls WHERE pulls.pull_id = listings.pull_id) AS pullStatus
        FROM listings WHERE account = ? AND state = 'active')
      WHERE pullStatus IN ('held', 'sell_pending') ORDER BY createdAt`),
    activeListingForCard: db.prepare(`SELECT ${LISTING_COLS} FROM listings
      WHERE card_id = ? AND state = 'active'`),
    insertBalance: db.prepare(`INSERT INTO balances (account, balance_cents, source, at)
      VALUES (?, ?, ?, ?)`),
    latestBalance: db.prepare(`SELECT ${BALANCE_COLS} FROM balances WHERE account = ?
      ORDER BY at DESC, id DESC LIMIT 1`),
    // The flows after reading @id (taken at @at) up to @until: booked since it was recorded
    // (`balance_seen`; rows from before that column by time), proceeds credited after it.
    // A payout's or a charge's two cases (booked after reading @id; no reading kept, so after @at)
    // are summed apart: one OR would search the account's whole history, each alone is a seek.
    flowsAfter: db.prepare(`SELECT
      (SELECT COALESCE(SUM(payout_cents), 0) FROM sellbacks
        WHERE account = @account AND balance_seen >= @id AND counted = 1 AND at <= @until)
      + (SELECT COALESCE(SUM(payout_cents), 0) FROM sellbacks
        WHERE account = @account AND balance_seen IS NULL AND at > @at AND counted = 1 AND at <= @until) AS payouts,
      (SELECT COALESCE(SUM(proceeds_cents), 0) FROM listings
        WHERE account = @account AND state = 'filled' AND credited_at > @at AND credited_at <= @until) AS proceeds,
      (SELECT COALESCE(SUM(total_charged_cents), 0) FROM orders
        WHERE account = @account AND balance_seen >= @id AND created_at <= @until)
      + (SELECT COALESCE(SUM(total_charged_cents), 0) FROM orders
        WHERE account = @account AND balance_seen IS NULL AND created_at > @at AND created_at <= @until) AS charged`),
    latestActivity: db.prepare(`SELECT MAX(
      (SELECT COALESCE(MAX(updated_at), 0) FROM intents),
      (SELECT COALESCE(MAX(at), 0) FROM sellbacks),
      (SELECT COALESCE(MAX(at), 0) FROM listing_events),
      (SELECT COALESCE(MAX(at), 0) FROM balances),
      (SELECT COALESCE(MAX(status_at), 0) FROM pulls)) AS at`),
    reportOrders: db.prepare(`SELECT ${ORDER_COLS} FROM orders WHERE created_at >= ? AND created_at <= ?
      ORDER BY created_at`),
    reportPulls: db.prepare(`SELECT ${PULL_COLS} FROM pulls p WHERE checkout_id IN
      (SELECT checkout_id FROM orders WHERE created_at >= ? AND created_at <= ?)`),
    reportSellBacks: db.prepare(`SELECT ${SELLBACK_COLS} FROM sellbacks WHERE at <= ? AND pull_id IN
      (SELECT pull_id FROM pulls WHERE checkout_id IN
        (SELECT checkout_id FROM orders WHERE created_at >= ? AND created_at <= ?))`),
    reportListings: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE pull_id IN
      (SELECT pull_id FROM pulls WHERE checkout_id IN
        (SELECT checkout_id FROM orders WHERE created_at >= ? AND created_at <= ?))`),
    // Dashboard and read-API queries (reads.ts).
    recentPulls: db.prepare(`SELECT rowid AS seq, ${PULL_COLS} FROM pulls WHERE rowid > ?
      ORDER BY rowid DESC LIMIT ?`),
    balanceHistory: db.prepare(`SELECT ${BALANCE_COLS} FROM balances WHERE account = ? AND at >= ?
      ORDER BY at, id`),
    cashFlows: db.prepare(`SELECT at, cents FROM (
        SELECT created_at AS at, -total_charged_cents AS cents FROM orders WHERE account = @account
        UNION ALL SELECT at, payout_cents FROM sellbacks WHERE account = @account AND counted = 1
        UNION ALL SELECT filled_at, proceeds_cents FROM listings
          WHERE account = @account AND state = 'filled') ORDER BY at`),
    listingHistories: db.prepare(`SELECT l.listing_id, l.state, l.created_at, l.delisted_at, l.filled_at,
      p.value_cents FROM listings l LEFT JOIN pulls p ON p.pull_id = l.pull_id ORDER BY l.created_at`),
    listingPrices: db.prepare(`SELECT price_cents, at FROM listing_events
      WHERE listing_id = ? AND event IN ('created', 'repriced') AND price_cents IS NOT NULL ORDER BY at, id`),
    listingOfPull: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE pull_id = ?
      ORDER BY created_at DESC LIMIT 1`),
    intentsUpdatedSince: db.prepare(`SELECT ${INTENT_COLS} FROM intents WHERE updated_at > ?
      ORDER BY updated_at DESC LIMIT ?`),
  };
}

/** The prepared statements, by name. */
export type Statements = ReturnType<typeof prepareStatements>;
