import { inspect } from 'node:util';
import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpClientOptions, type HttpPartnerApi } from '../../src/api/client.js';
import {
  DailyLimitReachedError,
  InDoubtError,
  OrderRefundedError,
  RequestValidationError,
  TransportError,
  UnauthorizedError,
} from '../../src/api/errors.js';
import { Pacer } from '../../src/api/pacing.js';
import { VirtualClock } from '../../src/core/clock.js';
import { drive } from './drive.js';
import * as F from './fixtures.js';

let api: HttpPartnerApi | undefined;
let clock: VirtualClock;
let pacer: Pacer;

function client(extra: Partial<HttpClientOptions> = {}): HttpPartnerApi {
  clock = new VirtualClock(F.T0);
  pacer = new Pacer(clock, { readBudget: false });
  api = createHttpClient({
    baseUrl: F.BASE,
    apiKey: F.KEY,
    clock,
    retry: { maxAttempts: 4, baseDelayMs: 1000, maxDelayMs: 8000, inProgressDelayMs: 3000 },
    pacing: pacer,
    random: () => 0,
    ...extra,
  });
  return api;
}

/** Records when (virtual ms since T0) each request reaches the server, and what it carried. */
function recorder() {
  const seen: Array<{ at: number; key: string | undefined; body: unknown }> = [];
  const record = (req: { headers: Record<string, string | string[] | undefined> }, body: unknown) =>
    seen.push({
      at: clock.now() - Date.parse(F.T0),
      key: req.headers['idempotency-key'] as string | undefined,
      body,
    });
  return { seen, record };
}

beforeAll(() => nock.disableNetConnect());
afterEach(async () => {
  nock.cleanAll();
  await api?.destroy();
  api = undefined;
});
afterAll(() => nock.enableNetConnect());

const path = (p: string) => `${F.PREFIX}${p}`;

describe('retries through the client (virtual clock)', () => {
  it('a read retries 5xx and resets with capped exponential backoff, then succeeds', async () => {
    const c = client();
    const { seen, record } = recorder();
    nock(F.BASE)
      .get(path('/account'))
      .times(2)
      .reply(function () {
        record(this.req, undefined);
        return [500, { error: 'boom' }];
      })
      .get(path('/account'))
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }))
      .get(path('/account'))
      .reply(function () {
        record(this.req, undefined);
        return [200, F.account];
      });
    const r = await drive(clock, pacer, c.getAccount());
    expect(r.ok && r.value.username).toBe('alice');
    // random() = 0 → half of base·2^(n-1): 500, 1000, then 2000 before the 4th attempt.
    expect(seen.map((s) => s.at)).toEqual([0, 500, 3500]);
  });

  it('a read gives up after maxAttempts with the last error', async () => {
    const c = client();
    nock(F.BASE).get(path('/me')).times(4).reply(503, { error: 'down' });
    const r = await drive(clock, pacer, c.getIdentity());
    expect(r.ok).toBe(false);
    expect(!r.ok && (r.error as { status: number }).status).toBe(503);
    expect(nock.isDone()).toBe(true);
  });

  it('does not retry a 401', async () => {
    const c = client();
    nock(F.BASE).get(path('/me')).reply(401, { error: 'bad key' });
    const r = await drive(clock, pacer, c.getIdentity());
    expect(!r.ok && r.error).toBeInstanceOf(UnauthorizedError);
    expect(nock.isDone()).toBe(true);
  });

  it('a purchase whose connection resets is not re-sent: in doubt at once, one request', async () => {
    // The service may have charged it; one that forgot the key would charge again on a re-send.
    const c = client();
    nock(F.BASE)
      .post(path('/packs/purchase'))
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const r = await drive(clock, pacer, c.purchasePacks({ pack_type: 'gold', quantity: 1 }, 'order-0007'));
    expect(!r.ok && r.error).toBeInstanceOf(InDoubtError);
    expect(nock.isDone()).toBe(true);
  });

  it('a purchase refused after an attempt that may have run is in doubt, not refused', async () => {
    const c = client();
    nock(F.BASE)
      .post(path('/cards/purchase'))
      .reply(409, { error: 'running', code: 'IDEMPOTENCY_IN_PROGRESS' })
      .post(path('/cards/purchase'))
      .reply(
        429,
        { error: 'too soon', code: 'RATE_LIMITED', retry_after_seconds: 5 },
        { 'retry-after': '5' },
      );
    const r = await drive(clock, pacer, c.purchaseCard({ card_id: 'x', max_price: 3 }, 'order-0008'));
    expect(!r.ok && r.error).toBeInstanceOf(InDoubtError);
    expect(nock.isDone()).toBe(true);
  });

  it('IDEMPOTENCY_IN_PROGRESS waits and re-sends the same key', async () => {
    const c = client();
    const { seen, record } = recorder();
    nock(F.BASE)
      .post(path('/packs/purchase'))
      .times(2)
      .reply(function (_u, body) {
        record(this.req, body);
        return [409, { error: 'running', code: 'IDEMPOTENCY_IN_PROGRESS' }];
      })
      .post(path('/packs/purchase'))
      .reply(function (_u, body) {
        record(this.req, body);
        return [200, F.packPurchase];
      });
    const r = await drive(clock, pacer, c.purchasePacks({ pack_type: 'gold' }, 'order-0009'));
    expect(r.ok).toBe(true);
    expect(seen.map((s) => [s.at, s.key])).toEqual([
      [0, 'order-0009'],
      [3000, 'order-0009'],
      [6000, 'order-0009'],
    ]);
  });

  it('RATE_LIMITED waits exactly what the server said (body), then re-sends', async () => {
    const c = client();
    const { seen, record } = recorder();
    nock(F.BASE)
      .post(path('/packs/purchase'))
      .reply(function (_u, body) {
        record(this.req, body);
        return [
          429,
          { error: 'slow', code: 'RATE_LIMITED', retry_after_seconds: 41 },
          { 'Retry-After': '41' },
        ];
      })
      .post(path('/packs/purchase'))
      .reply(function (_u, body) {
        record(this.req, body);
        return [200, F.packPurchase];
      });
    const r = await drive(clock, pacer, c.purchasePacks({ pack_type: 'gold' }, 'order-0010'));
    expect(r.ok).toBe(true);
    expect(seen.map((s) => s.at)).toEqual([0, 41_000]);
  });

  it('DAILY_LIMIT_REACHED is not retried', async () => {
    const c = client();
    nock(F.BASE)
      .post(path('/packs/purchase'))
      .reply(429, { error: 'ceiling', code: 'DAILY_LIMIT_REACHED', limit: 100, used: 100, resets_at: F.T0 });
    const r = await drive(clock, pacer, c.purchasePacks({ pack_type: 'gold' }, 'order-0011'));
    expect(!r.ok && r.error).toBeInstanceOf(DailyLimitReachedError);
    expect(nock.isDone()).toBe(true);
  });

  it('a 500 on pack purchase is reported as refunded and not retried', async () => {
    const c = client();
    nock(F.BASE).post(path('/packs/purchase')).reply(500, { error: 'a pack failed to open' });
    const r = await drive(clock, pacer, c.purchasePacks({ pack_type: 'gold' }, 'order-0012'));
    expect(!r.ok && r.error).toBeInstanceOf(OrderRefundedError);
    expect(!r.ok && (r.error as OrderRefundedError).kind).toBe('rejected');
    expect(nock.isDone()).toBe(true);
  });

  it('a listing create whose connection resets is in doubt and sent only once', async () => {
    const c = client();
    const scope = nock(F.BASE)
      .post(path('/listings'))
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const second = nock(F.BASE).post(path('/listings')).reply(200, F.listing);
    const r = await drive(clock, pacer, c.createListing({ card_id: 'c1', price: 20 }));
    expect(!r.ok && r.error).toBeInstanceOf(InDoubtError);
    expect(scope.isDone()).toBe(true);
    expect(second.isDone()).toBe(false);
  });

  it('refuses, before any IO, to send another body under a key it already used', async () => {
    const c = client();
    nock(F.BASE).post(path('/packs/purchase')).reply(200, F.packPurchase);
    await c.purchasePacks({ pack_type: 'gold', quantity: 1 }, 'order-0013');
    // nock has no interceptor left: any request would fail as a transport error, not a validation one.
    await expect(c.purchasePacks({ pack_type: 'gold', quantity: 2 }, 'order-0013')).rejects.toBeInstanceOf(
      RequestValidationError,
    );
    await expect(c.purchaseCard({ card_id: 'x', max_price: 1 }, 'order-0013')).rejects.toThrow(
      /different order/,
    );
    // The same body under the same key (a caller's retry) is allowed and goes out.
    nock(F.BASE)
      .post(path('/packs/purchase'))
      .reply(200, { ...F.packPurchase, idempotent_replay: true });
    const replay = await c.purchasePacks({ quantity: 1, pack_type: 'gold' }, 'order-0013');
    expect(replay.idempotent_replay).toBe(true);
  });

  it('validates requests before IO', async () => {
    const c = client();
    const bad: Array<[() => Promise<unknown>, RegExp]> = [
      [() => c.purchasePacks({ pack_type: 'gold' }, 'short'), /Idempotency-Key/],
      [() => c.purchasePacks({ pack_type: 'gold', quantity: 11 }, 'order-0014'), /quantity/],
      [() => c.purchasePacks({ pack_type: 'gold', category: 'magic' } as never, 'order-0014'), /category/],
      [() => c.sellBack([]), /items/],
      [() => c.getVault({ per_page: 500 }), /per_page/],
      [() => c.getPackPool({ pack_type: 'gold', risk_level: 'hot' } as never), /risk_level/],
    ];
    for (const [call, re] of bad) {
      const r = await drive(clock, pacer, call());
      expect(!r.ok && r.error).toBeInstanceOf(RequestValidationError);
      expect(!r.ok && (r.error as Error).message).toMatch(re);
    }
  });
});

describe('the API key', () => {
  it('goes only into the Authorization header, never into errors, toString, JSON or inspect', async () => {
    const c = client({ retry: { maxAttempts: 1 } });
    nock(F.BASE, { reqheaders: { authorization: `Bearer ${F.KEY}` } })
      .get(path('/me'))
      .reply(401, { error: 'unknown key' });
    nock(F.BASE)
      .get(path('/account'))
      .replyWithError(Object.assign(new Error('reset'), { code: 'ECONNRESET' }));
    const errors = [
      await c.getIdentity().catch((e: unknown) => e),
      await c.getAccount().catch((e: unknown) => e),
      await c.purchasePacks({ pack_type: 'gold' }, 'bad key!').catch((e: unknown) => e),
    ];
    expect(errors[0]).toBeInstanceOf(UnauthorizedError);
    expect(errors[1]).toBeInstanceOf(TransportError);
    const texts = [
      String(c),
      JSON.stringify(c),
      inspect(c, { depth: 10, showHidden: true }),
      ...errors.flatMap((e) => [String(e), inspect(e, { depth: 10, showHidden: true }), JSON.stringify(e)]),
    ];
    for (const t of texts) expect(t).not.toContain(F.KEY);
    expect(String(c)).toContain(F.BASE);
  });

  it('a bad key is refused at construction without echoing it', () => {
    expect(() => client({ apiKey: 'has space SECRET' })).toThrow(/apiKey/);
    try {
      client({ apiKey: 'has space SECRET' });
    } catch (e) {
      expect(String(e)).not.toContain('SECRET');
    }
  });
});
