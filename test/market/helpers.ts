import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { devKeys, parseWorld } from '../../src/market/world.js';
import type { WorldInput } from '../../src/market/world-schema.js';

export const T0 = Date.UTC(2026, 0, 1, 12, 0, 0);

const ALL = [
  'read:catalog',
  'read:account',
  'read:pulls',
  'rip:packs',
  'buy:cards',
  'sell:cards',
  'write:listings',
] as const;

/** A small, frozen world (no background dynamics) where every rule can be driven exactly. */
export function testWorld(over: Partial<WorldInput> = {}): WorldInput {
  return {
    format: 'packbot.world/v1',
    seed: 42,
    accounts: [
      { id: 'acct_a', username: 'alice', balance: 1000 },
      { id: 'acct_b', username: 'bob', balance: 1000 },
      { id: 'acct_int', username: 'house', balance: 1000, internal: true },
    ],
    keys: [
      ...(devKeys('acct_a') ?? []),
      { name: 'bob', key: 'sk_bob', scopes: [...ALL], account: 'acct_b' },
      { name: 'house', key: 'sk_house', scopes: [...ALL], account: 'acct_int' },
      { name: 'small', key: 'sk_small', scopes: [...ALL], account: 'acct_b', max_packs_per_day: 5 },
    ],
    categories: {
      pokemon: {
        packs: [
          {
            pack_type: 'basic',
            name: 'Basic',
            price: 10,
            max_quantity: 10,
            bands: [
              {
                bucket_id: 'sealed',
                min_value: 2,
                max_value: 4,
                is_consolation: true,
                odds: { chill: 0.5, standard: 0.2 },
                cards: [
                  { name: 'Sealed A', value: 3 },
                  { name: 'Sealed B', value: 3 },
                ],
              },
              {
                bucket_id: 'low',
                min_value: 5,
                max_value: 10,
                odds: { chill: 0.5, standard: 0.6, aggressive: 0.7 },
                cards: [5, 6, 7, 8, 9, 10, 5, 6, 7, 8].map((v, i) => ({ name: `Low ${i}`, value: v })),
              },
              {
                bucket_id: 'high',
                min_value: 20,
                max_value: 40,
                odds: { standard: 0.2, aggressive: 0.3 },
                cards: [
                  { name: 'High A', value: 20 },
                  { name: 'High B', value: 40 },
                ],
              },
            ],
            chase: {
              card: { name: 'Chase Card', value: 500 },
              probability: 0.01,
              label: 'Big one',
              ends_at: null,
            },
          },
          {
            pack_type: 'single',
            name: 'Single',
            price: 100,
            max_quantity: 1,
            risk_levels: ['standard'],
            bands: [
              {
                bucket_id: 'only',
                min_value: 50,
                max_value: 150,
                odds: { standard: 1 },
                generate: { count: 30 },
              },
            ],
          },
          {
            pack_type: 'tiny',
            name: 'Tiny',
            price: 1,
            bands: [
              {
                bucket_id: 'one',
                min_value: 1,
                max_value: 1,
                odds: { standard: 1, chill: 1, aggressive: 1 },
                cards: [{ name: 'Only', value: 1 }],
              },
            ],
          },
          {
            pack_type: 'hidden',
            name: 'Hidden',
            price: 5,
            purchasable: false,
            bands: [
              { bucket_id: 'x', min_value: 1, max_value: 2, odds: { standard: 1 }, generate: { count: 3 } },
            ],
          },
          {
            pack_type: 'soldout',
            name: 'Sold out',
            price: 5,
            available: false,
            reason: 'out of stock',
            bands: [
              { bucket_id: 'x', min_value: 1, max_value: 2, odds: { standard: 1 }, generate: { count: 3 } },
            ],
          },
        ],
        shop: { generate: { count: 25 }, min_value: 5, max_value: 50, markup: 1.2 },
      },
    },
    dynamics: {
      others_pack_openings_per_hour: 0,
      others_shop_purchases_per_hour: 0,
      restock_fraction_per_hour: 0,
      restock_cards_per_hour_per_pack: 0,
      shop_restock_fraction_per_hour: 0,
      value_daily_volatility: 0,
      listing_fills_per_day_at_value: 0,
      others_listings_per_category: 2,
    },
    rules: { card_daily_count_cap: 3, card_daily_spend_cap: 100 },
    ...over,
  };
}

export interface Sim {
  clock: VirtualClock;
  market: Market;
  server: SimServer;
  call(
    method: string,
    path: string,
    opts?: {
      key?: string | null;
      body?: unknown;
      raw?: string;
      idem?: string;
      query?: Record<string, string | number | undefined>;
      headers?: Record<string, string>;
    },
  ): Promise<{ status: number; headers: Headers; json: any }>;
  advance(seconds: number): Promise<void>;
  close(): Promise<void>;
}

export async function startSim(world: WorldInput = testWorld(), seed = 7, start = T0): Promise<Sim> {
  const clock = new VirtualClock(start);
  const market = new Market(parseWorld(world), { clock, seed });
  const server = await startSimServer({ market, clock });
  const call: Sim['call'] = async (method, path, opts = {}) => {
    const url = new URL(path.startsWith('/sim/') ? path : `/api/partner/v1${path}`, server.url);
    for (const [k, v] of Object.entries(opts.query ?? {}))
      if (v !== undefined) url.searchParams.set(k, String(v));
    const headers: Record<string, string> = { ...opts.headers };
    const key = opts.key === undefined ? 'sk_sim_full' : opts.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    if (opts.idem) headers['idempotency-key'] = opts.idem;
    let body: string | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await res.text();
    return { status: res.status, headers: res.headers, json: text ? JSON.parse(text) : undefined };
  };
  return {
    clock,
    market,
    server,
    call,
    advance: async (seconds) => {
      const r = await call('POST', '/sim/v1/clock/advance', { body: { seconds } });
      if (r.status !== 200) throw new Error(`advance failed: ${JSON.stringify(r.json)}`);
    },
    close: () => server.close(),
  };
}

let n = 0;
export const ikey = () => `test-key-${String(++n).padStart(6, '0')}`;
