import { describe, expect, it } from 'vitest';
import { PackPool, PackPurchaseResponse } from '../../src/api/schemas.js';
import { DEFAULT_WORLD_PATH, loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { Market } from '../../src/market/market.js';
import { AliasTable, FenwickTree, UniformBag } from '../../src/market/sampler.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { parseWorld, worldFromSnapshot } from '../../src/market/world.js';
import { testWorld } from './helpers.js';

describe('samplers', () => {
  it('alias table and Fenwick tree draw in proportion to their weights', () => {
    const w = [1, 0, 3, 6];
    const alias = new AliasTable(w);
    const fen = new FenwickTree(w);
    const rng = new Rng(1);
    const a = [0, 0, 0, 0];
    const f = [0, 0, 0, 0];
    const n = 200_000;
    for (let i = 0; i < n; i++) {
      a[alias.draw(rng)]!++;
      f[fen.draw(rng)]!++;
    }
    for (let i = 0; i < 4; i++) {
      expect(a[i]! / n).toBeCloseTo(w[i]! / 10, 2);
      expect(f[i]! / n).toBeCloseTo(w[i]! / 10, 2);
    }
    fen.set(3, 0);
    expect(fen.total()).toBe(4);
    for (let i = 0; i < 1000; i++) expect([0, 2]).toContain(fen.draw(rng));
    fen.set(0, 0);
    fen.set(2, 0);
    expect(fen.draw(rng)).toBe(-1);
    expect(() => new AliasTable([0, 0])).toThrow();
  });

  it('uniform bag removes and draws in O(1) without losing slots', () => {
    const bag = new UniformBag(2);
    for (let i = 0; i < 100; i++) bag.add(i);
    bag.remove(50);
    bag.remove(50);
    expect(bag.count).toBe(99);
    const rng = new Rng(3);
    const seen = new Set<number>();
    while (bag.count > 0) {
      const s = bag.pick(rng);
      expect(seen.has(s)).toBe(false);
      seen.add(s);
      bag.remove(s);
    }
    expect(seen.size).toBe(99);
    expect(seen.has(50)).toBe(false);
  });
});

describe('market model', () => {
  it('is deterministic for a seed and a sequence of times', async () => {
    const run = async () => {
      const clock = new VirtualClock();
      const m = new Market(parseWorld(testWorld()), { clock, seed: 99 });
      const api = m.api('sk_sim_full');
      const out = [];
      for (let i = 0; i < 5; i++) {
        out.push(await api.purchasePacks({ pack_type: 'basic', quantity: 2 }, `key-number-${i}`));
        clock.advanceSync(61_000);
      }
      return out;
    };
    expect(await run()).toEqual(await run());
  });

  it('money is conserved and no card is in two places, under dynamics and random trading', async () => {
    const clock = new VirtualClock();
    const world = loadWorld();
    const m = new Market(world, { clock, seed: 5 });
    const api = m.api('sk_sim_full');
    const rng = new Rng(11);
    let charged = 0;
    for (let i = 0; i < 60; i++) {
      const r = PackPurchaseResponse.parse(
        await api.purchasePacks({ pack_type: 'starter', quantity: 1 + rng.int(3) }, `order-${i}-xyz`),
      );
      charged += Math.round(r.total_charged * 100);
      // A replay never charges again.
      await api.purchasePacks({ pack_type: 'starter', quantity: r.quantity }, `order-${i}-xyz`);
      const cards = r.pulls.filter((p) => p.kind === 'card');
      if (cards.length && rng.next() < 0.5)
        await api.sellBack(cards.map((p) => ({ card_id: p.item.id, pull_id: p.pull_id })));
      clock.advanceSync(60_000 + rng.int(3_600_000));
      expect(m.audit()).toEqual([]);
    }
    const purchases = m.ledger().filter((e) => e.kind === 'pack_purchase');
    expect(-purchases.reduce((s, e) => s + e.amountCents, 0)).toBe(charged);
    const acct = await api.getAccount();
    const sum = m.ledger().reduce((s, e) => s + (e.accountId === 'acct_dev' ? e.amountCents : 0), 0);
    expect(Math.round(acct.balance * 100)).toBe(1_000_000 + sum);
    // Others opened packs meanwhile: the report has rows from other users.
    const report = await api.getPurchaseReport({});
    expect(new Set(report.pulls.map((p) => p.user_id)).size).toBeGreaterThan(1);
  });

  it('cards taken by other users leave the inventory: slots reused, ids answered for a day', async () => {
    const clock = new VirtualClock();
    const m = new Market(loadWorld(), { clock, seed: 3 });
    const api = m.api('sk_sim_full');
    const live = () =>
      Object.values(m.dump().cards_by_location as Record<string, number>).reduce((a, n) => a + n, 0);
    const start = live();
    const shopIds = new Set((await api.listShopCards({ per_page: 1000 })).cards.map((c) => c.id));
    let taken: string | undefined;
    for (let h = 1; h <= 5 * 24; h++) {
      clock.advanceSync(3_600_000);
      m.syncNow();
      if (taken === undefined) {
        const now = new Set((await api.listShopCards({ per_page: 1000 })).cards.map((c) => c.id));
        taken = [...shopIds].find((id) => !now.has(id));
        // Bought by another user a moment ago: no longer available, as long as the id is remembered.
        if (taken !== undefined)
          await expect(
            api.purchaseCard({ card_id: taken, max_price: 1e6 }, 'taken-card-1'),
          ).rejects.toMatchObject({
            status: 409,
          });
      }
    }
    const dump = m.dump();
    expect(dump.cards_released).toBeGreaterThan(2000);
    // The stock refills what others take: the live cards stay near the world's size.
    expect(live()).toBeLessThan(start * 1.1);
    expect(dump.released_ids_remembered).toBeLessThan(1500);
    expect(m.audit()).toEqual([]);
    expect(taken).toBeDefined();
    await expect(api.purchaseCard({ card_id: taken!, max_price: 1e6 }, 'taken-card-2')).rejects.toMatchObject(
      {
        status: 404,
      },
    );
    const copy = Market.fromState(loadWorld(), m.saveState(), { clock });
    expect(copy.dump()).toEqual(m.dump());
    expect(copy.audit()).toEqual([]);
  });

  it('the default world: five categories, dev keys, promo EV above 1 and house edge elsewhere', async () => {
    const world = loadWorld(DEFAULT_WORLD_PATH);
    const m = new Market(world, { clock: new VirtualClock(), seed: 1 });
    const api = m.api('sk_sim_full');
    let promo = 0;
    for (const category of ['pokemon', 'onepiece', 'sports', 'riftbound', 'watches'] as const) {
      const { packs } = await api.listPacks({ category });
      expect(packs.length).toBeGreaterThan(0);
      for (const p of packs.filter((x) => x.available)) {
        const pool = PackPool.parse(await api.getPackPool({ category, pack_type: p.pack_type }));
        const ratio = pool.expected_value / pool.price;
        if (ratio > 1) promo++;
        else expect(ratio).toBeGreaterThan(0.8);
      }
    }
    expect(promo).toBeGreaterThanOrEqual(1);
    expect((await api.listShopCards({})).total).toBeGreaterThan(0);
    expect((await m.api('sk_sim_read').getAccount()).balance).toBe(10000);
  });

  it('builds a world from a snapshot: recorded cards become the inventory, unseen ones are generated', async () => {
    const m0 = new Market(parseWorld(testWorld()), { clock: new VirtualClock(), seed: 1 });
    const api0 = m0.api('sk_sim_full');
    const pools = [];
    for (const risk of ['chill', 'standard', 'aggressive'] as const)
      pools.push(await api0.getPackPool({ pack_type: 'basic', risk_level: risk }));
    const truncated = { ...pools[1]!, cards: pools[1]!.cards.slice(0, 5) };
    const snap = {
      format: 'packbot.snapshot/v1' as const,
      taken_at: '2026-01-01T00:00:00.000Z',
      source: 'test',
      account: null,
      pools: [pools[0]!, truncated, pools[2]!],
    };
    const world = worldFromSnapshot(snap, { dynamics: { others_pack_openings_per_hour: 0 } });
    const m = new Market(world, { clock: new VirtualClock(), seed: 2 });
    const pool = await m.api('sk_sim_full').getPackPool({ pack_type: 'basic' });
    expect(pool.bands.map((b) => [b.bucket_id, b.hittable_cards])).toEqual(
      pools[1]!.bands.map((b) => [b.bucket_id, b.hittable_cards]),
    );
    expect(pool.cards.map((c) => c.id)).toEqual(expect.arrayContaining(truncated.cards.map((c) => c.id)));
    expect(pool.chase?.probability).toBe(0.01);
  });

  it('SimClock: wall time plus an offset that advance adds to, waking sleepers', async () => {
    let wall = 1_000;
    const clock = new SimClock({ now: () => wall, sleep: async () => {} });
    expect(clock.now()).toBe(1_000);
    const woke = clock.sleep(60_000);
    clock.advance(60_000);
    await woke;
    wall += 5;
    expect(clock.now()).toBe(61_005);
    expect(() => clock.advance(-1)).toThrow();
  });
});
