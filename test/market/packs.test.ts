import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Account,
  ErrorBody,
  PackPool,
  PackPurchaseResponse,
  SellBackResponse,
  VaultPage,
} from '../../src/api/schemas.js';
import { until } from '../until.js';
import { ikey, type Sim, startSim, T0 } from './helpers.js';

let sim: Sim;
beforeEach(async () => {
  sim = await startSim();
});
afterEach(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

const buy = (body: unknown, idem = ikey(), key = 'sk_sim_full') =>
  sim.call('POST', '/packs/purchase', { body, idem, key });

describe('pack purchase', () => {
  it('charges, lands cards in the vault and offers 0.9 for 5 minutes then 0.8 of the value at pull', async () => {
    const r = await buy({ pack_type: 'basic', quantity: 3 });
    expect(r.status).toBe(200);
    const body = PackPurchaseResponse.parse(r.json);
    expect(body.total_charged).toBe(30);
    expect(body.remaining_balance).toBe(970);
    expect(body.idempotent_replay).toBeUndefined();
    expect(body.pulls).toHaveLength(3);
    let total = 0;
    for (const p of body.pulls) {
      total += p.value;
      if (p.kind === 'sealed_pack') {
        expect(p.buyback).toBeNull();
        expect(p.hit.bucket).toBe('sealed');
        continue;
      }
      expect(p.buyback!.rate).toBe(0.9);
      expect(p.buyback!.amount).toBeCloseTo(Math.round(p.value * 90) / 100, 5);
      expect(Date.parse(p.buyback!.valid_until)).toBe(T0 + 5 * 60_000);
      expect(p.buyback!.after.rate).toBe(0.8);
      expect(p.buyback!.after.amount).toBeCloseTo(Math.round(p.value * 80) / 100, 5);
    }
    expect(body.summary.total_value).toBeCloseTo(total, 5);
    const vault = VaultPage.parse((await sim.call('GET', '/vault')).json);
    expect(vault.total).toBe(body.pulls.filter((p) => p.kind === 'card').length);
    const ledger = sim.market.ledger();
    expect(ledger.map((e) => [e.kind, e.amountCents])).toEqual([['pack_purchase', -3000]]);
  });

  it('validates the request: key header, quantity, max_quantity, risk level, pack, balance (400)', async () => {
    const cases: [unknown, string | undefined][] = [
      [{ pack_type: 'basic' }, undefined],
      [{ pack_type: 'basic' }, 'short'],
      [{ pack_type: 'basic' }, 'bad key with spaces'],
      [{ pack_type: 'basic', quantity: 0 }, ikey()],
      [{ pack_type: 'basic', quantity: 11 }, ikey()],
      [{ pack_type: 'basic', quantity: 1.5 }, ikey()],
      [{ pack_type: 'single', quantity: 2 }, ikey()],
      [{ pack_type: 'single', risk_level: 'aggressive' }, ikey()],
      [{ pack_type: 'basic', risk_level: 'hot' }, ikey()],
      [{ pack_type: 'basic', category: 'cars' }, ikey()],
      [{ pack_type: 'nope' }, ikey()],
      [{ pack_type: 'hidden' }, ikey()],
      [{ pack_type: 'soldout' }, ikey()],
      [{}, ikey()],
    ];
    for (const [body, idem] of cases) {
      const r = await sim.call('POST', '/packs/purchase', { body, ...(idem ? { idem } : {}) });
      expect(r.status, JSON.stringify(body)).toBe(400);
      ErrorBody.parse(r.json);
    }
    const single = await buy({ pack_type: 'single', quantity: 2 });
    expect(single.json.error).toMatch(/multiples/);
    // 1000 USD buys 10 singles at most; the 11th is refused for balance, never overdrawn.
    const poor = await sim.call('POST', '/packs/purchase', {
      body: { pack_type: 'basic', quantity: 10 },
      idem: ikey(),
      key: 'sk_bob',
    });
    expect(poor.status).toBe(200);
    expect(sim.market.ledger()).toHaveLength(1);
  });

  it('refuses an order above the balance with 400 and charges nothing', async () => {
    for (let i = 0; i < 10; i++) {
      expect((await buy({ pack_type: 'single' })).status).toBe(200);
      await sim.advance(60);
    }
    const r = await buy({ pack_type: 'single' });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/insufficient balance/);
    expect(sim.market.balanceCents('acct_a')).toBe(0);
  });

  it('limits purchases to one per 60 s per key with Retry-After, and reports it in /account', async () => {
    expect((await buy({ pack_type: 'basic' })).status).toBe(200);
    await sim.advance(20);
    const r = await buy({ pack_type: 'basic' });
    expect(r.status).toBe(429);
    expect(r.json).toMatchObject({ code: 'RATE_LIMITED', retry_after_seconds: 40 });
    expect(r.headers.get('retry-after')).toBe('40');
    const acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct.limits.next_purchase_at).toBe(new Date(T0 + 60_000).toISOString());
    expect(acct.limits).toMatchObject({
      packs_today: 1,
      packs_left_today: 99,
      max_packs_per_day: 100,
      min_seconds_between_purchases: 60,
    });
    // Another key has its own speed limit.
    expect((await buy({ pack_type: 'basic' }, ikey(), 'sk_bob')).status).toBe(200);
    await sim.advance(40);
    expect((await buy({ pack_type: 'basic' })).status).toBe(200);
  });

  it('enforces the daily ceiling (a request that would exceed it is refused) and resets at midnight UTC', async () => {
    expect((await buy({ pack_type: 'basic', quantity: 4 }, ikey(), 'sk_small')).status).toBe(200);
    await sim.advance(60);
    const r = await buy({ pack_type: 'basic', quantity: 2 }, ikey(), 'sk_small');
    expect(r.status).toBe(429);
    expect(r.json).toMatchObject({
      code: 'DAILY_LIMIT_REACHED',
      limit: 5,
      used: 4,
      resets_at: '2026-01-02T00:00:00.000Z',
    });
    expect((await buy({ pack_type: 'basic', quantity: 1 }, ikey(), 'sk_small')).status).toBe(200);
    await sim.advance(60);
    expect((await buy({ pack_type: 'basic' }, ikey(), 'sk_small')).json.code).toBe('DAILY_LIMIT_REACHED');
    await sim.advance(12 * 3600);
    const ok = await buy({ pack_type: 'basic', quantity: 5 }, ikey(), 'sk_small');
    expect(ok.status).toBe(200);
  });

  it('idempotency: finished + same body replays without charging; other body is 422', async () => {
    const k = ikey();
    const first = await buy({ pack_type: 'basic', quantity: 2 }, k);
    const again = await buy({ pack_type: 'basic', quantity: 2 }, k);
    expect(again.status).toBe(200);
    expect(again.json.idempotent_replay).toBe(true);
    const { idempotent_replay: _r, ...rest } = again.json;
    expect(rest).toEqual(first.json);
    expect(sim.market.balanceCents('acct_a')).toBe(98000);
    const other = await buy({ pack_type: 'basic', quantity: 3 }, k);
    expect(other.status).toBe(422);
    expect(other.json.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // A replay is not a purchase: it never counts against either limit.
    const acct = (await sim.call('GET', '/account')).json;
    expect(acct.limits.packs_today).toBe(2);
  });

  it('idempotency: running gives 409 (same body) or 422 (other body), then finishes', async () => {
    await sim.call('POST', '/sim/v1/faults', {
      body: { faults: { 'POST /packs/purchase': { latency_ms: 2000, times: 1 } } },
    });
    const k = ikey();
    const slow = buy({ pack_type: 'basic' }, k);
    // Deterministic: the order is held running by the latency fault on the virtual clock; look
    // until the market reports it running.
    await until(async () => {
      const st = (await sim.call('GET', '/sim/v1/state')).json;
      return st.orders.some((o: { state: string }) => o.state === 'running');
    }, 'the order running');
    const busy = await buy({ pack_type: 'basic' }, k);
    expect(busy.status).toBe(409);
    expect(busy.json.code).toBe('IDEMPOTENCY_IN_PROGRESS');
    expect((await buy({ pack_type: 'tiny' }, k)).json.code).toBe('IDEMPOTENCY_KEY_REUSED');
    await sim.advance(2);
    expect((await slow).status).toBe(200);
  });

  it('a failed order is refunded as a whole, gives its slot back and its key runs again', async () => {
    await sim.call('POST', '/sim/v1/faults', {
      body: { 'POST /packs/purchase': { error_rate: 1, times: 1 } },
    });
    const k = ikey();
    const failed = await buy({ pack_type: 'basic', quantity: 5 }, k);
    expect(failed.status).toBe(500);
    expect(sim.market.balanceCents('acct_a')).toBe(100000);
    const pool = PackPool.parse(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } })).json,
    );
    expect(pool.total_cards).toBe(14);
    expect((await sim.call('GET', '/account')).json.limits.packs_today).toBe(0);
    const retry = await buy({ pack_type: 'basic', quantity: 5 }, k);
    expect(retry.status).toBe(200);
    expect(retry.json.idempotent_replay).toBeUndefined();
    expect(sim.market.ledger().map((e) => e.kind)).toEqual(['pack_purchase', 'pack_refund', 'pack_purchase']);
  });

  it('all or nothing: an order larger than what is left fails with 500 and nothing stands', async () => {
    const r = await buy({ pack_type: 'tiny', quantity: 2 });
    expect(r.status).toBe(500);
    expect(sim.market.balanceCents('acct_a')).toBe(100000);
    expect((await buy({ pack_type: 'tiny', quantity: 1 })).status).toBe(200);
    const list = (await sim.call('GET', '/catalog/packs')).json.packs;
    expect(list.find((p: { pack_type: string }) => p.pack_type === 'tiny')).toMatchObject({
      available: false,
      reason: expect.any(String),
    });
  });
});

describe('sell-back', () => {
  async function pullCards(n = 10) {
    const r = await buy({ pack_type: 'basic', quantity: n });
    return PackPurchaseResponse.parse(r.json).pulls;
  }
  const sell = (items: unknown[], key = 'sk_sim_full') =>
    sim.call('POST', '/cards/sell-back', { body: { items }, key });

  it('pays 0.9 within 5 minutes, then 0.8 of the value at pull, then 0.8 of the market value; once per pull', async () => {
    const pulls = (await pullCards()).filter((p) => p.kind === 'card');
    const [a, b, c] = pulls;
    const r1 = SellBackResponse.parse((await sell([{ card_id: a!.item.id, pull_id: a!.pull_id }])).json);
    expect(r1.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.9,
      payout_amount: a!.buyback!.amount,
    });
    expect(r1.total_paid).toBe(a!.buyback!.amount);
    await sim.advance(301);
    const r2 = (await sell([{ card_id: b!.item.id, pull_id: b!.pull_id }])).json;
    expect(r2.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.8,
      payout_amount: b!.buyback!.after.amount,
    });
    await sim.advance(7 * 86400);
    const vault = (await sim.call('GET', '/vault')).json;
    const entry = vault.cards.find((e: { card_id: string }) => e.card_id === c!.item.id);
    expect(entry.buyback.locked_value_until).toBeNull();
    const r3 = (await sell([{ card_id: c!.item.id, pull_id: c!.pull_id }])).json;
    expect(r3.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.8,
      payout_amount: entry.buyback.amount,
    });
    const again = (await sell([{ card_id: a!.item.id, pull_id: a!.pull_id }])).json;
    expect(again.results[0]).toMatchObject({
      status: 'already_sold',
      transaction_id: r1.results[0]!.transaction_id,
      payout_amount: r1.results[0]!.payout_amount,
    });
    expect(again.total_paid).toBe(0);
    expect(sim.market.ledger().filter((e) => e.kind === 'sell_back')).toHaveLength(3);
  });

  it('reports per-item failures in order without stopping the rest', async () => {
    const pulls = await pullCards();
    const cards = pulls.filter((p) => p.kind === 'card');
    const sealed = pulls.find((p) => p.kind === 'sealed_pack');
    const [ok, listed, other] = cards;
    expect(
      (await sim.call('POST', '/listings', { body: { card_id: listed!.item.id, price: listed!.value } }))
        .status,
    ).toBe(200);
    const items = [
      { card_id: 'nope', pull_id: ok!.pull_id },
      { card_id: ok!.item.id, pull_id: other!.pull_id },
      { card_id: listed!.item.id, pull_id: listed!.pull_id },
      ...(sealed ? [{ card_id: sealed.item.id, pull_id: sealed.pull_id }] : []),
      { card_id: ok!.item.id, pull_id: ok!.pull_id },
    ];
    const r = SellBackResponse.parse((await sell(items)).json);
    expect(r.results.map((x) => x.status)).toEqual([...items.slice(0, -1).map(() => 'failed'), 'sold']);
    for (const x of r.results.slice(0, -1)) expect(x.error).toEqual(expect.any(String));
    const notHolder = (await sell([{ card_id: other!.item.id, pull_id: other!.pull_id }], 'sk_bob')).json;
    expect(notHolder.results[0]).toMatchObject({ status: 'failed' });
    for (const bad of [
      [],
      Array.from({ length: 11 }, () => ({ card_id: 'a', pull_id: 'b' })),
      [{ card_id: 1 }],
    ])
      expect((await sell(bad)).status).toBe(400);
  });
});

describe('pack pool', () => {
  it('reports bands, EV from the pricing model, zero-odds bands without cards, cards highest first', async () => {
    const std = PackPool.parse(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } })).json,
    );
    expect(std.risk_level).toBe('standard');
    expect(std.bands.map((b) => b.odds)).toEqual([0.2, 0.6, 0.2].map((x) => expect.closeTo(x, 10)));
    const values = std.cards.map((c) => c.market_value);
    expect(values).toEqual([...values].sort((a, b) => b - a));
    const ev = 0.01 * 500 + 0.99 * (0.2 * 3 + 0.6 * 7.1 + 0.2 * 30);
    expect(std.expected_value).toBeCloseTo(Math.round(ev * 100) / 100, 5);
    expect(std.chase).toMatchObject({
      probability: 0.01,
      label: 'Big one',
      odds_label: '1 in 100',
      ends_at: null,
    });
    const chill = PackPool.parse(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic', risk_level: 'chill' } }))
        .json,
    );
    const high = chill.bands.find((b) => b.bucket_id === 'high')!;
    expect(high).toMatchObject({ odds: 0, hittable_cards: 0 });
    expect(chill.cards.some((c) => c.bucket_id === 'high')).toBe(false);
    expect(chill.total_cards).toBe(12);
    expect((await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'hidden' } })).status).toBe(
      404,
    );
    expect((await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'nope' } })).status).toBe(404);
    expect((await sim.call('GET', '/catalog/packs/pool', {})).status).toBe(400);
    expect(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic', risk_level: 'x' } }))
        .status,
    ).toBe(400);
  });

  it('a band that runs out gets odds 0 and the others are renormalised', async () => {
    // Drain the two 'high' cards through the model with an aggressive-only draw loop.
    let guard = 0;
    while (guard++ < 200) {
      const pool = (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } })).json;
      if (pool.bands.find((b: { bucket_id: string }) => b.bucket_id === 'high').hittable_cards === 0) break;
      const r = await buy({ pack_type: 'basic', risk_level: 'aggressive' });
      expect(r.status).toBe(200);
      await sim.advance(60);
    }
    const pool = PackPool.parse(
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } })).json,
    );
    const bands = Object.fromEntries(pool.bands.map((b) => [b.bucket_id, b]));
    expect(bands.high!.odds).toBe(0);
    const live = pool.bands.filter((b) => b.hittable_cards > 0);
    expect(live.reduce((s, b) => s + b.odds, 0)).toBeCloseTo(1, 10);
  });
});
