/**
 * How the simulator writes its answers where the spec leaves it open (world `rules`,
 * src/market/server-choices.ts): timestamps, unknown fields, key order, the card object's optional
 * fields, the codes of 401 and 403, and the statuses of refused sell-backs, listings and
 * delistings. Each table runs the default and every alternative over HTTP; every answer still
 * parses with the operation's response schema, as the bot's client reads it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/api/client.js';
import {
  BadRequestError,
  errorFromResponse,
  isPartnerApiError,
  UnexpectedStatusError,
} from '../../src/api/errors.js';
import { ENDPOINTS, OPERATIONS } from '../../src/api/operations.js';
import { Timestamp } from '../../src/api/schemas.js';
import type { Rules } from '../../src/market/world-schema.js';
import {
  buyCard,
  buyPacks,
  confWorld,
  expectError,
  ikey,
  pullCard,
  type Sim,
  sellBack,
  shopCards,
  startSim,
  T0,
} from './conformance/support.js';

let sim: Sim | undefined;
afterEach(async () => {
  expect(sim?.market.audit() ?? []).toEqual([]);
  await sim?.close();
  sim = undefined;
});

async function start(rules: Partial<Rules>, start = T0): Promise<Sim> {
  const w = confWorld();
  w.rules = { ...w.rules, ...rules };
  sim = await startSim(w, 7, start);
  return sim;
}

/** Every string of `v` at a key in `keys`, with its path. */
function stringsAt(v: unknown, keys: ReadonlySet<string>, path = ''): [string, string][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => stringsAt(x, keys, `${path}[${i}]`));
  if (typeof v !== 'object' || v === null) return [];
  return Object.entries(v).flatMap(([k, x]) =>
    typeof x === 'string' && keys.has(k) ? [[`${path}.${k}`, x]] : stringsAt(x, keys, `${path}.${k}`),
  ) as [string, string][];
}

const TIME_KEYS = new Set([
  'valid_until',
  'pulled_at',
  'acquired_at',
  'locked_value_until',
  'resets_at',
  'next_purchase_at',
  'since',
  'until',
  'created_at',
  'served_at',
]);

describe('timestamps (rules.timestamp_fraction_digits, rules.timestamp_zone)', () => {
  const cases: { digits: number; zone: 'Z' | '+00:00'; re: RegExp }[] = [
    { digits: 3, zone: 'Z', re: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/ },
    { digits: 0, zone: 'Z', re: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/ },
    { digits: 6, zone: '+00:00', re: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00$/ },
    { digits: 1, zone: '+00:00', re: /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\+00:00$/ },
  ];
  it.each(cases)(
    '$digits digits, zone $zone: every timestamp of every answer',
    async ({ digits, zone, re }) => {
      // Half a second and a bit past the minute: the fraction shows, or the server's clock drops it.
      const s = await start({ timestamp_fraction_digits: digits, timestamp_zone: zone }, T0 + 1234);
      const r = await buyPacks(s, { pack_type: 'basic', quantity: 3 });
      expect(r.status, JSON.stringify(r.json)).toBe(200);
      const answers = [
        r.json,
        (await s.call('GET', '/vault')).json,
        (await s.call('GET', '/account')).json,
        (await s.call('GET', '/pulls', { query: { since: '2026-01-01T00:00:00Z' } })).json,
      ];
      const stamps = answers.flatMap((a) => stringsAt(a, TIME_KEYS));
      expect(stamps.length).toBeGreaterThan(8);
      for (const [path, t] of stamps) {
        expect(t, path).toMatch(re);
        expect(Timestamp.safeParse(t).success, path).toBe(true);
      }
      const pulledAt = Date.parse(stringsAt(answers[1], new Set(['pulled_at']))[0]![1]);
      // The server keeps time at the resolution it writes: below 3 digits, its clock is coarser.
      expect(pulledAt).toBe(digits >= 3 ? T0 + 1234 : T0 + 1234 - (1234 % 10 ** (3 - digits)));
    },
  );

  it('with whole seconds, a purchase at the stated next_purchase_at is accepted', async () => {
    const s = await start({ timestamp_fraction_digits: 0 }, T0 + 1500);
    expect((await buyPacks(s, { pack_type: 'basic' })).status).toBe(200);
    const next = Date.parse((await s.call('GET', '/account')).json.limits.next_purchase_at);
    expect(next).toBe(T0 + 1000 + 60_000);
    await s.advance((next - s.clock.now()) / 1000);
    expect((await buyPacks(s, { pack_type: 'basic' })).status).toBe(200);
  });
});

/** Every object of `v` with its path, visited by sorted keys (the same walk whatever the key order). */
function objects(v: unknown, path = ''): [string, Record<string, unknown>][] {
  if (Array.isArray(v)) return v.flatMap((x, i) => objects(x, `${path}[${i}]`));
  if (typeof v !== 'object' || v === null) return [];
  const o = v as Record<string, unknown>;
  const inner = Object.keys(o)
    .sort()
    .flatMap((k) => objects(o[k], `${path}.${k}`));
  return [[path || '(root)', o], ...inner];
}

/** The answers of one session: a pack purchase, a pool, the vault, the shop, the account, an error. */
async function session(s: Sim) {
  const buy = await buyPacks(s, { pack_type: 'basic', quantity: 3 }, 'fixed-key-0001');
  const pool = await s.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } });
  const vault = await s.call('GET', '/vault');
  const shop = await s.call('GET', '/catalog/cards', { query: { per_page: 5 } });
  const account = await s.call('GET', '/account');
  const error = await s.call('GET', '/catalog/packs/pool', { query: { pack_type: 'nope' } });
  return [
    ['purchasePacks', buy],
    ['getPackPool', pool],
    ['getVault', vault],
    ['listShopCards', shop],
    ['getAccount', account],
    [undefined, error],
  ] as const;
}

describe('unknown fields and key order (rules.extra_fields, rules.key_order)', () => {
  it('extra fields: every object of every answer, errors too, and the answers still parse', async () => {
    const s = await start({ extra_fields: true });
    for (const [op, r] of await session(s)) {
      if (op) {
        expect(r.status, JSON.stringify(r.json).slice(0, 300)).toBe(200);
        expect(OPERATIONS[op].response.safeParse(r.json).success, op).toBe(true);
      } else expectError(r, 404);
      for (const [path, o] of objects(r.json)) expect(o, `${op} ${path}`).toHaveProperty('x_rev', 1);
      expect(r.json.x_request, op).toMatchObject({ server: 'packbot-sim' });
    }
  });

  it('at the defaults nothing is added and keys come as built', async () => {
    const s = await start({});
    for (const [, r] of await session(s))
      for (const [path, o] of objects(r.json)) expect(Object.keys(o), path).not.toContain('x_rev');
  });

  const orders: Rules['key_order'][] = ['sorted', 'reversed', 'shuffled'];
  it.each(orders)('key order %s: the same answers as built, keys in another order', async (how) => {
    const plain = await session(await start({}));
    await sim!.close();
    sim = undefined;
    const s = await start({ key_order: how });
    const shaped = await session(s);
    let moved = 0;
    for (const [i, [op, r]] of shaped.entries()) {
      expect(r.json, op).toEqual(plain[i]![1].json);
      const built = objects(plain[i]![1].json);
      for (const [j, [path, o]] of objects(r.json).entries()) {
        const keys = Object.keys(o);
        const before = Object.keys(built[j]![1]);
        if (how === 'sorted') expect(keys, path).toEqual([...before].sort());
        if (how === 'reversed') expect(keys, path).toEqual([...before].reverse());
        if (keys.join() !== before.join()) moved++;
      }
    }
    expect(moved).toBeGreaterThan(10);
  });

  it('shuffled keys are fixed by the object shape and the seed', async () => {
    const s = await start({ key_order: 'shuffled' });
    const a = await s.call('GET', '/catalog/cards', { query: { per_page: 20 } });
    const orders = new Set(a.json.cards.map((c: object) => Object.keys(c).join()));
    expect(orders.size).toBe(1);
    const b = await s.call('GET', '/catalog/cards', { query: { per_page: 20 } });
    expect(Object.keys(b.json.cards[0])).toEqual(Object.keys(a.json.cards[0]));
  });
});

describe("the card object's optional fields (rules.card_fields)", () => {
  const optional = [
    'grading_company',
    'grading_rank',
    'cert_number',
    'back_image',
    'render_image',
    'slab_label',
  ];
  it.each([
    ['full', (c: Record<string, unknown>, k: string) => expect(c[k]).not.toBeNull()],
    ['nulls', (c: Record<string, unknown>, k: string) => expect(c[k]).toBeNull()],
    ['omitted', (c: Record<string, unknown>, k: string) => expect(c).not.toHaveProperty(k)],
  ] as const)('%s', async (mode, check) => {
    const s = await start({ card_fields: mode });
    const pull = await pullCard(s);
    const shop = await s.call('GET', '/catalog/cards', { query: { per_page: 3 } });
    const vault = await s.call('GET', '/vault');
    expect(OPERATIONS.listShopCards.response.safeParse(shop.json).success).toBe(true);
    expect(OPERATIONS.getVault.response.safeParse(vault.json).success).toBe(true);
    const cards = [pull.item, ...shop.json.cards, ...vault.json.cards.map((v: { item: object }) => v.item)];
    for (const c of cards) {
      for (const k of optional) check(c, k);
      expect(c).toMatchObject({ id: expect.any(String), name: expect.any(String) });
      expect(typeof c.market_value).toBe('number');
    }
  });
});

describe('codes of 401 and 403 (rules.auth_error_codes)', () => {
  const requests: { what: string; key: string | null; path: string; status: number; specific: string }[] = [
    { what: 'no key', key: null, path: '/account', status: 401, specific: 'MISSING_API_KEY' },
    { what: 'unknown key', key: 'sk_nobody', path: '/account', status: 401, specific: 'INVALID_API_KEY' },
    {
      what: 'disabled key',
      key: 'sk_sim_disabled',
      path: '/account',
      status: 401,
      specific: 'API_KEY_DISABLED',
    },
    { what: 'scope missing', key: 'sk_sim_read', path: '/pulls', status: 403, specific: 'MISSING_SCOPE' },
    {
      what: 'unlinked key',
      key: 'sk_sim_unlinked',
      path: '/account',
      status: 403,
      specific: 'ACCOUNT_NOT_LINKED',
    },
  ];
  for (const mode of ['none', 'generic', 'specific'] as const)
    it.each(requests)(`${mode}: $what`, async ({ key, path, status, specific }) => {
      const s = await start({ auth_error_codes: mode });
      const r = await s.call('GET', path, { key });
      const generic = status === 401 ? 'UNAUTHORIZED' : 'FORBIDDEN';
      expectError(r, status, mode === 'none' ? undefined : mode === 'generic' ? generic : specific);
    });
});

describe('refused sell-backs, listings and delistings (rules.holdings_errors)', () => {
  type Case = { what: string; run: (s: Sim) => ReturnType<Sim['call']>; mixed: number; rest: number };
  const listed = async (s: Sim) => {
    const p = await pullCard(s);
    const r = await s.call('POST', '/listings', { body: { card_id: p.item.id, price: p.value } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    return p;
  };
  const cases: Case[] = [
    {
      what: 'list a card not held',
      run: async (s) =>
        s.call('POST', '/listings', { body: { card_id: (await shopCards(s))[0]!.id, price: 5 } }),
      mixed: 404,
      rest: 404,
    },
    {
      what: 'list a card already listed',
      run: async (s) => {
        const p = await listed(s);
        return s.call('POST', '/listings', { body: { card_id: p.item.id, price: p.value } });
      },
      mixed: 400,
      rest: 409,
    },
    {
      what: 'delist a card not listed',
      run: async (s) => s.call('DELETE', '/listings', { body: { card_id: (await pullCard(s)).item.id } }),
      mixed: 400,
      rest: 409,
    },
    {
      what: 'list above 2 x value',
      run: async (s) => {
        const p = await pullCard(s);
        return s.call('POST', '/listings', { body: { card_id: p.item.id, price: p.value * 3 } });
      },
      mixed: 400,
      rest: 422,
    },
    {
      what: 'sell back 11 items',
      run: (s) =>
        sellBack(
          s,
          Array.from({ length: 11 }, (_, i) => ({ card_id: `c${i}`, pull_id: `p${i}` })),
        ),
      mixed: 400,
      rest: 422,
    },
  ];
  for (const mode of ['mixed', 'bad_request', 'rest'] as const)
    it.each(cases)(`${mode}: $what`, async (c) => {
      const s = await start({ holdings_errors: mode });
      const r = await c.run(s);
      const status = mode === 'mixed' ? c.mixed : mode === 'bad_request' ? 400 : c.rest;
      expect(r.status, JSON.stringify(r.json)).toBe(status);
      if (mode === 'rest') expect(typeof r.json.code).toBe('string');
      else expect(r.json.code).toBeUndefined();
    });

  it('the client reads each refusal as rejected (re-plan), never fatal, in every mode', async () => {
    for (const mode of ['mixed', 'bad_request', 'rest'] as const) {
      const s = await start({ holdings_errors: mode });
      const api = createHttpClient({ baseUrl: s.server.url, apiKey: 'sk_sim_full', clock: s.clock });
      const p = await pullCard(s);
      await api.createListing({ card_id: p.item.id, price: p.value });
      const refusals = [
        () => api.createListing({ card_id: p.item.id, price: p.value }),
        () => api.createListing({ card_id: 'nope', price: 5 }),
        async () => {
          await api.deleteListing({ card_id: p.item.id });
          return api.deleteListing({ card_id: p.item.id });
        },
      ];
      for (const refuse of refusals) {
        const e = await refuse().then(
          () => undefined,
          (x: unknown) => x,
        );
        expect(isPartnerApiError(e) && e.kind, `${mode}: ${String(e)}`).toBe('rejected');
      }
      await s.close();
      sim = undefined;
    }
  });

  it('an unknown 409 or 422 is a refusal on sell-back, list and delist only; on a purchase it stops', () => {
    for (const op of ['sellBack', 'createListing', 'deleteListing'] as const)
      for (const status of [409, 422]) {
        const e = errorFromResponse(status, { error: 'x', code: 'SOMETHING' }, ENDPOINTS[op]);
        expect(e).toBeInstanceOf(BadRequestError);
        expect([e.kind, e.status]).toEqual(['rejected', status]);
      }
    const e = errorFromResponse(409, { error: 'x', code: 'SOMETHING' }, ENDPOINTS.purchasePacks);
    expect(e).toBeInstanceOf(UnexpectedStatusError);
    expect(e.kind).toBe('fatal');
  });

  it('a failed sell-back item is still a result, not an error, in every mode', async () => {
    for (const mode of ['mixed', 'bad_request', 'rest'] as const) {
      const s = await start({ holdings_errors: mode });
      const r = await sellBack(s, [{ card_id: 'nope', pull_id: 'nope' }]);
      expect(r.status).toBe(200);
      expect(r.json.results[0]).toMatchObject({ status: 'failed', error: 'unknown card' });
      await s.close();
      sim = undefined;
    }
  });
});

describe('every wire choice at once', () => {
  it('a card purchase and its replay parse', async () => {
    const s = await start({
      extra_fields: true,
      key_order: 'shuffled',
      card_fields: 'omitted',
      timestamp_fraction_digits: 6,
      timestamp_zone: '+00:00',
    });
    const card = (await shopCards(s))[0]!;
    const key = ikey();
    const r = await buyCard(s, { card_id: card.id, max_price: card.price }, key);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(OPERATIONS.purchaseCard.response.safeParse(r.json).success).toBe(true);
    const again = await buyCard(s, { card_id: card.id, max_price: card.price }, key);
    expect(again.json).toMatchObject({ idempotent_replay: true, transaction_id: r.json.transaction_id });
  });
});
