/**
 * Spec "Endpoints" (and "Limits") rules over HTTP: response fields and types through the zod
 * schemas of src/api/schemas.ts, defaults, page bounds, ordering, windows, limits, sell-back,
 * listings and card purchase rules.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  Account,
  CardPurchaseResponse,
  Identity,
  PackList,
  PackPool,
  PackPurchaseResponse,
  PurchaseReportPage,
  SellBackResponse,
  ShopCardsPage,
  VaultPage,
} from '../../../src/api/schemas.js';
import {
  balance,
  buyCard,
  buyPacks,
  DAY_S,
  expectError,
  ikey,
  payout,
  pullCard,
  type Sim,
  sellBack,
  setFaults,
  shopCards,
  startConf,
  T0,
  vault,
} from './support.js';

let sim: Sim;
afterEach(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});
const iso = (ms: number) => new Date(ms).toISOString();

describe('pack purchase', () => {
  it('response fields; defaults category=pokemon, quantity=1, risk_level=standard; pull buyback offers', async () => {
    sim = await startConf();
    const r = await buyPacks(sim, { pack_type: 'basic' });
    expect(r.status).toBe(200);
    const body = PackPurchaseResponse.parse(r.json);
    expect(body).toMatchObject({
      pack_type: 'basic',
      quantity: 1,
      total_charged: 10,
      remaining_balance: 990,
    });
    expect(body.pulls).toHaveLength(1);
    expect(r.json.idempotent_replay).toBeUndefined();
    // Same key with the defaults spelled out is the same order (a replay), so they were the defaults.
    await sim.advance(60);
    const spelled = await buyPacks(
      sim,
      { pack_type: 'basic', category: 'pokemon', quantity: 1, risk_level: 'standard' },
      ikey(),
    );
    expect(spelled.status).toBe(200);
    const pool = PackPool.parse(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } })).json,
    );
    expect(pool.risk_level).toBe('standard');
    expect(pool.category).toBe('pokemon');
  });

  it('summary totals, best pull, and buyback: 0.9 for 5 minutes, after = 0.8 of the value at pull', async () => {
    sim = await startConf();
    const body = PackPurchaseResponse.parse(
      (await buyPacks(sim, { pack_type: 'basic', quantity: 6, risk_level: 'chill' })).json,
    );
    let total = 0;
    let now = 0;
    let best = body.pulls[0]!;
    for (const p of body.pulls) {
      total += Math.round(p.value * 100);
      if (p.value > best.value) best = p;
      if (p.kind === 'sealed_pack') {
        expect(p.buyback).toBeNull();
        continue;
      }
      expect(p.hit.bucket_odds).toBeGreaterThan(0);
      expect(p.buyback).toMatchObject({
        rate: 0.9,
        amount: payout(p.value, 0.9),
        valid_until: iso(T0 + 5 * 60_000),
        after: { rate: 0.8, amount: payout(p.value, 0.8) },
      });
      now += Math.round(p.buyback!.amount * 100);
    }
    expect(Math.round(body.summary.total_value * 100)).toBe(total);
    expect(Math.round(body.summary.buyback_now_total * 100)).toBe(now);
    expect(body.summary.best_pull).toMatchObject({
      pull_id: best.pull_id,
      value: best.value,
      name: best.item.name,
    });
  });

  it('quantity: 1 to 10 and at most the pack max_quantity', async () => {
    sim = await startConf();
    expectError(await buyPacks(sim, { pack_type: 'sealedonly', quantity: 6 }), 400); // max_quantity 5
    expect((await buyPacks(sim, { pack_type: 'sealedonly', quantity: 5 })).status).toBe(200);
    await sim.advance(60);
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 10 })).status).toBe(200);
  });

  it('all or nothing: more packs than the pool holds fails with 500 and nothing stands', async () => {
    sim = await startConf();
    const r = await buyPacks(sim, { pack_type: 'tiny', quantity: 2 }); // one card in the pool
    expectError(r, 500);
    expect(await balance(sim)).toBe(1000);
    expect((await vault(sim)).total).toBe(0);
  });
});

describe('catalog', () => {
  it('list packs: default pokemon, fields, never-buyable omitted, out of stock listed with a reason', async () => {
    sim = await startConf();
    const r = PackList.parse((await sim.call('GET', '/catalog/packs')).json);
    expect(r.category).toBe('pokemon');
    const byType = new Map(r.packs.map((p) => [p.pack_type, p]));
    expect(byType.has('hidden')).toBe(false);
    expect(byType.get('soldout')).toMatchObject({ available: false, reason: expect.any(String) });
    expect(byType.get('basic')).toMatchObject({ available: true, price: 10, max_quantity: 10 });
    expect(byType.get('basic')!.reason ?? undefined).toBeUndefined();
    expect(byType.get('single')).toMatchObject({ max_quantity: 1, risk_levels: ['standard'] });
    expectError(await sim.call('GET', '/catalog/packs', { query: { category: 'cars' } }), 400);
  });

  it('pack pool: defaults, bands, 0-odds bands listed without cards, cards highest value first', async () => {
    sim = await startConf();
    for (const risk of ['chill', 'standard', 'aggressive'] as const) {
      const r = await sim.call('GET', '/catalog/packs/pool', {
        query: { pack_type: 'basic', risk_level: risk },
      });
      const pool = PackPool.parse(r.json);
      expect(pool).toMatchObject({
        pack_type: 'basic',
        category: 'pokemon',
        risk_level: risk,
        price: 10,
        available: true,
      });
      const sum = pool.bands.reduce((s, b) => s + b.odds, 0);
      expect(sum).toBeCloseTo(1, 9);
      for (const b of pool.bands) {
        const inBand = pool.cards.filter((c) => c.bucket_id === b.bucket_id).length;
        expect(b.hittable_cards).toBe(inBand);
        if (b.odds === 0) expect(inBand).toBe(0);
      }
      for (const c of pool.cards) expect(pool.bands.map((b) => b.bucket_id)).toContain(c.bucket_id);
      for (let i = 1; i < pool.cards.length; i++)
        expect(pool.cards[i - 1]!.market_value).toBeGreaterThanOrEqual(pool.cards[i]!.market_value);
      expect(pool.total_cards).toBe(pool.cards.length);
      expect(pool.chase).toMatchObject({ probability: 0.01, label: 'Big one', ends_at: null });
    }
    const chill = PackPool.parse(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic', risk_level: 'chill' } }))
        .json,
    );
    expect(chill.bands.find((b) => b.bucket_id === 'high')).toMatchObject({ odds: 0, hittable_cards: 0 });
    expectError(await sim.call('GET', '/catalog/packs/pool', {}), 400); // pack_type is required
  });

  it('shop cards: defaults, id ascending, paging to total, per_page 1..1000, shop stock only', async () => {
    sim = await startConf();
    const first = ShopCardsPage.parse((await sim.call('GET', '/catalog/cards')).json);
    expect(first).toMatchObject({ category: 'pokemon', page: 1, per_page: 500 });
    expect(first.cards).toHaveLength(first.total);
    const ids = first.cards.map((c) => c.id);
    expect([...ids].sort()).toEqual(ids);
    for (const c of first.cards) expect(c.sale_status).toBe('shop');
    const paged: string[] = [];
    for (let page = 1; paged.length < first.total; page++) {
      const p = ShopCardsPage.parse(
        (await sim.call('GET', '/catalog/cards', { query: { page, per_page: 7 } })).json,
      );
      expect(p.total).toBe(first.total);
      expect(p.cards.length).toBeGreaterThan(0);
      paged.push(...p.cards.map((c) => c.id));
    }
    expect(paged).toEqual(ids);
    for (const per_page of [0, 1001, -1, 'x'])
      expectError(await sim.call('GET', '/catalog/cards', { query: { per_page } }), 400);
    expectError(await sim.call('GET', '/catalog/cards', { query: { page: 0 } }), 400);
    for (const per_page of [1, 1000])
      expect((await sim.call('GET', '/catalog/cards', { query: { per_page } })).status).toBe(200);
    // Other users' listings are not shop stock.
    const listed = (await sim.call('GET', '/sim/v1/listings')).json.listings.map(
      (l: { card_id: string }) => l.card_id,
    );
    expect(listed.length).toBeGreaterThan(0);
    for (const id of listed) expect(ids).not.toContain(id);
  });
});

describe('vault', () => {
  it('defaults and bounds; includes listed cards, excludes shipped and sold-back cards', async () => {
    sim = await startConf();
    const a = await pullCard(sim);
    const b = await pullCard(sim);
    const c = await pullCard(sim);
    const page = VaultPage.parse((await sim.call('GET', '/vault')).json);
    expect(page).toMatchObject({ category: 'pokemon', page: 1, per_page: 100 });
    const e = page.cards.find((x) => x.card_id === a.item.id)!;
    expect(e).toMatchObject({ pull_id: a.pull_id, value: a.value, listed: false });
    expect(e.pulled_at).not.toBeNull();
    expect((await sim.call('GET', '/vault', { query: { per_page: 200 } })).status).toBe(200);
    for (const per_page of [0, 201])
      expectError(await sim.call('GET', '/vault', { query: { per_page } }), 400);

    expect(
      (await sim.call('POST', '/listings', { body: { card_id: a.item.id, price: a.value } })).status,
    ).toBe(200);
    expect((await sim.call('POST', '/sim/v1/ship', { body: { card_id: b.item.id } })).status).toBe(200);
    await sellBack(sim, [{ card_id: c.item.id, pull_id: c.pull_id }]);
    const ids = (await vault(sim)).cards.map((x) => x.card_id);
    expect(ids).toContain(a.item.id);
    expect(ids).not.toContain(b.item.id);
    expect(ids).not.toContain(c.item.id);
    expect((await vault(sim)).cards.find((x) => x.card_id === a.item.id)).toMatchObject({
      listed: true,
      buyback: null,
    });
    // Shipped cards cannot be sold back either.
    const r = await sellBack(sim, [{ card_id: b.item.id, pull_id: b.pull_id }]);
    expect(r.json.results[0].status).toBe('failed');
  });

  it('paging', async () => {
    sim = await startConf();
    await buyPacks(sim, { pack_type: 'single' });
    for (let i = 0; i < 2; i++) {
      await sim.advance(60);
      await buyPacks(sim, { pack_type: 'single' });
    }
    const all = (await vault(sim)).cards.map((x) => x.card_id);
    expect(all).toHaveLength(3);
    const paged: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const p = VaultPage.parse((await sim.call('GET', '/vault', { query: { page, per_page: 1 } })).json);
      expect(p.total).toBe(3);
      paged.push(...p.cards.map((x) => x.card_id));
    }
    expect(paged).toEqual(all);
  });
});

describe('account and limits', () => {
  it('fields reflect purchases; 60 s speed limit; next_purchase_at; the daily ceiling', async () => {
    sim = await startConf();
    let acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct).toMatchObject({ username: 'alice', balance: 1000 });
    expect(acct.limits).toMatchObject({
      packs_today: 0,
      max_packs_per_day: 100,
      packs_left_today: 100,
      resets_at: '2026-01-02T00:00:00.000Z',
      min_seconds_between_purchases: 60,
      next_purchase_at: iso(T0),
    });
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 3 })).status).toBe(200);
    acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct.balance).toBe(970);
    expect(acct.limits).toMatchObject({
      packs_today: 3,
      packs_left_today: 97,
      next_purchase_at: iso(T0 + 60_000),
    });
    await sim.advance(59);
    const r = await buyPacks(sim, { pack_type: 'basic' });
    expectError(r, 429, 'RATE_LIMITED');
    expect(r.json.retry_after_seconds).toBe(1);
    expect(r.headers.get('retry-after')).toBe('1');
    await sim.advance(1);
    expect((await buyPacks(sim, { pack_type: 'basic' })).status).toBe(200);
  });

  it('the read key sees the same account limits', async () => {
    sim = await startConf();
    await buyPacks(sim, { pack_type: 'basic', quantity: 2 });
    const acct = Account.parse((await sim.call('GET', '/account', { key: 'sk_sim_read' })).json);
    expect(acct.balance).toBe(980);
    expect(acct.limits.packs_today).toBe(2);
  });

  it('a failed purchase gives its slot back (both limits)', async () => {
    sim = await startConf();
    await setFaults(sim, { 'POST /packs/purchase': { error_rate: 1, times: 1 } });
    expectError(await buyPacks(sim, { pack_type: 'basic', quantity: 4 }), 500);
    let acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct.limits).toMatchObject({ packs_today: 0, next_purchase_at: iso(T0) });
    expectError(await buyPacks(sim, { pack_type: 'basic', quantity: 11 }), 400);
    expectError(await buyPacks(sim, { pack_type: 'basic' }, ikey(), 'sk_poor'), 400);
    expect((await buyPacks(sim, { pack_type: 'basic' })).status).toBe(200); // no 429
    acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct.limits.packs_today).toBe(1);
  });

  it('a retry of an order already sent never counts against either limit', async () => {
    sim = await startConf();
    const k = ikey();
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 2 }, k)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      await sim.advance(1);
      const r = await buyPacks(sim, { pack_type: 'basic', quantity: 2 }, k);
      expect(r.status).toBe(200);
      expect(r.json.idempotent_replay).toBe(true);
    }
    const acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct.limits).toMatchObject({ packs_today: 2, next_purchase_at: iso(T0 + 60_000) });
    // At the daily ceiling a retry of a finished order is still its stored result, not a 429.
    const full = ikey();
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 5 }, full, 'sk_small')).status).toBe(200);
    await sim.advance(1);
    const replay = await buyPacks(sim, { pack_type: 'basic', quantity: 5 }, full, 'sk_small');
    expect(replay.status).toBe(200);
    expect(replay.json.idempotent_replay).toBe(true);
  });

  it('the daily count resets at midnight UTC', async () => {
    sim = await startConf();
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 4 }, ikey(), 'sk_small')).status).toBe(200);
    await sim.advance(12 * 3600 - 61); // 23:58:59 UTC
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 2 }, ikey(), 'sk_small')).json.code).toBe(
      'DAILY_LIMIT_REACHED',
    );
    await sim.advance(61); // 00:00:00 UTC
    const acct = Account.parse((await sim.call('GET', '/account', { key: 'sk_small' })).json);
    expect(acct.limits).toMatchObject({
      packs_today: 0,
      packs_left_today: 5,
      resets_at: '2026-01-03T00:00:00.000Z',
    });
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 5 }, ikey(), 'sk_small')).status).toBe(200);
  });
});

describe('identity', () => {
  it('linked keys show the account; the unlinked key shows linked false and account null', async () => {
    sim = await startConf();
    for (const key of ['sk_sim_full', 'sk_sim_read']) {
      const me = Identity.parse((await sim.call('GET', '/me', { key })).json);
      expect(me.linked).toBe(true);
      expect(me.account).toMatchObject({ id: 'acct_a', username: 'alice', profile_url: expect.any(String) });
    }
    const full = Identity.parse((await sim.call('GET', '/me')).json);
    expect([...full.key.scopes].sort()).toEqual(
      [
        'read:catalog',
        'read:account',
        'read:pulls',
        'rip:packs',
        'buy:cards',
        'sell:cards',
        'write:listings',
      ].sort(),
    );
    const read = Identity.parse((await sim.call('GET', '/me', { key: 'sk_sim_read' })).json);
    expect([...read.key.scopes].sort()).toEqual(['read:account', 'read:catalog']);
    const un = Identity.parse((await sim.call('GET', '/me', { key: 'sk_sim_unlinked' })).json);
    expect(un).toMatchObject({ linked: false, account: null, key: { name: expect.any(String) } });
  });
});

describe('purchase report', () => {
  it('defaults: until = now, since = until - 7 days; page 1, per_page 500; bounds', async () => {
    sim = await startConf();
    await sim.advance(3600);
    const now = sim.clock.now();
    const d = PurchaseReportPage.parse((await sim.call('GET', '/pulls')).json);
    expect(d).toMatchObject({ until: iso(now), since: iso(now - 7 * DAY_S * 1000), page: 1, per_page: 500 });
    const until = T0 + 1000;
    const u = PurchaseReportPage.parse(
      (await sim.call('GET', '/pulls', { query: { until: iso(until) } })).json,
    );
    expect(u.since).toBe(iso(until - 7 * DAY_S * 1000));
    for (const per_page of [0, 1001])
      expectError(await sim.call('GET', '/pulls', { query: { per_page } }), 400);
    expect((await sim.call('GET', '/pulls', { query: { per_page: 1000 } })).status).toBe(200);
  });

  it('rows; inclusive bounds; internal accounts excluded; closed windows stable across pages', async () => {
    sim = await startConf();
    const t1 = sim.clock.now();
    await buyPacks(sim, { pack_type: 'basic', quantity: 2 });
    await buyPacks(sim, { pack_type: 'basic' }, ikey(), 'sk_house'); // internal account
    await sim.advance(60);
    const t2 = sim.clock.now();
    await buyPacks(sim, { pack_type: 'single' });
    await sim.advance(60);
    const rows = PurchaseReportPage.parse(
      (await sim.call('GET', '/pulls', { query: { since: iso(t1), until: iso(t2) } })).json,
    );
    expect(rows.total).toBe(3);
    expect(rows.pulls.map((p) => [p.created_at, p.amount, p.source, p.pack_type])).toEqual([
      [iso(t1), 10, 'pokemon', 'basic'],
      [iso(t1), 10, 'pokemon', 'basic'],
      [iso(t2), 100, 'pokemon', 'single'],
    ]);
    expect(new Set(rows.pulls.map((p) => p.user_id)).size).toBe(1);
    expect(
      (await sim.call('GET', '/pulls', { query: { since: iso(t1 + 1), until: iso(t2) } })).json.total,
    ).toBe(1);
    expect(
      (await sim.call('GET', '/pulls', { query: { since: iso(t1), until: iso(t2 - 1) } })).json.total,
    ).toBe(2);
    // Closed window: pages are consistent and stable while new purchases arrive.
    const q = { since: iso(t1), until: iso(t2) };
    const paged = async () => {
      const out: unknown[] = [];
      for (let page = 1; page <= 3; page++)
        out.push(...(await sim.call('GET', '/pulls', { query: { ...q, page, per_page: 1 } })).json.pulls);
      return out;
    };
    const p1 = await paged();
    expect(p1).toEqual(rows.pulls);
    await buyPacks(sim, { pack_type: 'basic' });
    await sim.advance(3600);
    expect(await paged()).toEqual(p1);
    expect((await sim.call('GET', '/pulls', { query: q })).json).toEqual(rows);
  });

  it('purchases with amount 0 and internal accounts are excluded (other users in the background)', async () => {
    for (const dyn of [
      { others_free_opening_fraction: 1, others_internal_fraction: 0 },
      { others_free_opening_fraction: 0, others_internal_fraction: 1 },
    ]) {
      sim = await startConf({ dynamics: { others_pack_openings_per_hour: 5, ...dyn } });
      await sim.advance(2 * 3600);
      const state = (await sim.call('GET', '/sim/v1/state')).json;
      expect(state.pack_openings).toBeGreaterThan(0);
      // Rows the report never shows are counted, not kept.
      expect(state.report_rows).toBe(0);
      const r = PurchaseReportPage.parse((await sim.call('GET', '/pulls')).json);
      expect(r.total).toBe(0);
      expect(sim.market.audit()).toEqual([]);
      await sim.close();
    }
    sim = await startConf();
  });
});

describe('sell-back', () => {
  it('items run in order; one failing does not stop the rest; sealed packs refused', async () => {
    sim = await startConf();
    const a = await pullCard(sim);
    const b = await pullCard(sim);
    await sim.advance(60);
    const sealed = PackPurchaseResponse.parse((await buyPacks(sim, { pack_type: 'sealedonly' })).json)
      .pulls[0]!;
    const before = await balance(sim);
    const r = SellBackResponse.parse(
      (
        await sellBack(sim, [
          { card_id: a.item.id, pull_id: a.pull_id },
          { card_id: 'nope', pull_id: 'nope' },
          { card_id: sealed.item.id, pull_id: sealed.pull_id },
          { card_id: b.item.id, pull_id: a.pull_id },
          { card_id: b.item.id, pull_id: b.pull_id },
        ])
      ).json,
    );
    expect(r.results.map((x) => [x.card_id, x.status])).toEqual([
      [a.item.id, 'sold'],
      ['nope', 'failed'],
      [sealed.item.id, 'failed'],
      [b.item.id, 'failed'],
      [b.item.id, 'sold'],
    ]);
    for (const x of r.results.filter((y) => y.status === 'failed')) expect(typeof x.error).toBe('string');
    const paid = r.results
      .filter((x) => x.status === 'sold')
      .reduce((s, x) => s + Math.round(x.payout_amount! * 100), 0);
    expect(Math.round(r.total_paid * 100)).toBe(paid);
    expect(r.remaining_balance).toBeCloseTo(before + paid / 100, 9);
  });

  it('items: 1 to 10 elements (400 otherwise)', async () => {
    sim = await startConf();
    const item = { card_id: 'x', pull_id: 'y' };
    for (const items of [[], Array(11).fill(item), 'x', [{ card_id: 'x' }]])
      expectError(await sim.call('POST', '/cards/sell-back', { body: { items } }), 400);
    expect(
      (await sim.call('POST', '/cards/sell-back', { body: { items: Array(10).fill(item) } })).status,
    ).toBe(200);
    expectError(await sim.call('POST', '/cards/sell-back', { body: {} }), 400);
  });

  it('someone else’s pull cannot be sold back', async () => {
    sim = await startConf();
    const bob = await pullCard(sim, 'sk_bob');
    const r = await sellBack(sim, [{ card_id: bob.item.id, pull_id: bob.pull_id }]);
    expect(r.json.results[0].status).toBe('failed');
    expect(r.json.total_paid).toBe(0);
  });
});

describe('listings', () => {
  it('price above the minimum and at most 2x the market value', async () => {
    sim = await startConf();
    const a = await pullCard(sim);
    const max = Math.round(a.value * 200) / 100;
    for (const price of [0, 1, -5, max + 0.01, '5'])
      expectError(await sim.call('POST', '/listings', { body: { card_id: a.item.id, price } }), 400);
    expectError(await sim.call('POST', '/listings', { body: { price: 5 } }), 400);
    const ok = await sim.call('POST', '/listings', { body: { card_id: a.item.id, price: 1.01 } });
    expect(ok.status).toBe(200);
    await sim.call('DELETE', '/listings', { body: { card_id: a.item.id } });
    expect((await sim.call('POST', '/listings', { body: { card_id: a.item.id, price: max } })).status).toBe(
      200,
    );
  });

  it('the caller must hold the card; sealed packs and others’ cards refused; delist of an unlisted card refused', async () => {
    sim = await startConf();
    const bob = await pullCard(sim, 'sk_bob');
    const r = await sim.call('POST', '/listings', { body: { card_id: bob.item.id, price: bob.value } });
    expect(r.status).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    const sealed = PackPurchaseResponse.parse((await buyPacks(sim, { pack_type: 'sealedonly' })).json)
      .pulls[0]!;
    const s = await sim.call('POST', '/listings', { body: { card_id: sealed.item.id, price: 1.5 } });
    expect(s.status).toBeGreaterThanOrEqual(400);
    expect(s.status).toBeLessThan(500);
    const a = await pullCard(sim);
    const d = await sim.call('DELETE', '/listings', { body: { card_id: a.item.id } });
    expect(d.status).toBeGreaterThanOrEqual(400);
    expect(d.status).toBeLessThan(500);
    const db = await sim.call('DELETE', '/listings', { body: { card_id: bob.item.id } });
    expect(db.status).toBeGreaterThanOrEqual(400);
    expect(db.status).toBeLessThan(500);
  });
});

describe('card purchase', () => {
  it('fee of 1 USD; total_charged = price + fee; the card leaves the shop; the item is the card', async () => {
    sim = await startConf();
    const c = (await shopCards(sim))[3]!;
    const r = CardPurchaseResponse.parse(
      (await buyCard(sim, { card_id: c.id, max_price: c.price + 5 })).json,
    );
    expect(r.price).toBe(c.price); // charged the current price, not max_price
    expect(r.fee).toBe(1);
    expect(Math.round(r.total_charged * 100)).toBe(Math.round(c.price * 100) + 100);
    expect(r.remaining_balance).toBeCloseTo(1000 - r.total_charged, 9);
    expect(r.item.id).toBe(c.id);
    expect(r.needs_review).toBeUndefined();
    const ledger = sim.market.ledger().filter((e) => e.accountId === 'acct_a');
    expect(ledger.reduce((s, e) => s + e.amountCents, 0)).toBe(-Math.round(r.total_charged * 100));
  });

  it('needs_review (injected): the sale went through and the card belongs to the buyer', async () => {
    sim = await startConf();
    await setFaults(sim, { 'POST /cards/purchase': { needs_review_rate: 1, times: 1 } });
    const c = (await shopCards(sim))[0]!;
    const r = CardPurchaseResponse.parse((await buyCard(sim, { card_id: c.id, max_price: c.price })).json);
    expect(r.needs_review).toBe(true);
    expect((await vault(sim)).cards.map((x) => x.card_id)).toContain(c.id);
  });
});
