/**
 * The purchase executor: the only code that spends money. Each order is an intent written to the
 * ledger (key + exact body) before anything leaves; the state then moves
 * pending → sent → confirmed | failed | in_doubt, and every re-send uses the stored key and body.
 *
 * How the answer's error class maps to the intent:
 * - rejected (400, 429 daily, refunded 500) and 429 RATE_LIMITED: nothing was charged → failed;
 * - retryable after the client's own retries (transport, 5xx, 409 in progress): → in_doubt;
 * - invalid-data on the response: the order may have gone through → in_doubt (re-send replays it);
 *   invalid-data on the request (refused before IO) → failed;
 * - fatal (401, 403, 422 key reused): → failed, and the caller stops opening.
 */
import {
  isPartnerApiError,
  type PartnerApiError,
  RateLimitedError,
  RequestValidationError,
  TransportError,
} from '../api/errors.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { PackPurchaseRequest, PackPurchaseResponse } from '../api/schemas.js';
import type { Cents } from '../core/money.js';
import type { Logger } from '../obs/logger.js';
import type { ConfirmedOrder, Intent, Ledger } from '../store/ledger.js';
import { newIdempotencyKey } from './keys.js';

export type PurchaseOutcome =
  | { status: 'confirmed'; intent: Intent; confirmed: ConfirmedOrder; response: PackPurchaseResponse }
  | { status: 'failed'; intent: Intent; error: PartnerApiError }
  | { status: 'in_doubt'; intent: Intent; error: PartnerApiError };

export interface PurchasePlan {
  body: PackPurchaseRequest;
  expectedValueCents?: Cents;
  stdevCents?: Cents;
}

/** Points where a test can simulate a crash (the process dying at that instant). */
export type CrashPoint = 'after_intent' | 'before_send' | 'after_answer';

export interface ExecutorOptions {
  account: string;
  api: PartnerApi;
  ledger: Ledger;
  log: Logger;
  /** Test hook: throw here to model a process killed at that point. */
  crashAt?: (point: CrashPoint, key: string) => void;
}

export class PurchaseExecutor {
  constructor(private readonly o: ExecutorOptions) {}

  /** Records a new intent, then sends it. */
  async open(plan: PurchasePlan): Promise<PurchaseOutcome> {
    const intent = this.o.ledger.recordIntent({
      key: newIdempotencyKey(this.o.account),
      account: this.o.account,
      operation: 'pack',
      body: plan.body,
      ...(plan.expectedValueCents !== undefined ? { expectedValueCents: plan.expectedValueCents } : {}),
      ...(plan.stdevCents !== undefined ? { stdevCents: plan.stdevCents } : {}),
    });
    this.o.crashAt?.('after_intent', intent.key);
    return this.send(intent);
  }

  /**
   * Sends (or re-sends) a recorded intent with its stored key and byte-identical body. A finished
   * order comes back as a replay and is recorded once; a failed one runs again.
   */
  async send(intent: Intent): Promise<PurchaseOutcome> {
    const { ledger, log } = this.o;
    const key = intent.key;
    ledger.markIntentSent(key);
    let response: PackPurchaseResponse;
    try {
      this.o.crashAt?.('before_send', key);
      response = await this.o.api.purchasePacks(intent.body as PackPurchaseRequest, key);
    } catch (e) {
      if (!isPartnerApiError(e)) throw e;
      if (this.charged(e) === 'no') {
        const failed = ledger.failIntent(key, e.code, e.message);
        log.warn({ intent: key, code: e.code, kind: e.kind }, `order not placed: ${e.message}`);
        return { status: 'failed', intent: failed, error: e };
      }
      const doubt = ledger.markInDoubt(key, e.code, e.message);
      log.error({ intent: key, code: e.code, kind: e.kind }, `order outcome unknown: ${e.message}`);
      return { status: 'in_doubt', intent: doubt, error: e };
    }
    this.o.crashAt?.('after_answer', key);
    const confirmed = ledger.confirmIntent(key, response);
    log.info(
      {
        intent: key,
        checkout: response.checkout_id,
        pack_type: response.pack_type,
        quantity: response.quantity,
        charged: response.total_charged,
        replay: response.idempotent_replay === true,
      },
      confirmed.recorded ? 'order confirmed' : 'order already recorded (replay)',
    );
    return { status: 'confirmed', intent: ledger.getIntent(key)!, confirmed, response };
  }

  /**
   * Re-sends every unresolved intent of this account (start-up recovery). `pending` intents were
   * never marked sent, so they never left: they are dropped, not sent late on a stale decision.
   */
  async resolveUnresolved(): Promise<PurchaseOutcome[]> {
    const out: PurchaseOutcome[] = [];
    for (const intent of this.o.ledger.unresolvedIntents(this.o.account)) {
      if (intent.state === 'pending') {
        this.o.ledger.failIntent(intent.key, 'NOT_SENT', 'recorded but never sent (process stopped)');
        this.o.log.info({ intent: intent.key }, 'dropped an intent that was never sent');
        continue;
      }
      this.o.log.info({ intent: intent.key, state: intent.state }, 'resolving an order by re-sending it');
      out.push(await this.send(intent));
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
