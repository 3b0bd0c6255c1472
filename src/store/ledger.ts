/**
 * The bot's durable memory: purchase intents (written before a request leaves), orders, pulls,
 * decisions, sell-backs, listings and balance observations, in one SQLite file.
 *
 * Durability: WAL with `synchronous = FULL`, so every committed write (an intent above all) is on
 * disk before the call returns; a crash afterwards cannot lose it. Every multi-row change (an order
 * with its pulls) is one transaction: after a crash it is either all there or not at all, and the
 * intent then still reads as unresolved, to be re-sent with the same key and body.
 *
 * Money is integer cents, times are epoch milliseconds from the injected Clock (see docs/ledger.md).
 */
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { CardPurchaseResponse, PackPurchaseResponse, SellBackResult } from '../api/schemas.js';
import { IDEMPOTENCY_KEY_RE } from '../api/schemas.js';
import { type Clock, WallClock } from '../core/clock.js';
import { type Cents, toCents } from '../core/money.js';
import { boughtCardFromResponse, boughtCardPull } from './bought-card.js';
import { migrate } from './migrations.js';
import { ledgerOpenError } from './open-error.js';
import { ensurePrivateDir, ensurePrivateFile, tightenFile } from './private-files.js';
import {
  type BalanceRow,
  type DecisionAction,
  type DecisionRow,
  type Intent,
  type IntentOperation,
  type IntentState,
  type ListingRow,
  type NewPull,
  type OrderRow,
  OWNED_STATUSES,
  type PullRow,
  type PullStatus,
  type SellBackRow,
} from './types.js';

export * from './types.js';

/** A misuse of the ledger (unknown key, reused key, illegal transition): a bug in the caller. */
export class LedgerError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LedgerError';
  }
}

export interface NewIntent {
  key: string;
  account: string;
  operation: IntentOperation;
  /** The request body exactly as it will be sent. */
  body: object;
  /** Scorer's expected value and standard deviation for the whole order (for the luck measure). */
  expectedValueCents?: Cents;
  stdevCents?: Cents;
  /** Price per pack the order was planned at (what evidence-settled orders are booked at). */
  unitPriceCents?: Cents;
}

export interface ConfirmedOrder {
  order: OrderRow;
  pulls: PullRow[];
  /** False when the intent had already been confirmed (a replay): nothing new was recorded. */
  recorded: boolean;
}

export interface SellBackOutcome {
  rows: SellBackRow[];
  /** Payout newly counted by this call: add this, and only this, to the payout metric. */
  newlyPaidCents: Cents;
}

export interface ReportData {
  orders: OrderRow[];
  pulls: PullRow[];
  sellbacks: SellBackRow[];
  listings: ListingRow[];
}

/** The hold decision of a bought card whose purchase the service flagged `needs_review`. */
export const NEEDS_REVIEW_REASON = 'needs_review: the service asks for a manual check of this purchase';

/** What is wrong with a card purchase's answer to its request, or null. */
export function cardAnswerAnomaly(body: Record<string, unknown>, r: CardPurchaseResponse): string | null {
  if (body.card_id !== undefined && r.card_id !== body.card_id)
    return `the service sold card ${r.card_id}, not the ${String(body.card_id)} ordered`;
  const max = typeof body.max_price === 'number' ? toCents(body.max_price) : null;
  if (max !== null && toCents(r.price) > max)
    return `charged ${r.price.toFixed(2)} USD, above the order's max_price ${(max / 100).toFixed(2)}`;
  if (toCents(r.total_charged) !== toCents(r.price) + toCents(r.fee))
    return `total_charged ${r.total_charged} is not price ${r.price} + fee ${r.fee}`;
  return null;
}

const UNRESOLVED: readonly IntentState[] = ['pending', 'sent', 'in_doubt'];

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
  pulled_at AS pulledAt, status, status_at AS statusAt, origin, price_paid_cents AS pricePaidCents`;
const DECISION_COLS = `id, pull_id AS pullId, action, reason, price_cents AS priceCents, decided_at AS decidedAt`;
const SELLBACK_COLS = `id, pull_id AS pullId, card_id AS cardId, account, status, payout_cents AS payoutCents,
  payout_rate AS payoutRate, transaction_id AS transactionId, error, counted, at`;
const LISTING_COLS = `listing_id AS listingId, card_id AS cardId, pull_id AS pullId, account,
  price_cents AS priceCents, state, created_at AS createdAt, repriced_at AS repricedAt,
  delisted_at AS delistedAt, filled_at AS filledAt, proceeds_cents AS proceedsCents`;
const BALANCE_COLS = `id, account, balance_cents AS balanceCents, source, at`;

type Raw = Record<string, unknown>;
const toIntent = (r: Raw): Intent => ({
  ...(r as unknown as Intent),
  body: JSON.parse(r.bodyJson as string),
  delivered: r.delivered === 1,
  keyForgotten: r.keyForgotten === 1,
});
const toOrder = (r: Raw): OrderRow => ({ ...(r as unknown as OrderRow), needsReview: r.needsReview === 1 });
const toPull = (r: Raw): PullRow => ({ ...(r as unknown as PullRow), isChase: r.isChase === 1 });
const toSellBack = (r: Raw): SellBackRow => ({ ...(r as unknown as SellBackRow), counted: r.counted === 1 });
const ms = (isoTime: string): number => Date.parse(isoTime);
const ownedList = OWNED_STATUSES.map((s) => `'${s}'`).join(', ');

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

export class Ledger {
  private readonly stmts: ReturnType<Ledger['prepare']>;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    readonly path: string,
    private readonly clock: Clock,
  ) {
    this.stmts = this.prepare();
  }

  /** Opens (creating the file and its directory if needed) and migrates the ledger at `path`. */
  static open(path: string, options: { clock?: Clock; readonly?: boolean } = {}): Ledger {
    try {
      return Ledger.openUnchecked(path, options);
    } catch (e) {
      // A damaged, read-only or unreachable file is named with what is wrong (exit 2, no stack).
      throw ledgerOpenError(path, e);
    }
  }

  private static openUnchecked(path: string, options: { clock?: Clock; readonly?: boolean }): Ledger {
    const memory = path === ':memory:';
    if (!memory && !options.readonly) {
      // Private books: the directory 0700 when created, the file (and so its WAL and SHM) 0600.
      ensurePrivateDir(dirname(path));
      ensurePrivateFile(path);
      for (const side of ['-wal', '-shm']) tightenFile(`${path}${side}`);
    }
    const db = new Database(path, { readonly: options.readonly ?? false, fileMustExist: !!options.readonly });
    try {
      db.pragma('busy_timeout = 5000');
      db.pragma('foreign_keys = ON');
      if (!options.readonly) {
        if (!memory) db.pragma('journal_mode = WAL');
        // FULL: a commit is fsynced before it returns, so an intent cannot be lost once recorded.
        db.pragma('synchronous = FULL');
        migrate(db);
      }
      return new Ledger(db, path, options.clock ?? new WallClock());
    } catch (e) {
      db.close();
      throw e;
    }
  }

  get isOpen(): boolean {
    return !this.closed && this.db.open;
  }

  /** Journal mode and sync level actually in force (logged at start-up; checked by tests). */
  durability(): { journalMode: string; synchronous: 'off' | 'normal' | 'full' | 'extra' } {
    const sync = this.db.pragma('synchronous', { simple: true }) as number;
    const names = ['off', 'normal', 'full', 'extra'] as const;
    return {
      journalMode: String(this.db.pragma('journal_mode', { simple: true })),
      synchronous: names[sync] ?? 'off',
    };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private prepare() {
    const db = this.db;
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
      markKeyForgotten: db.prepare(
        `UPDATE intents SET key_forgotten = 1, updated_at = @now WHERE key = @key`,
      ),
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
      unresolved: db.prepare(`SELECT ${INTENT_COLS} FROM intents
        WHERE state IN ('pending', 'sent', 'in_doubt') ORDER BY created_at, key`),
      countByState: db.prepare(`SELECT state, COUNT(*) AS n FROM intents GROUP BY state`),
      insertOrder: db.prepare(`INSERT INTO orders (checkout_id, intent_key, account, operation, pack_type,
        category, risk_level, card_id, quantity, total_charged_cents, remaining_balance_cents,
        expected_value_cents, stdev_cents, created_at, price_cents, fee_cents, source, needs_review)
        VALUES (@checkoutId, @intentKey, @account, @operation, @packType, @category, @riskLevel, @cardId,
        @quantity, @totalChargedCents, @remainingBalanceCents, @expectedValueCents, @stdevCents, @createdAt,
        @priceCents, @feeCents, @source, @needsReview)`),
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
      setPullStatus: db.prepare(
        `UPDATE pulls SET status = @status, status_at = @now WHERE pull_id = @pullId`,
      ),
      pullsByStatus: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE status = ?
        ORDER BY buyback_valid_until IS NULL, buyback_valid_until, pulled_at`),
      owned: db.prepare(`SELECT ${PULL_COLS} FROM pulls WHERE status IN (${ownedList}) ORDER BY pulled_at`),
      insertDecision: db.prepare(`INSERT INTO decisions (pull_id, action, reason, price_cents, decided_at)
        VALUES (@pullId, @action, @reason, @priceCents, @now)`),
      decisionsOf: db.prepare(`SELECT ${DECISION_COLS} FROM decisions WHERE pull_id = ? ORDER BY id`),
      countedSale: db.prepare(`SELECT ${SELLBACK_COLS} FROM sellbacks WHERE pull_id = ? AND counted = 1`),
      insertSellBack: db.prepare(`INSERT INTO sellbacks (pull_id, card_id, account, status, payout_cents,
        payout_rate, transaction_id, error, counted, at) VALUES (@pullId, @cardId, @account, @status,
        @payoutCents, @payoutRate, @transactionId, @error, @counted, @now)`),
      getSellBack: db.prepare(`SELECT ${SELLBACK_COLS} FROM sellbacks WHERE id = ?`),
      insertListing: db.prepare(`INSERT INTO listings (listing_id, card_id, pull_id, account, price_cents,
        state, created_at) VALUES (@listingId, @cardId, @pullId, @account, @priceCents, 'active', @now)`),
      getListing: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE listing_id = ?`),
      repriceListing: db.prepare(`UPDATE listings SET price_cents = @priceCents, repriced_at = @now
        WHERE listing_id = @listingId`),
      delistListing: db.prepare(`UPDATE listings SET state = 'delisted', delisted_at = @now
        WHERE listing_id = @listingId`),
      fillListing: db.prepare(`UPDATE listings SET state = 'filled', filled_at = @now,
        proceeds_cents = @proceedsCents WHERE listing_id = @listingId`),
      insertListingEvent: db.prepare(`INSERT INTO listing_events (listing_id, event, price_cents, at)
        VALUES (?, ?, ?, ?)`),
      activeListings: db.prepare(`SELECT ${LISTING_COLS} FROM listings WHERE state = 'active'
        ORDER BY created_at`),
      activeListingForCard: db.prepare(`SELECT ${LISTING_COLS} FROM listings
        WHERE card_id = ? AND state = 'active'`),
      insertBalance: db.prepare(`INSERT INTO balances (account, balance_cents, source, at)
        VALUES (?, ?, ?, ?)`),
      latestBalance: db.prepare(`SELECT ${BALANCE_COLS} FROM balances WHERE account = ?
        ORDER BY at DESC, id DESC LIMIT 1`),
      flowsAfter: db.prepare(`SELECT
        (SELECT COALESCE(SUM(payout_cents), 0) FROM sellbacks
          WHERE account = @account AND counted = 1 AND at > @at) AS payouts,
        (SELECT COALESCE(SUM(proceeds_cents), 0) FROM listings
          WHERE account = @account AND state = 'filled' AND filled_at > @at) AS proceeds,
        (SELECT COALESCE(SUM(total_charged_cents), 0) FROM orders
          WHERE account = @account AND created_at > @at) AS charged`),
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
    };
  }

  /**
   * Runs `fn` in an IMMEDIATE transaction: the write lock is taken at BEGIN, so a transaction never
   * reads under a shared lock and then fails to upgrade (SQLITE_BUSY mid-way) when another
   * connection writes.
   */
  private tx<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  private now(at?: number): number {
    return at ?? this.clock.now();
  }

  // ---------------------------------------------------------------- intents

  /**
   * Persists a purchase intent (state `pending`) and returns it. Call before the request leaves.
   * Recording the same key with the same body again returns the stored intent; a different body
   * under a known key is refused (the service would answer 422 IDEMPOTENCY_KEY_REUSED).
   */
  recordIntent(input: NewIntent, at?: number): Intent {
    if (!IDEMPOTENCY_KEY_RE.test(input.key))
      throw new LedgerError(`idempotency key must be 8 to 128 characters of A-Za-z0-9_-`);
    const bodyJson = JSON.stringify(input.body);
    const existing = this.getIntent(input.key);
    if (existing) {
      if (
        existing.bodyJson !== bodyJson ||
        existing.account !== input.account ||
        existing.operation !== input.operation
      )
        throw new LedgerError(`intent ${input.key} already recorded with a different body`);
      return existing;
    }
    this.stmts.insertIntent.run({
      key: input.key,
      account: input.account,
      operation: input.operation,
      body: bodyJson,
      ev: input.expectedValueCents ?? null,
      sd: input.stdevCents ?? null,
      price: input.unitPriceCents ?? null,
      now: this.now(at),
    });
    return this.getIntent(input.key)!;
  }

  getIntent(key: string): Intent | undefined {
    const row = this.stmts.getIntent.get(key) as Raw | undefined;
    return row ? toIntent(row) : undefined;
  }

  private requireIntent(key: string): Intent {
    const intent = this.getIntent(key);
    if (!intent) throw new LedgerError(`unknown intent ${key}`);
    return intent;
  }

  /** Records one more attempt: call right before each send (first or retry, same key and body). */
  markIntentSent(key: string, at?: number): Intent {
    const intent = this.requireIntent(key);
    if (intent.state === 'confirmed') throw new LedgerError(`intent ${key} is already confirmed`);
    this.stmts.markSent.run({ key, now: this.now(at) });
    return this.requireIntent(key);
  }

  /**
   * Records the service's answer: the intent becomes `confirmed` and the order, its pulls and the
   * reported balance are written in ONE transaction. A second confirmation (a replayed response) is
   * a no-op returning what is stored, so nothing is ever counted twice.
   */
  confirmIntent(
    key: string,
    response: PackPurchaseResponse | CardPurchaseResponse,
    at?: number,
  ): ConfirmedOrder {
    const now = this.now(at);
    return this.tx((): ConfirmedOrder => {
      const intent = this.requireIntent(key);
      if (intent.state === 'confirmed') return this.storedOrder(key);
      const body = intent.body;
      const pack = intent.operation === 'pack' ? (response as PackPurchaseResponse) : undefined;
      const card = intent.operation === 'card' ? (response as CardPurchaseResponse) : undefined;
      const order: OrderRow = {
        checkoutId: response.checkout_id,
        intentKey: key,
        account: intent.account,
        operation: intent.operation,
        packType: pack ? String(body.pack_type ?? pack.pack_type) : null,
        category: pack ? String(body.category ?? 'pokemon') : String(card?.item.category ?? 'unknown'),
        riskLevel: pack ? String(body.risk_level ?? 'standard') : null,
        cardId: card ? card.card_id : null,
        quantity: pack ? pack.quantity : 1,
        totalChargedCents: toCents(response.total_charged),
        remainingBalanceCents: toCents(response.remaining_balance),
        expectedValueCents: intent.expectedValueCents,
        stdevCents: intent.stdevCents,
        createdAt: now,
        priceCents: card ? toCents(card.price) : null,
        feeCents: card ? toCents(card.fee) : null,
        source: card ? card.source : null,
        needsReview: card?.needs_review === true,
      };
      // A sale that breaks the order it answers (another card, above max_price, a total that is
      // not price + fee) is booked as charged — money moved — and held for review like needs_review.
      const anomaly = card ? cardAnswerAnomaly(body, card) : null;
      if (anomaly) order.needsReview = true;
      if (card) {
        const held = boughtCardPull(boughtCardFromResponse(card, now));
        this.insertOrder(order, [held]);
        if (order.needsReview) {
          // The sale went through but the service asks for a manual check: the card is held (not
          // listed or sold) until an operator releases it, decided in the same transaction.
          this.stmts.insertDecision.run({
            pullId: held.pullId,
            action: 'hold',
            reason: anomaly ? `held for review: ${anomaly}` : NEEDS_REVIEW_REASON,
            priceCents: null,
            now,
          });
          this.stmts.setPullStatus.run({ pullId: held.pullId, status: 'held', now });
        }
        this.stmts.insertBalance.run(intent.account, order.remainingBalanceCents, 'card purchase', now);
        this.stmts.confirmIntent.run({ key, response: JSON.stringify(response), now, settledBy: null });
        return { order, pulls: this.pullsOfOrder(order.checkoutId), recorded: true };
      }
      const pulls = (pack?.pulls ?? []).map((p): NewPull => {
        const bb = p.kind === 'card' ? p.buyback : null;
        return {
          pullId: p.pull_id,
          cardId: p.item.id,
          name: p.item.name,
          kind: p.kind,
          valueCents: toCents(p.value),
          bucket: p.hit.bucket,
          rarityTier: p.hit.rarity_tier,
          isChase: p.hit.is_chase,
          buybackCents: bb ? toCents(bb.amount) : null,
          buybackRate: bb ? bb.rate : null,
          buybackValidUntil: bb ? ms(bb.valid_until) : null,
          afterCents: bb ? toCents(bb.after.amount) : null,
          afterRate: bb ? bb.after.rate : null,
          afterValidUntil: bb ? ms(bb.after.valid_until) : null,
          pulledAt: now,
        };
      });
      this.insertOrder(order, pulls);
      this.stmts.insertBalance.run(intent.account, order.remainingBalanceCents, 'purchase', now);
      this.stmts.confirmIntent.run({ key, response: JSON.stringify(response), now, settledBy: null });
      return { order, pulls: this.pullsOfOrder(order.checkoutId), recorded: true };
    });
  }

  /**
   * Settles an intent as charged without the service's answer (evidence, or an operator): the order
   * is booked at the planned price with the pulls found for it (vault entries), under the checkout
   * id `settled:<key>`. Pulls found later are added with `adoptPulls`.
   */
  confirmBySettlement(
    key: string,
    s: {
      quantity: number;
      totalChargedCents: Cents;
      pulls: readonly NewPull[];
      by: string;
      /** A card order: the price and fee it is booked at. */
      card?: { priceCents: Cents; feeCents: Cents };
    },
    at?: number,
  ): ConfirmedOrder {
    const now = this.now(at);
    return this.tx((): ConfirmedOrder => {
      const intent = this.requireIntent(key);
      if (intent.state === 'confirmed') return this.storedOrder(key);
      const body = intent.body;
      const last = this.latestBalance(intent.account);
      const order: OrderRow = {
        checkoutId: `settled:${key}`,
        intentKey: key,
        account: intent.account,
        operation: intent.operation,
        packType: body.pack_type === undefined ? null : String(body.pack_type),
        category: String(body.category ?? 'pokemon'),
        riskLevel: intent.operation === 'pack' ? String(body.risk_level ?? 'standard') : null,
        cardId: body.card_id === undefined ? null : String(body.card_id),
        quantity: s.quantity,
        totalChargedCents: s.totalChargedCents,
        // Not reported by the service: the last balance seen, less the charge.
        remainingBalanceCents: (last?.balanceCents ?? 0) - s.totalChargedCents,
        expectedValueCents: intent.expectedValueCents,
        stdevCents: intent.stdevCents,
        createdAt: now,
        priceCents: s.card ? s.card.priceCents : null,
        feeCents: s.card ? s.card.feeCents : null,
        source: s.card ? 'unknown' : null,
        needsReview: false,
      };
      this.insertOrder(order, s.pulls);
      this.stmts.confirmIntent.run({ key, response: null, now, settledBy: s.by });
      return { order, pulls: this.pullsOfOrder(order.checkoutId), recorded: true };
    });
  }

  /**
   * A second charge of one intent (a service that forgot the key ran a re-send as a new order),
   * found by its pulls: booked as its own order under the intent key `<key>-x<n>`, so the ledger
   * holds every charge the service made and the pulls are sold like any other.
   */
  bookExtraCharge(key: string, pulls: readonly NewPull[], by: string, at?: number): ConfirmedOrder {
    const now = this.now(at);
    return this.tx(() => {
      const intent = this.requireIntent(key);
      let n = 1;
      while (this.getIntent(`${key}-x${n}`)) n++;
      const extra = `${key}-x${n}`;
      this.stmts.insertIntent.run({
        key: extra,
        account: intent.account,
        operation: intent.operation,
        body: intent.bodyJson,
        ev: intent.expectedValueCents,
        sd: intent.stdevCents,
        price: intent.unitPriceCents,
        now,
      });
      const quantity = Math.max(pulls.length, Number(intent.body.quantity ?? 1));
      return this.confirmBySettlement(
        extra,
        { quantity, totalChargedCents: (intent.unitPriceCents ?? 0) * quantity, pulls, by },
        now,
      );
    });
  }

  /**
   * Cards in the vault that came from no order of ours (the owner opened them in the app), taken
   * over on the config's request: booked as pulls of a zero-cost holder order per account and
   * category (`foreign:<account>:<category>`), so the strategy sells or lists them like any pull.
   */
  adoptForeign(account: string, category: string, pulls: readonly NewPull[], at?: number): PullRow[] {
    const now = this.now(at);
    return this.tx(() => {
      const checkoutId = `foreign:${account}:${category}`;
      if (!this.stmts.orderByCheckout.get(checkoutId)) {
        const key = `foreign_${account}_${category}`;
        this.stmts.insertIntent.run({
          key,
          account,
          operation: 'pack',
          body: JSON.stringify({ category, foreign: true }),
          ev: null,
          sd: null,
          price: 0,
          now,
        });
        this.stmts.confirmIntent.run({ key, response: null, now, settledBy: 'foreign cards adopted' });
        this.stmts.insertOrder.run({
          checkoutId,
          intentKey: key,
          account,
          operation: 'pack',
          packType: 'foreign',
          category,
          riskLevel: null,
          cardId: null,
          quantity: 0,
          totalChargedCents: 0,
          remainingBalanceCents: this.latestBalance(account)?.balanceCents ?? 0,
          expectedValueCents: null,
          stdevCents: null,
          createdAt: now,
          priceCents: null,
          feeCents: null,
          source: null,
          needsReview: 0,
        });
      }
      return this.adoptPulls(checkoutId, pulls);
    });
  }

  /** Adds pulls found in the vault to an order already booked (a settled order's late pulls). */
  adoptPulls(checkoutId: string, pulls: readonly NewPull[]): PullRow[] {
    return this.tx(() => {
      const raw = this.stmts.orderByCheckout.get(checkoutId) as Raw | undefined;
      if (!raw) throw new LedgerError(`unknown order ${checkoutId}`);
      const order = toOrder(raw);
      const fresh = pulls.filter((p) => !this.getPull(p.pullId));
      this.insertPulls(order, fresh);
      return fresh.map((p) => this.getPull(p.pullId)!);
    });
  }

  private storedOrder(key: string): ConfirmedOrder {
    const order = toOrder(this.stmts.orderByIntent.get(key) as Raw);
    return { order, pulls: this.pullsOfOrder(order.checkoutId), recorded: false };
  }

  private insertOrder(order: OrderRow, pulls: readonly NewPull[]): void {
    this.stmts.insertOrder.run({ ...order, needsReview: order.needsReview ? 1 : 0 });
    this.insertPulls(order, pulls);
  }

  private insertPulls(order: OrderRow, pulls: readonly NewPull[]): void {
    for (const p of pulls)
      this.stmts.insertPull.run({
        ...p,
        checkoutId: order.checkoutId,
        account: order.account,
        isChase: p.isChase ? 1 : 0,
        origin: p.origin ?? 'pack',
        pricePaidCents: p.pricePaidCents ?? null,
        // Sealed packs cannot be sold back: they are holdings from the start.
        status: p.kind === 'sealed_pack' ? 'held' : 'open',
      });
  }

  /**
   * The service refused or refunded the order (nothing charged): state `failed`. An intent that may
   * have reached the service is closed only with `settledBy` (evidence or an operator said so): no
   * later refusal of a re-send proves the first attempt was not charged.
   */
  failIntent(key: string, code: string, message = '', at?: number, settledBy?: string): Intent {
    const intent = this.requireIntent(key);
    if (intent.delivered && settledBy === undefined)
      throw new LedgerError(`intent ${key} may have been charged; only evidence or an operator closes it`);
    return this.setIntentState(key, 'failed', code, message, at, settledBy);
  }

  /** The request may have reached the service: resolved by evidence or by re-sending the same key. */
  markInDoubt(key: string, code = 'IN_DOUBT', message = '', at?: number): Intent {
    return this.setIntentState(key, 'in_doubt', code, message, at);
  }

  /** A re-send was answered as a new order would be: never re-send this key blind again. */
  markKeyForgotten(key: string, at?: number): Intent {
    this.requireIntent(key);
    this.stmts.markKeyForgotten.run({ key, now: this.now(at) });
    return this.requireIntent(key);
  }

  /** Evidence cannot settle it: parked for an operator; it blocks new orders of its account. */
  parkIntent(key: string, code: string, message: string, at?: number): Intent {
    const intent = this.requireIntent(key);
    if (intent.state !== 'in_doubt') throw new LedgerError(`intent ${key} is ${intent.state}, not in doubt`);
    this.stmts.park.run({ key, code, message, now: this.now(at) });
    return this.requireIntent(key);
  }

  private setIntentState(
    key: string,
    state: IntentState,
    code: string,
    message: string,
    at?: number,
    settledBy?: string,
  ) {
    const intent = this.requireIntent(key);
    if (intent.state === 'confirmed')
      throw new LedgerError(`intent ${key} is confirmed; it cannot become ${state}`);
    this.stmts.setIntentState.run({
      key,
      state,
      code,
      message,
      now: this.now(at),
      delivered: state === 'in_doubt' ? 1 : 0,
      settledBy: settledBy ?? null,
    });
    return this.requireIntent(key);
  }

  /** The newest intents first (for `packbot orders`). */
  recentIntents(limit = 1000): Intent[] {
    return (this.stmts.intentsByCreation.all({ limit }) as Raw[]).map(toIntent);
  }

  /** Orders of `account` booked in [from, to] (ms). */
  ordersBetween(account: string, from: number, to: number): OrderRow[] {
    return (this.stmts.ordersBetween.all(account, from, to) as Raw[]).map(toOrder);
  }

  /** Packs of confirmed orders of `account` booked at or after `since` (ms). */
  packsOrderedSince(account: string, since: number): number {
    return (this.stmts.packsOrderedSince.get(account, since) as { n: number }).n;
  }

  /** A fact learnt about an account from the service (e.g. its purchase report `user_id`). */
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

  accountFact(account: string, fact: string): string | undefined {
    return (this.stmts.getFact.get(account, fact) as { value: string } | undefined)?.value;
  }

  setAccountFact(account: string, fact: string, value: string, at?: number): void {
    this.stmts.setFact.run({ account, fact, value, now: this.now(at) });
  }

  /**
   * Intents whose outcome is unknown (`pending`, `sent`, `in_doubt`), oldest first. At start-up each
   * must be re-sent with its stored key and exact body; the service replays a finished order.
   */
  unresolvedIntents(account?: string): Intent[] {
    const all = (this.stmts.unresolved.all() as Raw[]).map(toIntent);
    return account === undefined ? all : all.filter((i) => i.account === account);
  }

  intentCounts(): Record<IntentState, number> {
    const out: Record<IntentState, number> = { pending: 0, sent: 0, confirmed: 0, failed: 0, in_doubt: 0 };
    for (const r of this.stmts.countByState.all() as { state: IntentState; n: number }[]) out[r.state] = r.n;
    return out;
  }

  /** Count for the `orders_in_doubt` gauge: every intent not known to be confirmed or failed. */
  unresolvedCount(): number {
    const c = this.intentCounts();
    return UNRESOLVED.reduce((n, s) => n + c[s], 0);
  }

  orderForIntent(key: string): OrderRow | undefined {
    const r = this.stmts.orderByIntent.get(key) as Raw | undefined;
    return r ? toOrder(r) : undefined;
  }

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
    const rows = (this.stmts.pullsByStatus.all(status) as Raw[]).map(toPull);
    return account === undefined ? rows : rows.filter((p) => p.account === account);
  }

  /** Everything still ours: open, pending a sale or listing, listed, or held (sealed packs too). */
  holdings(account?: string): PullRow[] {
    const rows = (this.stmts.owned.all() as Raw[]).map(toPull);
    return account === undefined ? rows : rows.filter((p) => p.account === account);
  }

  /**
   * Records a decision and moves the pull accordingly: sell_back → sell_pending, list → list_pending,
   * hold → held. reprice/delist are recorded against a listed pull; the listing calls move it.
   */
  recordDecision(
    d: { pullId: string; action: DecisionAction; reason: string; priceCents?: Cents },
    at?: number,
  ): DecisionRow {
    const now = this.now(at);
    return this.tx(() => {
      const pull = this.getPull(d.pullId);
      if (!pull) throw new LedgerError(`unknown pull ${d.pullId}`);
      const info = this.stmts.insertDecision.run({
        pullId: d.pullId,
        action: d.action,
        reason: d.reason,
        priceCents: d.priceCents ?? null,
        now,
      });
      const next: Partial<Record<DecisionAction, PullStatus>> = {
        sell_back: 'sell_pending',
        list: 'list_pending',
        hold: 'held',
      };
      const to = next[d.action];
      if (to && OWNED_STATUSES.includes(pull.status))
        this.stmts.setPullStatus.run({ pullId: d.pullId, status: to, now });
      return {
        id: Number(info.lastInsertRowid),
        pullId: d.pullId,
        action: d.action,
        reason: d.reason,
        priceCents: d.priceCents ?? null,
        decidedAt: now,
      };
    });
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

  /** The listing sold: proceeds are what the account was credited (cents); its pull is `sold`. */
  recordListingFill(listingId: string, proceedsCents: Cents, at?: number): ListingRow {
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
    const rows = this.stmts.activeListings.all() as ListingRow[];
    return account === undefined ? rows : rows.filter((l) => l.account === account);
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

  private ownedPullByCard(cardId: string): PullRow | undefined {
    const r = this.stmts.ownedPullByCard.get(cardId) as Raw | undefined;
    return r ? toPull(r) : undefined;
  }

  // ---------------------------------------------------------------- balances

  /** A balance the service reported (`account`, `sell-back`, `purchase`, `reconcile`, ...). */
  recordBalance(account: string, balanceCents: Cents, source: string, at?: number): BalanceRow {
    const now = this.now(at);
    const info = this.stmts.insertBalance.run(account, balanceCents, source, now);
    return { id: Number(info.lastInsertRowid), account, balanceCents, source, at: now };
  }

  latestBalance(account: string): BalanceRow | undefined {
    return this.stmts.latestBalance.get(account) as BalanceRow | undefined;
  }

  /**
   * The balance the ledger expects now: the last reported balance plus what was credited and minus
   * what was charged after it (for the reconciler's drift). Undefined before any observation.
   * Flows recorded in the same millisecond as the observation are assumed to be included in it.
   */
  expectedBalance(account: string): Cents | undefined {
    const last = this.latestBalance(account);
    if (!last) return undefined;
    const f = this.stmts.flowsAfter.get({ account, at: last.at }) as {
      payouts: number;
      proceeds: number;
      charged: number;
    };
    return last.balanceCents + f.payouts + f.proceeds - f.charged;
  }

  // ---------------------------------------------------------------- dashboard reads

  /** The schema version the file is at (`PRAGMA user_version`; `packbot doctor`). */
  schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  /**
   * Pulls newest first, each with `seq` (its insertion order: the read API's events stream sends
   * the pulls after the last `seq` it sent). `afterSeq` keeps only pulls inserted after it.
   */
  recentPulls(limit: number, afterSeq = 0): (PullRow & { seq: number })[] {
    const rows = this.db
      .prepare(`SELECT rowid AS seq, ${PULL_COLS} FROM pulls WHERE rowid > ? ORDER BY rowid DESC LIMIT ?`)
      .all(afterSeq, limit) as Raw[];
    return rows.map((r) => ({ ...toPull(r), seq: r.seq as number }));
  }

  /** Every balance the service reported for `account` at or after `since`, oldest first. */
  balanceHistory(account: string, since = 0): BalanceRow[] {
    return this.db
      .prepare(`SELECT ${BALANCE_COLS} FROM balances WHERE account = ? AND at >= ? ORDER BY at, id`)
      .all(account, since) as BalanceRow[];
  }

  /**
   * The account's cash flows, oldest first: charges (negative), counted sell-back payouts and
   * listing proceeds (positive). Their running sum is the realised net P&L over time.
   */
  cashFlows(account: string): { at: number; cents: Cents }[] {
    return this.db
      .prepare(`SELECT at, cents FROM (
          SELECT created_at AS at, -total_charged_cents AS cents FROM orders WHERE account = @account
          UNION ALL SELECT at, payout_cents FROM sellbacks WHERE account = @account AND counted = 1
          UNION ALL SELECT filled_at, proceeds_cents FROM listings
            WHERE account = @account AND state = 'filled') ORDER BY at`)
      .all({ account }) as { at: number; cents: Cents }[];
  }

  /**
   * Every listing with the value of its card at the pull, its prices over time (created and
   * repriced events) and how it ended: what calibrating the fill law needs.
   */
  listingHistories(): ListingHistoryRow[] {
    const rows = this.db
      .prepare(
        `SELECT l.listing_id, l.state, l.created_at, l.delisted_at, l.filled_at, p.value_cents
         FROM listings l LEFT JOIN pulls p ON p.pull_id = l.pull_id ORDER BY l.created_at`,
      )
      .all() as Omit<ListingHistoryRow, 'prices'>[];
    const events = this.db.prepare(
      `SELECT price_cents, at FROM listing_events
       WHERE listing_id = ? AND event IN ('created', 'repriced') AND price_cents IS NOT NULL ORDER BY at, id`,
    );
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
    return this.db
      .prepare(`SELECT ${LISTING_COLS} FROM listings WHERE pull_id = ? ORDER BY created_at DESC LIMIT 1`)
      .get(pullId) as ListingRow | undefined;
  }

  /** The intent an order came from (its stored response carries the cards' images and grades). */
  intentOfOrder(checkoutId: string): Intent | undefined {
    const r = this.stmts.orderByCheckout.get(checkoutId) as Raw | undefined;
    const o = r ? toOrder(r) : undefined;
    return o ? this.getIntent(o.intentKey) : undefined;
  }

  /** Intents changed after `since` (ms), newest first. */
  intentsUpdatedSince(since: number, limit = 100): Intent[] {
    return (
      this.db
        .prepare(`SELECT ${INTENT_COLS} FROM intents WHERE updated_at > ? ORDER BY updated_at DESC LIMIT ?`)
        .all(since, limit) as Raw[]
    ).map(toIntent);
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
   * `until` and their listings (pure computation in `report.ts`).
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
