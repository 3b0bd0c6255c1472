/**
 * Purchase intents and their state machine (docs/ledger.md): recorded before the request leaves,
 * marked sent on each attempt, then confirmed by the service's answer, settled by evidence or an
 * operator, failed, or left in doubt and parked. Confirming books the order with its pulls (and the
 * balance reported with it) in one transaction; extra charges and foreign cards are booked here too.
 */
import type { CardPurchaseResponse, PackPurchaseResponse } from '../api/schemas.js';
import { IDEMPOTENCY_KEY_RE } from '../api/schemas.js';
import { type Cents, toCents } from '../core/money.js';
import type { Accounts } from './accounts.js';
import type { Books } from './books.js';
import { boughtCardFromResponse, boughtCardPull } from './bought-card.js';
import { type LedgerConnection, LedgerError, LedgerPart } from './ledger-part.js';
import { insertOrderModel, type OrderModelInput } from './model-store.js';
import {
  type ChargeAtBound,
  cardIdOf,
  categoryOf,
  chargeAtBound,
  isUnsettled,
  packTypeOf,
  quantityOf,
  riskLevelOf,
} from './order-facts.js';
import type { Holdings } from './pull-ledger.js';
import { type Raw, toIntent, toOrder } from './statements.js';
import type { Intent, IntentOperation, IntentState, NewPull, OrderRow, PullRow } from './types.js';

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
  /** The model's promise for a pack order (expected vs realized), written with the intent. */
  model?: OrderModelInput;
}

export interface ConfirmedOrder {
  order: OrderRow;
  pulls: PullRow[];
  /** False when the intent had already been confirmed (a replay): nothing new was recorded. */
  recorded: boolean;
}

/**
 * How an intent settled without the service's answer is booked (`confirmBySettlement`): at its
 * bound (order-facts.ts `chargeAtBound`), with the pulls found for it.
 */
export interface Settlement extends ChargeAtBound {
  pulls: readonly NewPull[];
  by: string;
}

/** The hold decision of a bought card whose purchase the service flagged `needs_review`. */
export const NEEDS_REVIEW_REASON = 'needs_review: the service asks for a manual check of this purchase';

const ms = (isoTime: string): number => Date.parse(isoTime);

export class Intents extends LedgerPart {
  constructor(
    c: LedgerConnection,
    private readonly holdings: Holdings,
    private readonly accounts: Accounts,
    private readonly books: Books,
  ) {
    super(c);
  }

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
    const now = this.now(at);
    this.tx(() => {
      this.stmts.insertIntent.run({
        key: input.key,
        account: input.account,
        operation: input.operation,
        body: bodyJson,
        ev: input.expectedValueCents ?? null,
        sd: input.stdevCents ?? null,
        price: input.unitPriceCents ?? null,
        now,
      });
      if (input.model) insertOrderModel(this.db, input.key, input.account, input.model, now);
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
   * a no-op returning what is stored, so nothing is ever counted twice. `anomaly` is the caller's
   * verdict on a card answer (what breaks the order it answers, or null: src/bot/spending/card-answer.ts).
   */
  confirmIntent(
    key: string,
    response: PackPurchaseResponse | CardPurchaseResponse,
    at?: number,
    anomaly: string | null = null,
  ): ConfirmedOrder {
    const now = this.now(at);
    return this.tx((): ConfirmedOrder => {
      const intent = this.requireIntent(key);
      if (intent.state === 'confirmed') return this.storedOrder(key);
      const pack = intent.operation === 'pack' ? (response as PackPurchaseResponse) : undefined;
      const card = intent.operation === 'card' ? (response as CardPurchaseResponse) : undefined;
      const order: OrderRow = {
        checkoutId: response.checkout_id,
        intentKey: key,
        account: intent.account,
        operation: intent.operation,
        packType: pack ? (packTypeOf(intent) ?? pack.pack_type) : null,
        category: pack ? categoryOf(intent) : String(card?.item.category ?? 'unknown'),
        riskLevel: riskLevelOf(intent),
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
      if (card && anomaly) order.needsReview = true;
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
        this.observeAnswer(intent, response, order.remainingBalanceCents, 'card purchase', now);
        this.stmts.confirmIntent.run({ key, response: JSON.stringify(response), now, settledBy: null });
        return { order, pulls: this.holdings.pullsOfOrder(order.checkoutId), recorded: true };
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
      const rows = this.insertOrder(order, pulls);
      this.observeAnswer(intent, response, order.remainingBalanceCents, 'purchase', now);
      this.stmts.confirmIntent.run({ key, response: JSON.stringify(response), now, settledBy: null });
      return { order, pulls: rows, recorded: true };
    });
  }

  /**
   * A purchase's answer reports the balance it left: a reading for the books (books.ts), unless it
   * is a replay (the balance of the first answer) or another purchase may be in it.
   */
  private observeAnswer(
    intent: Intent,
    response: PackPurchaseResponse | CardPurchaseResponse,
    remainingCents: number,
    source: string,
    now: number,
  ): void {
    if (response.idempotent_replay === true) return;
    if (!this.books.quietSince(intent.account, intent.lastSentAt ?? now, intent.key)) return;
    this.books.observe(intent.account, remainingCents, source, null, now);
  }

  /**
   * Settles an intent as charged without the service's answer (evidence, or an operator): the order
   * is booked at the planned price with the pulls found for it (vault entries), under the checkout
   * id `settled:<key>`. Pulls found later are added with `adoptPulls`.
   */
  confirmBySettlement(key: string, s: Settlement, at?: number): ConfirmedOrder {
    const now = this.now(at);
    return this.tx((): ConfirmedOrder => {
      const intent = this.requireIntent(key);
      if (intent.state === 'confirmed') return this.storedOrder(key);
      const last = this.accounts.latestBalance(intent.account);
      const order: OrderRow = {
        checkoutId: `settled:${key}`,
        intentKey: key,
        account: intent.account,
        operation: intent.operation,
        packType: packTypeOf(intent),
        category: categoryOf(intent),
        riskLevel: riskLevelOf(intent),
        cardId: cardIdOf(intent),
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
      return { order, pulls: this.holdings.pullsOfOrder(order.checkoutId), recorded: true };
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
      const quantity = Math.max(pulls.length, quantityOf(intent));
      return this.confirmBySettlement(extra, { ...chargeAtBound(intent, quantity), pulls, by }, now);
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
          remainingBalanceCents: this.accounts.latestBalance(account)?.balanceCents ?? 0,
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
      const fresh = pulls.filter((p) => !this.holdings.getPull(p.pullId));
      this.insertPulls(order, fresh);
      return fresh.map((p) => this.holdings.getPull(p.pullId)!);
    });
  }

  private storedOrder(key: string): ConfirmedOrder {
    const order = toOrder(this.stmts.orderByIntent.get(key) as Raw);
    return { order, pulls: this.holdings.pullsOfOrder(order.checkoutId), recorded: false };
  }

  /** Inserts the order and its pulls; returns the pulls as the ledger now holds them (no re-read). */
  private insertOrder(order: OrderRow, pulls: readonly NewPull[]): PullRow[] {
    this.stmts.insertOrder.run({ ...order, needsReview: order.needsReview ? 1 : 0 });
    return this.insertPulls(order, pulls);
  }

  private insertPulls(order: OrderRow, pulls: readonly NewPull[]): PullRow[] {
    return pulls.map((p): PullRow => {
      // Field by field, as the ledger's columns give them back (`toPull`): nothing else a caller's
      // object carries.
      const row: PullRow = {
        pullId: p.pullId,
        checkoutId: order.checkoutId,
        account: order.account,
        cardId: p.cardId,
        name: p.name,
        kind: p.kind,
        valueCents: p.valueCents,
        bucket: p.bucket,
        rarityTier: p.rarityTier,
        isChase: p.isChase,
        buybackCents: p.buybackCents,
        buybackRate: p.buybackRate,
        buybackValidUntil: p.buybackValidUntil,
        afterCents: p.afterCents,
        afterRate: p.afterRate,
        afterValidUntil: p.afterValidUntil,
        pulledAt: p.pulledAt,
        origin: p.origin ?? 'pack',
        pricePaidCents: p.pricePaidCents ?? null,
        // Sealed packs cannot be sold back: they are holdings from the start.
        status: p.kind === 'sealed_pack' ? 'held' : 'open',
        statusAt: p.pulledAt,
        sellPullId: null,
      };
      this.stmts.insertPull.run({ ...row, isChase: p.isChase ? 1 : 0 });
      return row;
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

  /**
   * The request may have reached the service: settled by evidence (src/bot/doubt/in-doubt.ts), never by a
   * blind re-send. A pack order is never re-sent; a card order's key only once its card is in our vault.
   */
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

  /**
   * The unsettled intents (order-facts.ts `UNSETTLED_STATES`: `pending`, `sent`, `in_doubt`), oldest
   * first. Which of them are in doubt or parked, order-facts.ts says (`isInDoubt`, `isParked`).
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

  /** How many intents are unsettled (order-facts.ts `isUnsettled`), every account's. */
  unresolvedCount(): number {
    const c = this.intentCounts();
    return (Object.keys(c) as IntentState[]).reduce((n, s) => n + (isUnsettled({ state: s }) ? c[s] : 0), 0);
  }

  orderForIntent(key: string): OrderRow | undefined {
    const r = this.stmts.orderByIntent.get(key) as Raw | undefined;
    return r ? toOrder(r) : undefined;
  }
}
