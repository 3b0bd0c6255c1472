/**
 * Spec "Errors" table: every row, on every endpoint it applies to, over HTTP. Error bodies are
 * JSON with `error`, `code` where the table has one (and none otherwise), and the extra fields.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Account } from '../../../src/api/schemas.js';
import {
  balance,
  buyCard,
  buyPacks,
  expectError,
  ikey,
  pullCard,
  type Sim,
  setFaults,
  shopCards,
  startConf,
  T0,
  untilOrderRunning,
} from './support.js';

let sim: Sim;
beforeEach(async () => {
  sim = await startConf();
});
afterEach(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

interface Ep {
  method: string;
  path: string;
  scope: string | null;
  account: boolean;
  body?: unknown;
  idem?: boolean;
  query?: Record<string, string>;
}
const ENDPOINTS: Ep[] = [
  {
    method: 'POST',
    path: '/packs/purchase',
    scope: 'rip:packs',
    account: true,
    body: { pack_type: 'basic' },
    idem: true,
  },
  {
    method: 'POST',
    path: '/cards/purchase',
    scope: 'buy:cards',
    account: true,
    body: { card_id: 'x', max_price: 1 },
    idem: true,
  },
  {
    method: 'POST',
    path: '/cards/sell-back',
    scope: 'sell:cards',
    account: true,
    body: { items: [{ card_id: 'x', pull_id: 'y' }] },
  },
  {
    method: 'POST',
    path: '/listings',
    scope: 'write:listings',
    account: true,
    body: { card_id: 'x', price: 5 },
  },
  { method: 'DELETE', path: '/listings', scope: 'write:listings', account: true, body: { card_id: 'x' } },
  { method: 'GET', path: '/catalog/packs', scope: 'read:catalog', account: false },
  {
    method: 'GET',
    path: '/catalog/packs/pool',
    scope: 'read:catalog',
    account: false,
    query: { pack_type: 'basic' },
  },
  { method: 'GET', path: '/catalog/cards', scope: 'read:catalog', account: false },
  { method: 'GET', path: '/vault', scope: 'read:account', account: true },
  { method: 'GET', path: '/account', scope: 'read:account', account: true },
  { method: 'GET', path: '/me', scope: null, account: false },
  { method: 'GET', path: '/pulls', scope: 'read:pulls', account: false },
];
const send = (ep: Ep, key: string | null, headers: Record<string, string> = {}) =>
  sim.call(ep.method, ep.path, {
    key,
    headers,
    ...(ep.body !== undefined ? { body: ep.body } : {}),
    ...(ep.idem ? { idem: ikey() } : {}),
    ...(ep.query ? { query: ep.query } : {}),
  });

describe('401: missing, malformed, disabled or unknown key (all endpoints)', () => {
  it.each(ENDPOINTS)('$method $path', async (ep) => {
    const cases: [string | null, Record<string, string>][] = [
      [null, {}],
      [null, { authorization: 'sk_sim_full' }],
      [null, { authorization: 'Basic c2tfc2ltX2Z1bGw6' }],
      [null, { authorization: 'Bearer' }],
      ['sk_sim_disabled', {}],
      ['sk_unknown_key', {}],
    ];
    for (const [key, headers] of cases) {
      const r = await send(ep, key, headers);
      expectError(r, 401);
      expect(JSON.stringify(r.json)).not.toContain('sk_');
    }
    expect(sim.market.ledger()).toEqual([]);
  });
});

describe('403: key lacks the scope, or the action needs a linked account', () => {
  it.each(ENDPOINTS.filter((e) => e.scope))('$method $path: lacking scope', async (ep) => {
    const key = ['read:catalog', 'read:account'].includes(ep.scope!) ? 'sk_pulls_only' : 'sk_sim_read';
    expectError(await send(ep, key), 403);
  });
  it.each(ENDPOINTS.filter((e) => e.account))('$method $path: unlinked key (all scopes)', async (ep) => {
    expectError(await send(ep, 'sk_unlinked_all'), 403);
    if (ep.scope === 'read:account') expectError(await send(ep, 'sk_sim_unlinked'), 403);
  });
  it('/me needs no scope; catalog endpoints work with an unlinked key', async () => {
    expect((await sim.call('GET', '/me', { key: 'sk_pulls_only' })).status).toBe(200);
    for (const ep of ENDPOINTS.filter((e) => e.scope === 'read:catalog'))
      expect((await send(ep, 'sk_sim_unlinked')).status).toBe(200);
  });
});

describe('400 on pack purchase', () => {
  it('missing or invalid Idempotency-Key', async () => {
    for (const idem of [undefined, 'short', 'a'.repeat(129), 'has spaces!!', 'bad/chars#1', 'ümlaut-key'])
      expectError(
        await sim.call('POST', '/packs/purchase', {
          body: { pack_type: 'basic' },
          ...(idem ? { idem } : {}),
        }),
        400,
      );
    expect((await buyPacks(sim, { pack_type: 'basic' }, 'a'.repeat(128))).status).toBe(200);
    await sim.advance(60);
    expect((await buyPacks(sim, { pack_type: 'basic' }, 'Ab3_-xYz')).status).toBe(200);
  });

  it('bad parameters', async () => {
    const bodies: unknown[] = [
      {},
      { pack_type: '' },
      { pack_type: 7 },
      { pack_type: 'nope' },
      { pack_type: 'hidden' },
      { pack_type: 'basic', category: 'cars' },
      { pack_type: 'basic', category: 'onepiece' },
      { pack_type: 'basic', quantity: 0 },
      { pack_type: 'basic', quantity: 11 },
      { pack_type: 'basic', quantity: 1.5 },
      { pack_type: 'basic', quantity: '2' },
      { pack_type: 'basic', risk_level: 'hot' },
      { pack_type: 'single', risk_level: 'chill' },
      [],
      'basic',
    ];
    for (const body of bodies) expectError(await buyPacks(sim, body as Record<string, unknown>), 400);
    expectError(await sim.call('POST', '/packs/purchase', { raw: '{"pack_type":', idem: ikey() }), 400);
    expectError(await sim.call('POST', '/packs/purchase', { idem: ikey() }), 400);
    expect(sim.market.ledger()).toEqual([]);
  });

  it('insufficient balance', async () => {
    expectError(await buyPacks(sim, { pack_type: 'basic' }, ikey(), 'sk_poor'), 400);
    expect(await balance(sim, 'sk_poor')).toBe(5);
  });

  it('pack that cannot be bought in multiples', async () => {
    expectError(await buyPacks(sim, { pack_type: 'single', quantity: 2 }), 400);
    expect((await buyPacks(sim, { pack_type: 'single', quantity: 1 })).status).toBe(200);
  });
});

describe('400 on card purchase', () => {
  it('missing or invalid Idempotency-Key', async () => {
    const c = (await shopCards(sim))[0]!;
    for (const idem of [undefined, 'short', 'a'.repeat(129), 'has spaces!!'])
      expectError(
        await sim.call('POST', '/cards/purchase', {
          body: { card_id: c.id, max_price: c.price },
          ...(idem ? { idem } : {}),
        }),
        400,
      );
  });

  it('bad card_id, no max_price, bad parameters', async () => {
    const c = (await shopCards(sim))[0]!;
    for (const body of [
      { max_price: 100 },
      { card_id: '', max_price: 100 },
      { card_id: 42, max_price: 100 },
      { card_id: c.id },
      { card_id: c.id, max_price: null },
      { card_id: c.id, max_price: '100' },
      { card_id: c.id, max_price: -1 },
    ])
      expectError(await buyCard(sim, body as Record<string, unknown>), 400);
    expectError(await sim.call('POST', '/cards/purchase', { raw: 'nope', idem: ikey() }), 400);
  });

  it('insufficient balance (price plus fee)', async () => {
    const c = (await shopCards(sim))[0]!;
    expectError(await buyCard(sim, { card_id: c.id, max_price: c.price }, ikey(), 'sk_poor'), 400);
    expect(await balance(sim, 'sk_poor')).toBe(5);
  });
});

describe('400 on purchase report', () => {
  it('malformed, inverted or over-31-day window', async () => {
    const iso = (ms: number) => new Date(ms).toISOString();
    const day = 86_400_000;
    for (const query of [
      { since: 'yesterday' },
      { until: 'not-a-date' },
      { since: '2026-13-45T00:00:00Z' },
      { since: '2025-12-30T00:00:00Z', until: '2026-02-30T00:00:00Z' }, // no Feb 30 (Date.parse rolls over)
      { until: '2026-01-01T24:00:00Z' },
      { since: 123 as unknown as string },
      { since: iso(T0), until: iso(T0 - 1) },
      { since: iso(T0 - 31 * day - 1), until: iso(T0) },
      { since: iso(T0 - 40 * day) },
    ])
      expectError(await sim.call('GET', '/pulls', { query }), 400);
    expect(
      (await sim.call('GET', '/pulls', { query: { since: iso(T0 - 31 * day), until: iso(T0) } })).status,
    ).toBe(200);
  });
});

describe('404', () => {
  it('pack pool of a pack that cannot be bought (or does not exist)', async () => {
    for (const pack_type of ['hidden', 'nope'])
      expectError(await sim.call('GET', '/catalog/packs/pool', { query: { pack_type } }), 404);
    // An out-of-stock pack is still listed and its pool served.
    const r = await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'soldout' } });
    expect(r.status).toBe(200);
    expect(r.json.available).toBe(false);
  });
  it('card purchase of no such card', async () => {
    expectError(await buyCard(sim, { card_id: 'no-such-card', max_price: 100 }), 404);
    expect(sim.market.ledger()).toEqual([]);
  });
});

describe('409', () => {
  it('IDEMPOTENCY_IN_PROGRESS on pack and card purchase', async () => {
    const c = (await shopCards(sim))[0]!;
    for (const [path, body] of [
      ['/packs/purchase', { pack_type: 'basic' }],
      ['/cards/purchase', { card_id: c.id, max_price: c.price }],
    ] as const) {
      await setFaults(sim, { [`POST ${path}`]: { latency_ms: 30_000 } });
      const k = ikey();
      const pending = sim.call('POST', path, { body, idem: k });
      await untilOrderRunning(sim);
      expectError(await sim.call('POST', path, { body, idem: k }), 409, 'IDEMPOTENCY_IN_PROGRESS');
      await sim.call('DELETE', '/sim/v1/faults');
      await sim.advance(30);
      expect((await pending).status).toBe(200);
    }
  });

  it('PRICE_CHANGED with card_id, price (current) and max_price; nothing charged', async () => {
    const c = (await shopCards(sim))[0]!;
    const r = await buyCard(sim, { card_id: c.id, max_price: c.price - 0.01 });
    expectError(r, 409, 'PRICE_CHANGED');
    expect(r.json).toMatchObject({ card_id: c.id, price: c.price, max_price: c.price - 0.01 });
    expect(sim.market.ledger()).toEqual([]);
    expect((await shopCards(sim)).map((x) => x.id)).toContain(c.id);
  });

  it('CARD_NO_LONGER_AVAILABLE: sold, pulled from a pack, or delisted', async () => {
    const c = (await shopCards(sim))[0]!;
    expect((await buyCard(sim, { card_id: c.id, max_price: c.price }, ikey(), 'sk_bob')).status).toBe(200);
    expectError(await buyCard(sim, { card_id: c.id, max_price: c.price }), 409, 'CARD_NO_LONGER_AVAILABLE');
    const pulled = await pullCard(sim, 'sk_bob');
    expectError(
      await buyCard(sim, { card_id: pulled.item.id, max_price: 1000 }),
      409,
      'CARD_NO_LONGER_AVAILABLE',
    );
    expect(
      (
        await sim.call('POST', '/listings', {
          key: 'sk_bob',
          body: { card_id: pulled.item.id, price: pulled.value },
        })
      ).status,
    ).toBe(200);
    expect(
      (await sim.call('DELETE', '/listings', { key: 'sk_bob', body: { card_id: pulled.item.id } })).status,
    ).toBe(200);
    expectError(
      await buyCard(sim, { card_id: pulled.item.id, max_price: 1000 }),
      409,
      'CARD_NO_LONGER_AVAILABLE',
    );
    expect(sim.market.ledger().filter((e) => e.accountId === 'acct_a')).toEqual([]);
  });

  it('OWN_LISTING', async () => {
    const pull = await pullCard(sim);
    expect(
      (await sim.call('POST', '/listings', { body: { card_id: pull.item.id, price: pull.value } })).status,
    ).toBe(200);
    const before = await balance(sim);
    expectError(await buyCard(sim, { card_id: pull.item.id, max_price: 1000 }), 409, 'OWN_LISTING');
    expect(await balance(sim)).toBe(before);
  });
});

describe('422 IDEMPOTENCY_KEY_REUSED', () => {
  it('pack purchase, card purchase, and across the two', async () => {
    const [c1, c2] = await shopCards(sim);
    const k1 = ikey();
    expect((await buyPacks(sim, { pack_type: 'basic' }, k1)).status).toBe(200);
    expectError(await buyPacks(sim, { pack_type: 'basic', quantity: 2 }, k1), 422, 'IDEMPOTENCY_KEY_REUSED');
    const k2 = ikey();
    expect((await buyCard(sim, { card_id: c1!.id, max_price: c1!.price }, k2)).status).toBe(200);
    expectError(
      await buyCard(sim, { card_id: c2!.id, max_price: c2!.price }, k2),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expectError(
      await buyCard(sim, { card_id: c2!.id, max_price: c2!.price }, k1),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
  });
});

describe('429', () => {
  it('RATE_LIMITED with integer retry_after_seconds and a Retry-After header', async () => {
    expect((await buyPacks(sim, { pack_type: 'basic' })).status).toBe(200);
    await sim.advance(15);
    const r = await buyPacks(sim, { pack_type: 'basic' });
    expectError(r, 429, 'RATE_LIMITED');
    expect(r.json.retry_after_seconds).toBe(45);
    expect(Number.isInteger(r.json.retry_after_seconds)).toBe(true);
    expect(r.headers.get('retry-after')).toBe('45');
    await sim.advance(45);
    expect((await buyPacks(sim, { pack_type: 'basic' })).status).toBe(200);
  });

  it('DAILY_LIMIT_REACHED with limit, used and resets_at = next midnight UTC', async () => {
    // sk_small: ceiling of 5 packs per day.
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 4 }, ikey(), 'sk_small')).status).toBe(200);
    await sim.advance(60);
    const r = await buyPacks(sim, { pack_type: 'basic', quantity: 2 }, ikey(), 'sk_small');
    expectError(r, 429, 'DAILY_LIMIT_REACHED');
    expect(r.json).toMatchObject({ limit: 5, used: 4, resets_at: '2026-01-02T00:00:00.000Z' });
    const acct = Account.parse((await sim.call('GET', '/account', { key: 'sk_small' })).json);
    expect(acct.limits).toMatchObject({ max_packs_per_day: 5, packs_today: 4, packs_left_today: 1 });
    expect((await buyPacks(sim, { pack_type: 'basic', quantity: 1 }, ikey(), 'sk_small')).status).toBe(200);
  });

  it('DAILY_CARD_LIMIT_REACHED: daily card count cap, and spend cap', async () => {
    // The test world's caps: 3 cards and 100 USD of card prices per UTC day.
    const cards = (await shopCards(sim)).sort((a, b) => a.price - b.price);
    for (const c of cards.slice(0, 3))
      expect((await buyCard(sim, { card_id: c.id, max_price: c.price })).status).toBe(200);
    const c4 = cards[3]!;
    expectError(await buyCard(sim, { card_id: c4.id, max_price: c4.price }), 429, 'DAILY_CARD_LIMIT_REACHED');
    // Spend cap (bob): the most expensive cards until the next one would pass 100 USD.
    const desc = cards.slice(4).reverse();
    let spent = 0;
    let bought = 0;
    for (const c of desc) {
      if (spent + c.price > 100) {
        const r = await buyCard(sim, { card_id: c.id, max_price: c.price }, ikey(), 'sk_bob');
        expectError(r, 429, 'DAILY_CARD_LIMIT_REACHED');
        break;
      }
      expect((await buyCard(sim, { card_id: c.id, max_price: c.price }, ikey(), 'sk_bob')).status).toBe(200);
      spent += c.price;
      bought++;
    }
    expect(bought).toBeLessThan(3); // it was the spend cap, not the count cap
    // Resets at midnight UTC.
    await sim.advance(12 * 3600);
    expect((await buyCard(sim, { card_id: c4.id, max_price: c4.price })).status).toBe(200);
  });
});

describe('500: server fault (all endpoints); pack purchase refunds the whole order', () => {
  it.each(ENDPOINTS)('$method $path', async (ep) => {
    await setFaults(sim, { [`${ep.method} ${ep.path}`]: { error_rate: 1 } });
    let r: Awaited<ReturnType<Sim['call']>>;
    if (ep.path === '/cards/purchase') {
      const c = (await shopCards(sim).catch(() => []))[0];
      r = await sim.call('POST', ep.path, { body: { card_id: c?.id ?? 'x', max_price: 1000 }, idem: ikey() });
    } else if (ep.path === '/packs/purchase') {
      r = await buyPacks(sim, { pack_type: 'basic', quantity: 3 });
    } else r = await send(ep, 'sk_sim_full');
    expectError(r, 500);
    await sim.call('DELETE', '/sim/v1/faults');
    if (ep.path === '/packs/purchase') {
      expect(await balance(sim)).toBe(1000);
      expect(sim.market.ledger().map((e) => e.kind)).toEqual(['pack_purchase', 'pack_refund']);
      const acct = (await sim.call('GET', '/account')).json;
      expect(acct.limits.packs_today).toBe(0);
      expect((await sim.call('GET', '/vault')).json.total).toBe(0);
    } else expect(sim.market.ledger()).toEqual([]);
  });
});
