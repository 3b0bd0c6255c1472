import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpPartnerApi, type ResponseEvent } from '../../src/api/client.js';
import {
  BadRequestError,
  CardNoLongerAvailableError,
  DailyCardLimitReachedError,
  DailyLimitReachedError,
  ForbiddenError,
  IdempotencyKeyReusedError,
  InDoubtError,
  NotFoundError,
  OrderRefundedError,
  OwnListingError,
  type PartnerApiError,
  PriceChangedError,
  RateLimitedError,
  SchemaError,
  ServerError,
  TransportError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import type { Operation, PartnerApi } from '../../src/api/partner-api.js';
import { VirtualClock } from '../../src/core/clock.js';
import * as F from './fixtures.js';

type Ctor = abstract new (...args: never[]) => PartnerApiError;

interface OpCase {
  op: Operation;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  invoke: (api: PartnerApi) => Promise<unknown>;
  ok: Record<string, unknown>;
  /** Body the request must carry (JSON), or query it must carry. */
  body?: unknown;
  query?: Record<string, string>;
  idempotencyKey?: string;
  /** A required response field to drop for the schema-violation case, as the error should name it. */
  dropField: { path: string; drop: (b: Record<string, unknown>) => Record<string, unknown> };
  /** Error statuses/codes the spec lists for this operation, with the error the caller gets. */
  errors: Array<{ status: number; code?: string; extra?: Record<string, unknown>; expect: Ctor }>;
  /** What a reset connection turns into (with retries disabled). */
  onReset: Ctor;
}

const without = (o: Record<string, unknown>, k: string) => {
  const { [k]: _, ...rest } = o;
  return rest;
};

const common = [
  { status: 401, expect: UnauthorizedError },
  { status: 403, expect: ForbiddenError },
];

const KEY1 = 'order-0001';

const CASES: OpCase[] = [
  {
    op: 'purchasePacks',
    method: 'POST',
    path: '/packs/purchase',
    invoke: (api) => api.purchasePacks({ pack_type: 'gold', quantity: 2, risk_level: 'chill' }, KEY1),
    body: { pack_type: 'gold', quantity: 2, risk_level: 'chill' },
    idempotencyKey: KEY1,
    ok: F.packPurchase,
    dropField: {
      path: 'pulls[0].item.market_value',
      drop: (b) => ({
        ...b,
        pulls: [{ ...F.packPurchase.pulls[0], item: without(F.card('c1'), 'market_value') }],
      }),
    },
    errors: [
      { status: 400, expect: BadRequestError },
      ...common,
      // With one attempt allowed, a still-running order ends in doubt (the caller re-sends the key).
      { status: 409, code: 'IDEMPOTENCY_IN_PROGRESS', expect: InDoubtError },
      { status: 422, code: 'IDEMPOTENCY_KEY_REUSED', expect: IdempotencyKeyReusedError },
      { status: 429, code: 'RATE_LIMITED', extra: { retry_after_seconds: 42 }, expect: RateLimitedError },
      {
        status: 429,
        code: 'DAILY_LIMIT_REACHED',
        extra: { limit: 100, used: 100, resets_at: '2026-01-02T00:00:00.000Z' },
        expect: DailyLimitReachedError,
      },
      { status: 500, expect: OrderRefundedError },
    ],
    onReset: InDoubtError,
  },
  {
    op: 'purchaseCard',
    method: 'POST',
    path: '/cards/purchase',
    invoke: (api) => api.purchaseCard({ card_id: 'card-1', max_price: 15 }, KEY1),
    body: { card_id: 'card-1', max_price: 15 },
    idempotencyKey: KEY1,
    ok: F.cardPurchase,
    dropField: { path: 'transaction_id', drop: (b) => without(b, 'transaction_id') },
    errors: [
      { status: 400, expect: BadRequestError },
      ...common,
      { status: 404, expect: NotFoundError },
      { status: 409, code: 'IDEMPOTENCY_IN_PROGRESS', expect: InDoubtError },
      {
        status: 409,
        code: 'PRICE_CHANGED',
        extra: { card_id: 'card-1', price: 17.5, max_price: 15 },
        expect: PriceChangedError,
      },
      { status: 409, code: 'CARD_NO_LONGER_AVAILABLE', expect: CardNoLongerAvailableError },
      { status: 409, code: 'OWN_LISTING', expect: OwnListingError },
      { status: 422, code: 'IDEMPOTENCY_KEY_REUSED', expect: IdempotencyKeyReusedError },
      { status: 429, code: 'DAILY_CARD_LIMIT_REACHED', expect: DailyCardLimitReachedError },
      { status: 500, expect: InDoubtError },
    ],
    onReset: InDoubtError,
  },
  {
    op: 'sellBack',
    method: 'POST',
    path: '/cards/sell-back',
    invoke: (api) => api.sellBack([{ card_id: 'c1', pull_id: 'p-1' }]),
    body: { items: [{ card_id: 'c1', pull_id: 'p-1' }] },
    ok: F.sellBack,
    dropField: {
      path: 'results[0].status',
      drop: (b) => ({ ...b, results: [without(F.sellBack.results[0]!, 'status')] }),
    },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
  {
    op: 'createListing',
    method: 'POST',
    path: '/listings',
    invoke: (api) => api.createListing({ card_id: 'c1', price: 20 }),
    body: { card_id: 'c1', price: 20 },
    ok: F.listing,
    dropField: { path: 'listing_id', drop: (b) => without(b, 'listing_id') },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: InDoubtError,
  },
  {
    op: 'deleteListing',
    method: 'DELETE',
    path: '/listings',
    invoke: (api) => api.deleteListing({ card_id: 'c1' }),
    body: { card_id: 'c1' },
    ok: F.delist,
    dropField: { path: 'delisted', drop: (b) => without(b, 'delisted') },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: InDoubtError,
  },
  {
    op: 'listPacks',
    method: 'GET',
    path: '/catalog/packs',
    invoke: (api) => api.listPacks({ category: 'onepiece' }),
    query: { category: 'onepiece' },
    ok: F.packList,
    dropField: {
      path: 'packs[1].max_quantity',
      drop: (b) => ({ ...b, packs: [F.packList.packs[0], without(F.packList.packs[1]!, 'max_quantity')] }),
    },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
  {
    op: 'getPackPool',
    method: 'GET',
    path: '/catalog/packs/pool',
    invoke: (api) => api.getPackPool({ pack_type: 'gold', risk_level: 'aggressive' }),
    query: { pack_type: 'gold', risk_level: 'aggressive' },
    ok: F.packPool,
    dropField: {
      path: 'bands[0].odds',
      drop: (b) => ({ ...b, bands: [without(F.packPool.bands[0]!, 'odds')] }),
    },
    errors: [...common, { status: 404, expect: NotFoundError }, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
  {
    op: 'listShopCards',
    method: 'GET',
    path: '/catalog/cards',
    invoke: (api) => api.listShopCards({ page: 2, per_page: 1000 }),
    query: { page: '2', per_page: '1000' },
    ok: F.shopPage(2, 1000, 1001, ['z']),
    dropField: {
      path: 'cards[0].price',
      drop: (b) => ({ ...b, cards: [without(F.shopCard('z'), 'price')] }),
    },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
  {
    op: 'getVault',
    method: 'GET',
    path: '/vault',
    invoke: (api) => api.getVault({ per_page: 200 }),
    query: { per_page: '200' },
    ok: F.vaultPage(1, 200, 1, ['v1']),
    dropField: { path: 'total', drop: (b) => without(b, 'total') },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
  {
    op: 'getAccount',
    method: 'GET',
    path: '/account',
    invoke: (api) => api.getAccount(),
    ok: F.account,
    dropField: {
      path: 'limits.next_purchase_at',
      drop: (b) => ({ ...b, limits: without(F.account.limits, 'next_purchase_at') }),
    },
    errors: [...common, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
  {
    op: 'getIdentity',
    method: 'GET',
    path: '/me',
    invoke: (api) => api.getIdentity(),
    ok: F.identity,
    dropField: { path: 'linked', drop: (b) => without(b, 'linked') },
    errors: [
      { status: 401, expect: UnauthorizedError },
      { status: 500, expect: ServerError },
    ],
    onReset: TransportError,
  },
  {
    op: 'getPurchaseReport',
    method: 'GET',
    path: '/pulls',
    invoke: (api) => api.getPurchaseReport({ since: '2025-12-01T00:00:00Z', until: '2025-12-31T00:00:00Z' }),
    query: { since: '2025-12-01T00:00:00Z', until: '2025-12-31T00:00:00Z' },
    ok: F.reportPage(1, 500, 1, [1]),
    dropField: {
      path: 'pulls[0].user_id',
      drop: (b) => ({ ...b, pulls: [without(F.reportRow(1), 'user_id')] }),
    },
    errors: [{ status: 400, expect: BadRequestError }, ...common, { status: 500, expect: ServerError }],
    onReset: TransportError,
  },
];

let api: HttpPartnerApi;
let events: ResponseEvent[];

function client(extra: Partial<Parameters<typeof createHttpClient>[0]> = {}): HttpPartnerApi {
  events = [];
  api = createHttpClient({
    baseUrl: F.BASE,
    apiKey: F.KEY,
    clock: new VirtualClock(F.T0),
    retry: { maxAttempts: 1 },
    pacing: { readBudget: false },
    onResponse: (e) => events.push(e),
    ...extra,
  });
  return api;
}

function intercept(c: OpCase) {
  const scope = nock(F.BASE, {
    reqheaders: {
      authorization: `Bearer ${F.KEY}`,
      ...(c.idempotencyKey ? { 'idempotency-key': c.idempotencyKey } : {}),
      ...(c.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
  });
  const method = c.method.toLowerCase() as 'get' | 'post' | 'delete';
  const i = scope[method](`${F.PREFIX}${c.path}`, c.body as nock.RequestBodyMatcher);
  return c.query ? i.query(c.query) : c.method === 'GET' ? i.query({}) : i;
}

async function failure(p: Promise<unknown>): Promise<PartnerApiError> {
  try {
    await p;
  } catch (e) {
    return e as PartnerApiError;
  }
  throw new Error('expected the call to fail');
}

beforeAll(() => nock.disableNetConnect());
afterEach(async () => {
  nock.cleanAll();
  await api?.destroy();
});
afterAll(() => nock.enableNetConnect());

describe.each(CASES)('$method $path ($op)', (c) => {
  it('succeeds: sends the key, body/query and idempotency key; returns the validated body', async () => {
    intercept(c).reply(200, { ...c.ok, extra_field_from_the_future: { kept: true } });
    const result = (await c.invoke(client())) as Record<string, unknown>;
    expect(result).toMatchObject(c.ok);
    expect(result.extra_field_from_the_future).toEqual({ kept: true });
    expect(nock.isDone()).toBe(true);
    expect(events).toEqual([{ endpoint: `${c.method} ${c.path}`, status: 200, durationMs: 0 }]);
  });

  it.each(c.errors)('maps $status $code', async (e) => {
    intercept(c).reply(e.status, {
      error: `server says ${e.status}`,
      ...(e.code ? { code: e.code } : {}),
      ...e.extra,
    });
    const err = await failure(c.invoke(client()));
    expect(err).toBeInstanceOf(e.expect);
    expect(err.endpoint).toBe(`${c.method} ${c.path}`);
    expect(err.message).toContain(`server says ${e.status}`);
    if (err instanceof PriceChangedError)
      expect([err.cardId, err.price, err.maxPrice]).toEqual(['card-1', 17.5, 15]);
    if (err instanceof RateLimitedError) expect(err.retryAfterSeconds).toBe(42);
    if (err instanceof DailyLimitReachedError)
      expect([err.limit, err.used, err.resetsAt]).toEqual([100, 100, '2026-01-02T00:00:00.000Z']);
    expect(events.map((x) => x.status)).toEqual([e.status]);
  });

  it('rejects malformed JSON as a SchemaError naming the endpoint', async () => {
    intercept(c).reply(200, '{"checkout_id": "co-1", ', { 'content-type': 'application/json' });
    const err = await failure(c.invoke(client()));
    expect(err).toBeInstanceOf(SchemaError);
    expect(err.message).toContain(`${c.method} ${c.path}`);
    expect(err.message).toMatch(/malformed JSON/);
  });

  it('rejects a missing required field as a SchemaError naming its path', async () => {
    intercept(c).reply(200, c.dropField.drop({ ...c.ok }));
    const err = await failure(c.invoke(client()));
    expect(err).toBeInstanceOf(SchemaError);
    expect((err as SchemaError).issues.map((i) => i.path)).toContain(c.dropField.path);
    expect(err.message).toContain(c.dropField.path);
    expect(err.endpoint).toBe(`${c.method} ${c.path}`);
  });

  it('reports a reset connection as a transport fault (in doubt for non-replayable writes)', async () => {
    intercept(c).replyWithError(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
    const err = await failure(c.invoke(client()));
    expect(err).toBeInstanceOf(c.onReset);
    const transport = err instanceof TransportError ? err : (err.cause as TransportError);
    expect(transport).toBeInstanceOf(TransportError);
    expect(transport.failure).toBe('reset');
    expect(events.map((x) => x.status)).toEqual(['transport']);
  });

  it('reports a response slower than the deadline as a timeout', async () => {
    intercept(c).delay(300).reply(200, c.ok);
    const err = await failure(c.invoke(client({ timeouts: { requestMs: 30 } })));
    expect(err).toBeInstanceOf(c.onReset);
    const transport = err instanceof TransportError ? err : (err.cause as TransportError);
    expect(transport.failure).toBe('timeout');
  });
});

describe('Retry-After', () => {
  it('takes RATE_LIMITED seconds from the header when the body lacks them', async () => {
    nock(F.BASE)
      .post(`${F.PREFIX}/packs/purchase`)
      .reply(429, { error: 'slow down', code: 'RATE_LIMITED' }, { 'Retry-After': '17' });
    const err = await failure(client().purchasePacks({ pack_type: 'gold' }, KEY1));
    expect(err).toBeInstanceOf(RateLimitedError);
    expect((err as RateLimitedError).retryAfterSeconds).toBe(17);
  });
});
