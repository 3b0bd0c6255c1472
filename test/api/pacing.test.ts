import nock from 'nock';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient, type HttpPartnerApi } from '../../src/api/client.js';
import { Pacer, TokenBucket } from '../../src/api/pacing.js';
import { VirtualClock } from '../../src/core/clock.js';
import { until } from '../until.js';
import { drive } from './drive.js';
import * as F from './fixtures.js';

const clients: HttpPartnerApi[] = [];
const path = (p: string) => `${F.PREFIX}${p}`;

function deferred() {
  let release!: () => void;
  const promise = new Promise<void>((r) => {
    release = r;
  });
  return { promise, release };
}

/** Every request reaching the server is logged as `METHOD path`; requests can be held until released. */
function server(hold: Record<string, Promise<void>> = {}) {
  const order: string[] = [];
  const bodies: Record<string, unknown> = {
    'POST /packs/purchase': F.packPurchase,
    'POST /cards/purchase': F.cardPurchase,
    'POST /cards/sell-back': F.sellBack,
    'POST /listings': F.listing,
    'GET /account': F.account,
    'GET /catalog/packs': F.packList,
    'GET /me': F.identity,
  };
  for (const [name, body] of Object.entries(bodies)) {
    const [method, p] = name.split(' ') as ['GET' | 'POST', string];
    const scope = nock(F.BASE).persist();
    const interceptor = method === 'GET' ? scope.get(path(p)).query(true) : scope.post(path(p));
    interceptor.reply(async () => {
      order.push(name);
      await hold[name];
      return [200, body];
    });
  }
  return order;
}

function client(clock: VirtualClock, pacing: ConstructorParameters<typeof Pacer>[1] | Pacer) {
  const c = createHttpClient({ baseUrl: F.BASE, apiKey: F.KEY, clock, pacing, retry: { maxAttempts: 1 } });
  clients.push(c);
  return c;
}

beforeAll(() => nock.disableNetConnect());
afterEach(async () => {
  nock.cleanAll();
  await Promise.all(clients.splice(0).map((c) => c.destroy()));
});
afterAll(() => nock.enableNetConnect());

describe('pacing', () => {
  it('serves sell-back before purchases before listing writes before reads', async () => {
    const clock = new VirtualClock(F.T0);
    const gate = deferred();
    const order = server({ 'POST /packs/purchase': gate.promise });
    const pacer = new Pacer(clock, { concurrency: 1, readBudget: false });
    const c = client(clock, pacer);

    const first = c.purchasePacks({ pack_type: 'gold' }, 'order-1000');
    await until(() => order.length === 1, 'the purchase reaches the server');
    // Queued while the purchase blocks the only slot, lowest priority first.
    const queued = [
      c.getAccount(),
      c.listPacks(),
      c.createListing({ card_id: 'c1', price: 20 }),
      c.purchaseCard({ card_id: 'card-1', max_price: 15 }, 'order-1001'),
      c.sellBack([{ card_id: 'c1', pull_id: 'p-1' }]),
    ];
    // Every one of them waits in the pacer (the card purchase behind the pack purchase's lane),
    // so none has been sent: no wall-clock pause decides it.
    await until(() => pacer.waiting === queued.length, 'all five calls waiting in the pacer');
    expect(order).toEqual(['POST /packs/purchase']);
    gate.release();
    await Promise.all([first, ...queued]);
    expect(order).toEqual([
      'POST /packs/purchase',
      'POST /cards/sell-back',
      'POST /cards/purchase',
      'POST /listings',
      'GET /account',
      'GET /catalog/packs',
    ]);
  });

  it('never has two purchases in flight for one key, while reads still flow', async () => {
    const clock = new VirtualClock(F.T0);
    const gate = deferred();
    const order = server({ 'POST /packs/purchase': gate.promise });
    // Two clients sharing one key share one Pacer.
    const pacer = new Pacer(clock, { concurrency: 4, readBudget: false });
    const a = client(clock, pacer);
    const b = client(clock, pacer);

    const p1 = a.purchasePacks({ pack_type: 'gold' }, 'order-2000');
    const p2 = b.purchaseCard({ card_id: 'card-1', max_price: 15 }, 'order-2001');
    const read = b.getIdentity();
    await read;
    // The card purchase waits in the purchase lane while the pack purchase is held (not sent).
    await until(
      () => order.includes('POST /packs/purchase') && pacer.waiting === 1,
      'the card purchase waiting behind the pack purchase',
    );
    expect(order.filter((x) => x.includes('purchase'))).toEqual(['POST /packs/purchase']);
    expect(order).toContain('GET /me');
    gate.release();
    await Promise.all([p1, p2]);
    expect(order.filter((x) => x.includes('purchase'))).toEqual([
      'POST /packs/purchase',
      'POST /cards/purchase',
    ]);
  });

  it('spends a read budget on the injected clock: a burst, then the refill rate', async () => {
    const clock = new VirtualClock(F.T0);
    const seenAt: number[] = [];
    nock(F.BASE)
      .persist()
      .get(path('/account'))
      .reply(() => {
        seenAt.push(clock.now() - Date.parse(F.T0));
        return [200, F.account];
      });
    nock(F.BASE)
      .post(path('/cards/sell-back'))
      .reply(() => {
        seenAt.push(-(clock.now() - Date.parse(F.T0)) - 1);
        return [200, F.sellBack];
      });
    const pacer = new Pacer(clock, { concurrency: 4, readBudget: { capacity: 2, refillPerHour: 60 } });
    const c = client(clock, pacer);
    const reads = Promise.all([c.getAccount(), c.getAccount(), c.getAccount(), c.getAccount()]);
    // Sell-back is not a read: it does not wait for the budget.
    const sb = c.sellBack([{ card_id: 'c1', pull_id: 'p-1' }]);
    const r = await drive(clock, pacer, Promise.all([reads, sb]));
    expect(r.ok).toBe(true);
    const readTimes = seenAt.filter((t) => t >= 0);
    expect(readTimes).toEqual([0, 0, 60_000, 120_000]);
    expect(seenAt.filter((t) => t < 0)).toEqual([-1]); // at t = 0
  });
});

describe('TokenBucket', () => {
  it('refills continuously up to its capacity', async () => {
    const clock = new VirtualClock(F.T0);
    const b = new TokenBucket(clock, { capacity: 3, refillPerHour: 3600 });
    await b.take();
    await b.take();
    await b.take();
    expect(b.available()).toBe(0);
    await clock.advance(1500);
    expect(b.available()).toBeCloseTo(1.5);
    await clock.advance(60_000);
    expect(b.available()).toBe(3);
  });

  it('rejects a nonsensical budget', () => {
    const clock = new VirtualClock(F.T0);
    expect(() => new TokenBucket(clock, { capacity: 0, refillPerHour: 10 })).toThrow(RangeError);
    expect(() => new Pacer(clock, { concurrency: 0 })).toThrow(RangeError);
  });
});
