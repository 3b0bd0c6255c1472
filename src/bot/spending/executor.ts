/**
 * The purchase executor: the only code that spends money. Each order is an intent written to the
 * ledger (key + exact body) before anything leaves; the state then moves
 * pending → sent → confirmed | failed | in_doubt, and every re-send uses the stored key and body.
 *
 * How the answer's error class maps to the intent on its FIRST send:
 * - rejected (400, 429 daily, refunded 500) and 429 RATE_LIMITED: nothing was charged → failed;
 * - anything that may have reached the service (transport, 5xx, 409 in progress, an invalid
 *   response body): → in_doubt, settled by evidence (in-doubt.ts), never by hope;
 * - invalid-data on the request (refused before IO) → failed;
 * - fatal (401, 403, 422 key reused): → failed, and the caller stops opening.
 * Once an intent is in doubt (`delivered`), no refusal of a re-send closes it: a service that forgot
 * the key refuses a replay as it would a new order. The refusal marks the key as not recognised
 * (no blind re-send again) and the intent stays in doubt.
 */
import {
  isPartnerApiError,
  type PartnerApiError,
  RateLimitedError,
  RequestValidationError,
  TransportError,
} from '../../api/errors.js';
import type { PartnerApi } from '../../api/partner-api.js';
import type {
  CardPurchaseRequest,
  CardPurchaseResponse,
  PackPurchaseRequest,
  PackPurchaseResponse,
} from '../../api/schemas.js';
import type { Cents } from '../../core/money.js';
import type { Logger } from '../../obs/logger.js';
import { NO_NOTIFIER, type Notifier } from '../../obs/notify/event.js';
import type { ConfirmedOrder, Intent, Ledger } from '../../store/ledger.js';
import type { OrderModelInput } from '../../store/model-store.js';
import type { IntentOperation } from '../../store/types.js';
import { newIdempotencyKey } from '../common/keys.js';
import * as notices from '../common/notices.js';
import { cardAnswerAnomaly } from './card-answer.js';

export type PurchaseOutcome =
  | {
      status: 'confirmed';
      intent: Intent;
      confirmed: ConfirmedOrder;
      response: PackPurchaseResponse | CardPurchaseResponse;
    }
  | { status: 'failed'; intent: Intent; error: PartnerApiError }
  | { status: 'in_doubt'; intent: Intent; error: PartnerApiError };

export interface PurchasePlan {
  body: PackPurchaseRequest;
  expectedValueCents?: Cents;
  stdevCents?: Cents;
  /** Price per pack planned (the larger of any two prices seen): what a settled order is booked at. */
  unitPriceCents?: Cents;
  /** The model's promise (expected vs realized), written with the intent. */
  model?: OrderModelInput;
}

export interface CardPurchasePlan {
  body: CardPurchaseRequest;
  /** The `max_price` of the body, in cents. */
  maxPriceCents: Cents;
  /** What the strategy's exit is expected to realize for the card. */
  expectedValueCents?: Cents;
}

/** Points where a test can simulate a crash (the process dying at that instant). */
export type CrashPoint = 'after_intent' | 'before_send' | 'after_answer';

export interface ExecutorOptions {
  account: string;
  api: PartnerApi;
  ledger: Ledger;
  log: Logger;
  /** Test hook: throw here (or die) to model a process killed at that point. */
  crashAt?: (point: CrashPoint, key: string, operation: IntentOperation) => void;
  /** Told of every order booked, refused or put in doubt (order_confirmed, order_failed, …). */
  notifier?: Notifier;
  /**
   * Runs INSIDE the transaction that books a newly confirmed order (the sell side decides its
   * pulls there: one commit). Its writes roll back alone if it throws; the booking stands.
   */
  decideBooked?: (confirmed: ConfirmedOrder) => void;
}

export class PurchaseExecutor {
  private readonly notifier: Notifier;
  /** Keys whose request this process has on the wire (sent, answer not yet recorded). */
  private readonly onTheWire = new Set<string>();
  constructor(private readonly o: ExecutorOptions) {
    this.notifier = o.notifier ?? NO_NOTIFIER;
  }

  /** Records a new intent, then sends it. */
  async open(plan: PurchasePlan): Promise<PurchaseOutcome> {
    return this.recordAndSend('pack', plan.body, {
      expectedValueCents: plan.expectedValueCents,
      stdevCents: plan.stdevCents,
      unitPriceCents: plan.unitPriceCents,
      model: plan.model,
    });
  }

  /**
   * Records a card purchase intent (`max_price` already the most the strategy pays), then sends it.
   * `unitPriceCents` is that max price: what an order settled by evidence is booked at.
   */
  async buyCard(plan: CardPurchasePlan): Promise<PurchaseOutcome> {
    return this.recordAndSend('card', plan.body, {
      expectedValueCents: plan.expectedValueCents,
      unitPriceCents: plan.maxPriceCents,
    });
  }

  /** The intent (new key, exact body) is in the ledger before anything leaves. */
  private recordAndSend(
    operation: 'pack' | 'card',
    body: object,
    extra: {
      expectedValueCents?: Cents;
      stdevCents?: Cents;
      unitPriceCents?: Cents;
      model?: OrderModelInput;
    },
  ): Promise<PurchaseOutcome> {
    const defined = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined));
    const intent = this.o.ledger.recordIntent({
      key: newIdempotencyKey(this.o.account),
      account: this.o.account,
      operation,
      body,
      ...defined,
    });
    this.o.crashAt?.('after_intent', intent.key, operation);
    return this.send(intent);
  }

  /**
   * Sends (or re-sends) a recorded intent with its stored key and byte-identical body. A finished
   * order comes back as a replay and is recorded once; a failed one runs again.
   */
  async send(intent: Intent): Promise<PurchaseOutcome> {
    this.onTheWire.add(intent.key);
    try {
      return await this.sendOnce(intent);
    } finally {
      this.onTheWire.delete(intent.key);
    }
  }

  /**
   * Whether this process is sending `key` right now: a `sent` intent of the pack loop or the card
   * buyer that is not in doubt, only waiting for its answer (never to be settled by evidence).
   */
  isOnTheWire(key: string): boolean {
    return this.onTheWire.has(key);
  }

  private async sendOnce(intent: Intent): Promise<PurchaseOutcome> {
    const { ledger, log } = this.o;
    const key = intent.key;
    const delivered = ledger.markIntentSent(key).delivered;
    let response: PackPurchaseResponse | CardPurchaseResponse;
    try {
      this.o.crashAt?.('before_send', key, intent.operation);
      response =
        intent.operation === 'card'
          ? await this.o.api.purchaseCard(intent.body as CardPurchaseRequest, key)
          : await this.o.api.purchasePacks(intent.body as PackPurchaseRequest, key);
    } catch (e) {
      if (!isPartnerApiError(e)) throw e;
      if (this.charged(e) === 'no' && !delivered) {
        const failed = ledger.failIntent(key, e.code, e.message);
        log.warn({ intent: key, code: e.code, kind: e.kind }, `order not placed: ${e.message}`);
        this.notifier.notify(
          notices.orderFailed(this.o.account, failed, e.code, e.message, failed.updatedAt),
        );
        return { status: 'failed', intent: failed, error: e };
      }
      if (this.charged(e) === 'no') {
        // A re-send refused as a new order would be: the service does not know the key (or the key
        // lost its scope). It says nothing about the first attempt; never re-send this key blind.
        ledger.markKeyForgotten(key);
        const doubt = ledger.markInDoubt(key, e.code, `re-send refused: ${e.message}`);
        log.warn({ intent: key, code: e.code }, `re-sent order refused; settled by evidence: ${e.message}`);
        this.notifier.notify(notices.orderInDoubt(this.o.account, doubt, e.message, false, doubt.updatedAt));
        return { status: 'in_doubt', intent: doubt, error: e };
      }
      const doubt = ledger.markInDoubt(key, e.code, e.message);
      // A handled fault, so warn (docs/runner.md, "Log levels"): the evidence settles it, and
      // only an order it cannot settle (parked, in-doubt.ts) is an error for the operator.
      log.warn({ intent: key, code: e.code, kind: e.kind }, `order outcome unknown: ${e.message}`);
      this.notifier.notify(notices.orderInDoubt(this.o.account, doubt, e.message, false, doubt.updatedAt));
      return { status: 'in_doubt', intent: doubt, error: e };
    }
    this.o.crashAt?.('after_answer', key, intent.operation);
    // A card answer that breaks its order is booked (money moved) and its card held for review.
    const anomaly =
      intent.operation === 'card' ? cardAnswerAnomaly(intent.body, response as CardPurchaseResponse) : null;
    const confirmed = ledger.atomically(() => {
      const booked = ledger.confirmIntent(key, response, undefined, anomaly);
      if (booked.recorded && this.o.decideBooked) this.decideInBooking(booked);
      return booked;
    });
    log.info(
      {
        intent: key,
        checkout: response.checkout_id,
        ...('pack_type' in response
          ? { pack_type: response.pack_type, quantity: response.quantity }
          : { card: response.card_id, price: response.price, needs_review: response.needs_review === true }),
        charged: response.total_charged,
        replay: response.idempotent_replay === true,
      },
      confirmed.recorded ? 'order confirmed' : 'order already recorded (replay)',
    );
    if (confirmed.recorded) notices.announceBooked(this.notifier, this.o.account, confirmed);
    return { status: 'confirmed', intent: ledger.getIntent(key)!, confirmed, response };
  }

  /** The booking hook, in a transaction of its own nested in the booking's: a bug in it undoes only it. */
  private decideInBooking(booked: ConfirmedOrder): void {
    try {
      this.o.ledger.atomically(() => this.o.decideBooked?.(booked));
    } catch (e) {
      // The pulls stay undecided: the next sell pass decides them.
      this.o.log.error(
        { err: e, intent: booked.order.intentKey, checkout: booked.order.checkoutId },
        'pulls not decided at booking',
      );
    }
  }

  /**
   * Start-up: a `pending` intent was never marked sent, so it never left: dropped, not sent late on a
   * stale decision. A `sent` one was interrupted with its request possibly on the wire: in doubt,
   * settled by evidence like any other (in-doubt.ts). Returns the intents left in doubt.
   */
  recoverInterrupted(): Intent[] {
    const out: Intent[] = [];
    for (const intent of this.o.ledger.unresolvedIntents(this.o.account)) {
      if (intent.state === 'pending') {
        this.o.ledger.failIntent(intent.key, 'NOT_SENT', 'recorded but never sent (process stopped)');
        this.o.log.info({ intent: intent.key }, 'dropped an intent that was never sent');
        continue;
      }
      out.push(
        intent.state === 'sent'
          ? this.o.ledger.markInDoubt(
              intent.key,
              'INTERRUPTED',
              'the process stopped with the order on the wire',
            )
          : intent,
      );
    }
    return out;
  }

  /** Whether the service may have charged for the request that failed with `e`. */
  private charged(e: PartnerApiError): 'no' | 'maybe' {
    if (e instanceof RequestValidationError) return 'no';
    // Refused for speed: the order never ran (retryable only in the sense "later, same key").
    if (e instanceof RateLimitedError) return 'no';
    // A transport failure, even "connect", may follow an earlier attempt that did reach the service.
    if (e instanceof TransportError) return 'maybe';
    if (e.kind === 'rejected' || e.kind === 'fatal') return 'no';
    return 'maybe';
  }
}
