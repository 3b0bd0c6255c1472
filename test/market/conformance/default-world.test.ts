/**
 * The default world (config/sim.yaml) as `packbot sim` serves it, with its background dynamics on:
 * the dev keys of DESIGN.md, the default limits, and the rules that must hold while other users
 * open packs and values drift. Time moves only through the admin clock endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  Account,
  CATEGORIES,
  Identity,
  PackList,
  PackPool,
  PackPurchaseResponse,
  SellBackResponse,
} from '../../../src/api/schemas.js';
import { loadWorld } from '../../../src/config/world-file.js';
import { VirtualClock } from '../../../src/core/clock.js';
import { Market } from '../../../src/market/market.js';
import { startSimServer } from '../../../src/market/server.js';
import { DAY_S, expectError, ikey, payout, type Sim } from './support.js';

let sim: Sim;
const START = Date.UTC(2026, 2, 10, 6, 0, 0);

beforeAll(async () => {
  const clock = new VirtualClock(START);
  const market = new Market(loadWorld(), { clock, seed: 7 });
  const server = await startSimServer({ market, clock });
  const call: Sim['call'] = async (method, path, opts = {}) => {
    const url = new URL(path.startsWith('/sim/') ? path : `/api/partner/v1${path}`, server.url);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? 'sk_sim_full' : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (opts.idem) headers['idempotency-key'] = opts.idem;
    const body = opts.body !== undefined ? JSON.stringify(opts.body) : undefined;
    if (body) headers['content-type'] = 'application/json';
    const res = await fetch(url, { method, headers, ...(body ? { body } : {}) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
  };
  sim = {
    clock,
    market,
    server,
    call,
    advance: async (seconds) => {
      const r = await call('POST', '/sim/v1/clock/advance', { body: { seconds } });
      expect(r.status).toBe(200);
      expect(Date.parse(r.json.now)).toBe(clock.now());
    },
    close: () => server.close(),
  };
});
afterAll(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

describe('default world', () => {
  it('dev keys: full (all scopes, linked, 10000 USD), read, unlinked, disabled', async () => {
    const full = Identity.parse((await sim.call('GET', '/me')).json);
    expect(full.linked).toBe(true);
    expect(full.key.scopes).toHaveLength(7);
    const acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(acct.balance).toBe(10000);
    expect(acct.limits).toMatchObject({
      max_packs_per_day: 100,
      min_seconds_between_purchases: 60,
      packs_today: 0,
    });
    const read = Identity.parse((await sim.call('GET', '/me', { key: 'sk_sim_read' })).json);
    expect(read.account?.id).toBe(full.account?.id);
    expect([...read.key.scopes].sort()).toEqual(['read:account', 'read:catalog']);
    expectError(await sim.call('GET', '/pulls', { key: 'sk_sim_read' }), 403);
    const un = Identity.parse((await sim.call('GET', '/me', { key: 'sk_sim_unlinked' })).json);
    expect(un).toMatchObject({ linked: false, account: null });
    expectError(await sim.call('GET', '/account', { key: 'sk_sim_unlinked' }), 403);
    expectError(await sim.call('GET', '/vault', { key: 'sk_sim_unlinked' }), 403);
    expectError(await sim.call('GET', '/me', { key: 'sk_sim_disabled' }), 401);
    const clock = (await sim.call('GET', '/sim/v1/clock')).json;
    expect(Date.parse(clock.now)).toBe(START);
  });

  it('every category has packs; pools parse; pokemon has an available pack and shop stock', async () => {
    for (const category of CATEGORIES) {
      const list = PackList.parse((await sim.call('GET', '/catalog/packs', { query: { category } })).json);
      expect(list.packs.length).toBeGreaterThan(0);
      for (const p of list.packs)
        for (const risk_level of p.risk_levels)
          PackPool.parse(
            (
              await sim.call('GET', '/catalog/packs/pool', {
                query: { category, pack_type: p.pack_type, risk_level },
              })
            ).json,
          );
    }
    const pokemon = PackList.parse((await sim.call('GET', '/catalog/packs')).json);
    expect(pokemon.packs.some((p) => p.available)).toBe(true);
    expect((await sim.call('GET', '/catalog/cards')).json.total).toBeGreaterThan(0);
  });

  it('sell-back windows hold while the market moves: 0.9, then 0.8 of value at pull, then 0.8 of market value', async () => {
    await sim.advance(60);
    const r = PackPurchaseResponse.parse(
      (
        await sim.call('POST', '/packs/purchase', {
          body: { pack_type: 'starter', quantity: 10 },
          idem: ikey(),
        })
      ).json,
    );
    const cards = r.pulls.filter((p) => p.kind === 'card');
    expect(cards.length).toBeGreaterThanOrEqual(3);
    const [a, b, c] = cards;
    await sim.advance(240);
    const s1 = SellBackResponse.parse(
      (
        await sim.call('POST', '/cards/sell-back', {
          body: { items: [{ card_id: a!.item.id, pull_id: a!.pull_id }] },
        })
      ).json,
    );
    expect(s1.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.9,
      payout_amount: payout(a!.value, 0.9),
    });
    await sim.advance(3 * DAY_S);
    const s2 = SellBackResponse.parse(
      (
        await sim.call('POST', '/cards/sell-back', {
          body: { items: [{ card_id: b!.item.id, pull_id: b!.pull_id }] },
        })
      ).json,
    );
    expect(s2.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.8,
      payout_amount: payout(b!.value, 0.8),
    });
    await sim.advance(4 * DAY_S + 60);
    const v = (await sim.call('GET', '/vault', { query: { per_page: 200 } })).json.cards.find(
      (e: { card_id: string }) => e.card_id === c!.item.id,
    );
    const s3 = SellBackResponse.parse(
      (
        await sim.call('POST', '/cards/sell-back', {
          body: { items: [{ card_id: c!.item.id, pull_id: c!.pull_id }] },
        })
      ).json,
    );
    expect(s3.results[0]).toMatchObject({
      status: 'sold',
      payout_rate: 0.8,
      payout_amount: payout(v.value, 0.8),
    });
  });

  it('100 packs per UTC day, then 429 DAILY_LIMIT_REACHED until the next midnight UTC', async () => {
    // Start on a fresh day.
    const acct0 = Account.parse((await sim.call('GET', '/account')).json);
    await sim.advance((Date.parse(acct0.limits.resets_at) - sim.clock.now()) / 1000 + 3600);
    for (let i = 0; i < 10; i++) {
      const r = await sim.call('POST', '/packs/purchase', {
        body: { pack_type: 'starter', quantity: 10 },
        idem: ikey(),
      });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      await sim.advance(60);
    }
    const r = await sim.call('POST', '/packs/purchase', { body: { pack_type: 'starter' }, idem: ikey() });
    expectError(r, 429, 'DAILY_LIMIT_REACHED');
    const acct = Account.parse((await sim.call('GET', '/account')).json);
    expect(r.json).toMatchObject({ limit: 100, used: 100, resets_at: acct.limits.resets_at });
    expect(acct.limits).toMatchObject({ packs_today: 100, packs_left_today: 0 });
    const resets = Date.parse(acct.limits.resets_at);
    expect(resets % (DAY_S * 1000)).toBe(0);
    expect(resets - sim.clock.now()).toBeLessThanOrEqual(DAY_S * 1000);
    await sim.advance((resets - sim.clock.now()) / 1000);
    const after = Account.parse((await sim.call('GET', '/account')).json);
    expect(after.limits.packs_today).toBe(0);
    expect(
      (await sim.call('POST', '/packs/purchase', { body: { pack_type: 'starter' }, idem: ikey() })).status,
    ).toBe(200);
  });
});
