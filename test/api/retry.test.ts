import { describe, expect, it } from 'vitest';
import {
  BadRequestError,
  CardNoLongerAvailableError,
  DailyCardLimitReachedError,
  DailyLimitReachedError,
  ForbiddenError,
  IdempotencyInProgressError,
  IdempotencyKeyReusedError,
  InDoubtError,
  OrderRefundedError,
  type PartnerApiError,
  PriceChangedError,
  RateLimitedError,
  SchemaError,
  ServerError,
  TransportError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import type { Operation } from '../../src/api/partner-api.js';
import { backoffMs, DEFAULT_RETRY_POLICY, decideRetry } from '../../src/api/retry.js';

const P = {
  ...DEFAULT_RETRY_POLICY,
  maxAttempts: 4,
  baseDelayMs: 1000,
  maxDelayMs: 5000,
  inProgressDelayMs: 2500,
};
const reset = () => new TransportError('reset', 'reset');
const connect = () => new TransportError('connect', 'refused');
const timeout = () => new TransportError('timeout', 'timeout');
const s500 = () => new ServerError('boom', 500);
const s503 = () => new ServerError('unavailable', 503);

type Row = [
  label: string,
  op: Operation,
  error: () => PartnerApiError,
  attempt: number,
  random: number,
  expected: { delayMs: number } | { gives: new (...a: never[]) => PartnerApiError },
];

// prettier-ignore
const TABLE: Row[] = [
  // reads: 5xx and transport faults, capped exponential backoff with equal jitter
  ['read 500, 1st attempt, no jitter', 'getAccount', s500, 1, 0, { delayMs: 500 }],
  ['read 500, 1st attempt, max jitter', 'getAccount', s500, 1, 0.999999, { delayMs: 1000 }],
  ['read 503, 2nd attempt', 'listPacks', s503, 2, 0.5, { delayMs: 1500 }],
  ['read reset, 3rd attempt', 'getPackPool', reset, 3, 0, { delayMs: 2000 }],
  ['read timeout, backoff capped', 'listShopCards', timeout, 3, 1 - 1e-9, { delayMs: 4000 }],
  ['read: cap reached', 'getVault', s500, 4, 0, { gives: ServerError }],
  ['read transport: cap reached', 'getVault', reset, 4, 0, { gives: TransportError }],
  [
    'read 400 not retried',
    'getPurchaseReport',
    () => new BadRequestError('bad'),
    1,
    0,
    { gives: BadRequestError },
  ],
  [
    'read 401 not retried',
    'getIdentity',
    () => new UnauthorizedError('no'),
    1,
    0,
    { gives: UnauthorizedError },
  ],
  ['read 403 not retried', 'getAccount', () => new ForbiddenError('no'), 1, 0, { gives: ForbiddenError }],
  ['schema error not retried', 'getAccount', () => new SchemaError([]), 1, 0, { gives: SchemaError }],
  // sell-back: same as reads (already_sold makes it replay-safe)
  ['sell-back 500', 'sellBack', s500, 1, 0, { delayMs: 500 }],
  ['sell-back reset', 'sellBack', reset, 2, 0, { delayMs: 1000 }],
  ['sell-back cap', 'sellBack', reset, 4, 0, { gives: TransportError }],
  // purchases
  // purchases: once an attempt may have been charged, the executor settles it (never a blind re-send)
  ['pack purchase reset → in doubt at once', 'purchasePacks', reset, 1, 0, { gives: InDoubtError }],
  ['pack purchase timeout → in doubt at once', 'purchasePacks', timeout, 1, 0, { gives: InDoubtError }],
  ['pack purchase connect failure retried (never sent)', 'purchasePacks', connect, 1, 0, { delayMs: 500 }],
  [
    'pack purchase connect: cap → transport (never sent)',
    'purchasePacks',
    connect,
    4,
    0,
    { gives: TransportError },
  ],
  [
    'pack purchase 500 = refunded, not retried',
    'purchasePacks',
    () => new OrderRefundedError('refunded'),
    1,
    0,
    { gives: OrderRefundedError },
  ],
  ['card purchase 500 → in doubt at once', 'purchaseCard', s500, 1, 0, { gives: InDoubtError }],
  ['pack purchase 503 from a proxy → in doubt', 'purchasePacks', s503, 1, 0, { gives: InDoubtError }],
  [
    'in progress waits and retries',
    'purchasePacks',
    () => new IdempotencyInProgressError('busy'),
    1,
    0.7,
    { delayMs: 2500 },
  ],
  [
    'in progress, card',
    'purchaseCard',
    () => new IdempotencyInProgressError('busy'),
    3,
    0,
    { delayMs: 2500 },
  ],
  [
    'in progress: cap → in doubt',
    'purchasePacks',
    () => new IdempotencyInProgressError('busy'),
    4,
    0,
    { gives: InDoubtError },
  ],
  [
    'rate limited waits exactly',
    'purchasePacks',
    () => new RateLimitedError(37),
    1,
    0.9,
    { delayMs: 37_000 },
  ],
  [
    'rate limited, later attempt still exact',
    'purchasePacks',
    () => new RateLimitedError(60),
    3,
    0.1,
    { delayMs: 60_000 },
  ],
  [
    'rate limited beyond max wait → caller',
    'purchasePacks',
    () => new RateLimitedError(3600),
    1,
    0,
    { gives: RateLimitedError },
  ],
  ['rate limited: cap', 'purchasePacks', () => new RateLimitedError(5), 4, 0, { gives: RateLimitedError }],
  // A listing waits for the sell side's next pass, not inside a pass a sell-back may queue behind.
  [
    'rate limited listing → caller',
    'createListing',
    () => new RateLimitedError(5),
    1,
    0,
    { gives: RateLimitedError },
  ],
  [
    'rate limited delisting → caller',
    'deleteListing',
    () => new RateLimitedError(5),
    1,
    0,
    { gives: RateLimitedError },
  ],
  [
    'daily limit not retried',
    'purchasePacks',
    () => new DailyLimitReachedError(100, 100, 'x'),
    1,
    0,
    { gives: DailyLimitReachedError },
  ],
  [
    'daily card limit not retried',
    'purchaseCard',
    () => new DailyCardLimitReachedError('cap'),
    1,
    0,
    { gives: DailyCardLimitReachedError },
  ],
  [
    'price changed not retried',
    'purchaseCard',
    () => new PriceChangedError('c', 2, 1),
    1,
    0,
    { gives: PriceChangedError },
  ],
  [
    'card gone not retried',
    'purchaseCard',
    () => new CardNoLongerAvailableError('gone'),
    1,
    0,
    { gives: CardNoLongerAvailableError },
  ],
  [
    'key reused not retried',
    'purchaseCard',
    () => new IdempotencyKeyReusedError('reuse'),
    1,
    0,
    { gives: IdempotencyKeyReusedError },
  ],
  // listings: not idempotent
  ['listing create reset → in doubt at once', 'createListing', reset, 1, 0, { gives: InDoubtError }],
  ['listing delete timeout → in doubt at once', 'deleteListing', timeout, 1, 0, { gives: InDoubtError }],
  ['listing connect failure is retried (never sent)', 'createListing', connect, 1, 0, { delayMs: 500 }],
  ['listing 500 retried (spec: safe)', 'createListing', s500, 1, 0, { delayMs: 500 }],
  [
    'listing 502 from a proxy → in doubt',
    'deleteListing',
    () => new ServerError('bad gateway', 502),
    1,
    0,
    { gives: InDoubtError },
  ],
  ['listing 500: cap', 'createListing', s500, 4, 0, { gives: ServerError }],
];

// After an attempt that may have reached the service (delivered), only "in progress" is retried.
const AFTER_DELIVERY: Row[] = [
  [
    '429 after a dropped answer',
    'purchasePacks',
    () => new RateLimitedError(5),
    2,
    0,
    { gives: InDoubtError },
  ],
  [
    '400 after a dropped answer',
    'purchasePacks',
    () => new BadRequestError('funds'),
    2,
    0,
    { gives: InDoubtError },
  ],
  [
    '403 after a dropped answer',
    'purchasePacks',
    () => new ForbiddenError('scope'),
    2,
    0,
    { gives: InDoubtError },
  ],
  [
    'refund after a dropped answer',
    'purchasePacks',
    () => new OrderRefundedError('r'),
    2,
    0,
    { gives: InDoubtError },
  ],
  ['connect after a dropped answer', 'purchaseCard', connect, 2, 0, { gives: InDoubtError }],
  [
    'in progress still retried',
    'purchasePacks',
    () => new IdempotencyInProgressError('busy'),
    2,
    0,
    { delayMs: 2500 },
  ],
  ['reads unaffected', 'getAccount', s500, 2, 0, { delayMs: 1000 }],
];

describe('decideRetry after an attempt that may have been charged', () => {
  it.each(AFTER_DELIVERY)('%s', (_label, op, make, attempt, random, expected) => {
    const error = make();
    const d = decideRetry(op, error, attempt, () => random, P, true);
    if ('delayMs' in expected) expect(d).toEqual({ retry: true, delayMs: expected.delayMs });
    else {
      expect(d.retry).toBe(false);
      if (!d.retry) expect(d.error).toBeInstanceOf(expected.gives);
    }
  });
});

describe('decideRetry', () => {
  it.each(TABLE)('%s', (_label, op, make, attempt, random, expected) => {
    const error = make();
    const d = decideRetry(op, error, attempt, () => random, P);
    if ('delayMs' in expected) {
      expect(d).toEqual({ retry: true, delayMs: expected.delayMs });
    } else {
      expect(d.retry).toBe(false);
      if (d.retry) return;
      expect(d.error).toBeInstanceOf(expected.gives);
      // A wrapped error keeps the original as its cause.
      if (d.error !== error) expect(d.error.cause).toBe(error);
    }
  });

  it('backoff never exceeds the cap and never collapses to zero', () => {
    for (let attempt = 1; attempt < 40; attempt++)
      for (const r of [0, 0.3, 0.999]) {
        const d = backoffMs(attempt, () => r, P);
        expect(d).toBeGreaterThanOrEqual(P.baseDelayMs / 2);
        expect(d).toBeLessThanOrEqual(P.maxDelayMs);
      }
  });
});
