/**
 * Request pacing for one API key. Three rules from the spec and the design:
 * - priority: sell-back (a 0.9 window is closing) before purchases before listing writes before reads;
 * - never two purchases in flight for one key (1 purchase/minute, and an order's retries must not
 *   interleave with another order);
 * - a read budget (token bucket on the injected Clock), so catalog syncs stay at "a few times an
 *   hour" even if a caller loops.
 * Share one Pacer between every client using the same key.
 */
import PQueue from 'p-queue';
import type { Clock } from '../core/clock.js';
import { HOUR_MS } from '../core/clock.js';
import type { OperationClass } from './retry.js';

export interface ReadBudget {
  /** Reads that may go back to back (one full catalog sync fits). */
  capacity: number;
  /** Sustained reads per hour once the burst is spent. */
  refillPerHour: number;
}

export interface PacingOptions {
  /** Requests in flight at once for this key, all lanes together. */
  concurrency: number;
  /** `false` disables the read budget (tests, the embedded simulator). */
  readBudget: ReadBudget | false;
}

/**
 * Defaults: a full sync of the five categories (pack lists, pools at three risk levels, a few
 * shop-card pages) is on the order of 100 reads, so a burst of 150 fits one sync and 600 reads an
 * hour sustains about four to six syncs an hour: "a few times an hour", never "every few seconds".
 */
const DEFAULT_PACING: Readonly<PacingOptions> = Object.freeze({
  concurrency: 4,
  readBudget: Object.freeze({ capacity: 150, refillPerHour: 600 }),
});

const LANE_PRIORITY: Readonly<Record<OperationClass, number>> = Object.freeze({
  sellback: 3,
  purchase: 2,
  listing: 1,
  read: 0,
});

/** Token bucket on a Clock. Waiters are served first come, first served. */
export class TokenBucket {
  private tokens: number;
  private updatedAt: number;
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly clock: Clock,
    private readonly budget: ReadBudget,
  ) {
    if (!(budget.capacity >= 1) || !(budget.refillPerHour > 0))
      throw new RangeError('read budget needs capacity >= 1 and refillPerHour > 0');
    this.tokens = budget.capacity;
    this.updatedAt = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    const gained = ((now - this.updatedAt) * this.budget.refillPerHour) / HOUR_MS;
    this.tokens = Math.min(this.budget.capacity, this.tokens + gained);
    this.updatedAt = now;
  }

  /** Tokens available right now (fractional while refilling). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** Resolves once a token has been taken. */
  take(): Promise<void> {
    const turn = this.tail.then(async () => {
      for (;;) {
        this.refill();
        if (this.tokens >= 1) {
          this.tokens -= 1;
          return;
        }
        const waitMs = Math.ceil(((1 - this.tokens) * HOUR_MS) / this.budget.refillPerHour);
        await this.clock.sleep(waitMs);
      }
    });
    this.tail = turn.catch(() => {});
    return turn;
  }
}

export class Pacer {
  private readonly queue: PQueue;
  /** Holds a purchase for the whole call, retries and their waits included. */
  private readonly purchaseLane = new PQueue({ concurrency: 1 });
  readonly readBucket: TokenBucket | undefined;

  constructor(clock: Clock, options: Partial<PacingOptions> = {}) {
    const o = { ...DEFAULT_PACING, ...options };
    if (!(Number.isInteger(o.concurrency) && o.concurrency >= 1))
      throw new RangeError('pacing concurrency must be an integer >= 1');
    this.queue = new PQueue({ concurrency: o.concurrency });
    this.readBucket = o.readBudget ? new TokenBucket(clock, o.readBudget) : undefined;
  }

  /** Runs one HTTP attempt in its lane's priority; reads first spend a token from the budget. */
  async attempt<T>(cls: OperationClass, fn: () => Promise<T>): Promise<T> {
    if (cls === 'read' && this.readBucket) await this.readBucket.take();
    return this.queue.add(fn, { priority: LANE_PRIORITY[cls] });
  }

  /** Runs a whole purchase call (all its attempts) alone in the purchase lane. */
  exclusivePurchase<T>(fn: () => Promise<T>): Promise<T> {
    return this.purchaseLane.add(fn);
  }

  /** Requests waiting for a slot (not counting those in flight). */
  get waiting(): number {
    return this.queue.size + this.purchaseLane.size;
  }

  /** HTTP attempts running now (sent, answer not yet read): a test driver advances time only at 0. */
  get inFlight(): number {
    return this.queue.pending;
  }
}
