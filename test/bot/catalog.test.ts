/**
 * The runner's shared catalog: pools and pack lists read once for every account, held once, and
 * each pool's distribution computed once; an account never scores a read older than it asked for.
 */
import { describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { SCOPES } from '../../src/api/schemas.js';
import { SharedCatalog } from '../../src/bot/buying/catalog.js';
import { readPools } from '../../src/bot/buying/market-view.js';
import { HOUR_MS, MINUTE_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { devKeys } from '../../src/market/world.js';
import { EmptyPoolError } from '../../src/strategy/distribution.js';
import { strategy } from '../strategy-builder.js';
import { CADENCE, driveUntil, fixture, KEY, START, TrackingClock, testBot, testWorld } from './helpers.js';

/** `api` with its catalog reads counted. */
function counting(api: PartnerApi): { api: PartnerApi; reads: { lists: number; pools: number } } {
  const reads = { lists: 0, pools: 0 };
  const wrapped: PartnerApi = Object.create(api);
  wrapped.listPacks = (q) => {
    reads.lists++;
    return api.listPacks(q);
  };
  wrapped.getPackPool = (q) => {
    reads.pools++;
    return api.getPackPool(q);
  };
  return { api: wrapped, reads };
}

/** The test world with a second risk level and a second account. */
function world() {
  const w = testWorld({
    accounts: [
      { id: 'acct_t', username: 'tester', balance: 5000 },
      { id: 'acct_u', username: 'second', balance: 5000 },
    ],
    keys: [
      ...(devKeys('acct_t') ?? []),
      { name: 'second', key: 'sk_sim_second', scopes: [...SCOPES], account: 'acct_u' },
    ],
  });
  return w;
}

const standard = strategy({}, { base: 'bot' });
const both = strategy(
  { packs: { categories: ['pokemon'], risk_levels: ['standard', 'aggressive'] } },
  { base: 'bot' },
);

describe('SharedCatalog', () => {
  it('reads a category once for accounts that ask at the same time, and hands out the same pools', async () => {
    const clock = new VirtualClock(START);
    const market = new Market(world(), { clock, seed: 1 });
    const a = counting(market.api(KEY));
    const b = counting(market.api('sk_sim_second'));
    const catalog = new SharedCatalog(() => clock.now());
    const [ra, rb] = await Promise.all([
      readPools(catalog, a.api, standard),
      readPools(catalog, b.api, standard),
    ]);
    expect(a.reads.lists + b.reads.lists).toBe(1);
    expect(a.reads.pools + b.reads.pools).toBe(1);
    expect(ra.pools).toHaveLength(1);
    expect(rb.pools[0]).toBe(ra.pools[0]);
    expect(catalog.distribution(ra.pools[0]!)).toBe(catalog.distribution(rb.pools[0]!));
  });

  it("keeps an emptied pool's error with its read: the same error for every account that scores it", () => {
    const catalog = new SharedCatalog(() => 0);
    const empty = { category: 'pokemon', pack_type: 'gone', risk_level: 'standard', bands: [], cards: [] };
    const thrown = (f: () => unknown) => {
      try {
        f();
      } catch (e) {
        return e;
      }
      throw new Error('did not throw');
    };
    const pool = empty as unknown as Parameters<SharedCatalog['distribution']>[0];
    const first = thrown(() => catalog.distribution(pool));
    expect(first).toBeInstanceOf(EmptyPoolError);
    expect(thrown(() => catalog.distribution(pool))).toBe(first);
  });

  it('reads again for an account that needs a read made after a time, once for all who ask then', async () => {
    const clock = new VirtualClock(START);
    const market = new Market(world(), { clock, seed: 1 });
    const a = counting(market.api(KEY));
    const catalog = new SharedCatalog(() => clock.now());
    const first = await readPools(catalog, a.api, standard);
    await clock.advance(5 * MINUTE_MS);
    // Still recent enough for a look that asks nothing newer.
    expect((await readPools(catalog, a.api, standard)).pools[0]).toBe(first.pools[0]);
    expect(a.reads.pools).toBe(1);
    const due = first.readAt + 5 * MINUTE_MS;
    const again = await Promise.all([1, 2, 3].map(() => readPools(catalog, a.api, standard, due)));
    expect(a.reads.pools).toBe(2);
    expect(again[0]!.readAt).toBeGreaterThanOrEqual(due);
    expect(again[2]!.pools[0]).toBe(again[0]!.pools[0]);
  });

  it('reads again when a strategy wants a pool the last read left out, then holds both', async () => {
    const clock = new VirtualClock(START);
    const band = (id: string, min: number, max: number, odds: number, count: number) => ({
      bucket_id: id,
      min_value: min,
      max_value: max,
      odds: { standard: odds, aggressive: odds },
      generate: { count, distribution: 'uniform' as const },
    });
    const w = testWorld({
      categories: {
        pokemon: {
          packs: [
            {
              pack_type: 'lucky',
              name: 'Lucky Pack',
              price: 10,
              max_quantity: 10,
              risk_levels: ['standard', 'aggressive'],
              bands: [band('low', 5, 9, 0.7, 400), band('high', 30, 60, 0.3, 200)],
            },
          ],
        },
      },
    });
    const market = new Market(w, { clock, seed: 1 });
    const a = counting(market.api(KEY));
    const catalog = new SharedCatalog(() => clock.now());
    catalog.want('a', standard);
    expect((await readPools(catalog, a.api, standard)).pools.map((p) => p.risk_level)).toEqual(['standard']);
    const wider = await readPools(catalog, a.api, both);
    expect(wider.pools.map((p) => p.risk_level)).toEqual(['standard', 'aggressive']);
    expect(a.reads.pools).toBe(3);
    // The account that wanted standard only is served from the wider read.
    expect((await readPools(catalog, a.api, standard)).pools.map((p) => p.risk_level)).toEqual(['standard']);
    expect(a.reads.pools).toBe(3);
  });

  it('two account bots on one catalog read the pools as often as one bot alone', async () => {
    // A strategy that never opens: each bot looks again at every pool cadence.
    const never = strategy({ open: { min_ev_ratio: 50, max_quantity: 1, sizing: 'fixed' } }, { base: 'bot' });
    const readsOver = async (bots: number): Promise<number> => {
      const virtual = new VirtualClock(START);
      const clock = new TrackingClock(virtual);
      const market = new Market(world(), { clock: virtual, seed: 1 });
      const keys = [KEY, 'sk_sim_second'];
      const catalog = new SharedCatalog(() => clock.now());
      let pools = 0;
      const running = [];
      for (let i = 0; i < bots; i++) {
        const f = fixture({ world: world(), strategy: never, clock: virtual });
        const c = counting(market.api(keys[i]!));
        running.push({
          c,
          bot: testBot(
            { ...f, clock: clock as never },
            { api: c.api, account: `acct${i}`, catalog, staggerMs: i * 200 },
          ),
        });
      }
      for (const r of running) await r.bot.start();
      await driveUntil(clock, START + HOUR_MS, 3 * bots);
      for (const r of running) {
        await r.bot.stop();
        pools += r.c.reads.pools;
      }
      return pools;
    };
    const alone = await readsOver(1);
    expect(alone).toBe(HOUR_MS / CADENCE.poolsMs + 1);
    expect(await readsOver(2)).toBe(alone);
  });

  it('syncs a shop once for accounts that ask together; a stopped sync leaves it to the next', async () => {
    const clock = new VirtualClock(START);
    const catalog = new SharedCatalog(() => clock.now());
    let syncs = 0;
    const cards = [{ id: 'c1' }] as never[];
    const sync = async () => {
      syncs++;
      await clock.sleep(0);
      return cards;
    };
    const asks = Promise.all([catalog.shop('pokemon', 0, sync), catalog.shop('pokemon', 0, sync)]);
    await clock.advance(0);
    const [a, b] = await asks;
    expect(syncs).toBe(1);
    expect(b).toBe(a);
    expect(a!.cards).toBe(cards);
    // Due again: one new sync; one that was stopped hands the next asker its own.
    await clock.advance(15 * MINUTE_MS);
    const stopped = catalog.shop('pokemon', clock.now(), async () => undefined);
    const next = catalog.shop('pokemon', clock.now(), sync);
    expect(await stopped).toBeUndefined();
    expect((await next)!.sentAt).toBe(clock.now());
    expect(syncs).toBe(2);
  });
});
