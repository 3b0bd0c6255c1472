/**
 * Shared setup of the conformance suite: a simulator over real HTTP on a loopback port, on a
 * VirtualClock that only the admin endpoint (or the clock object) moves. Nothing here sleeps.
 */
import { expect } from 'vitest';
import { ErrorBody } from '../../../src/api/schemas.js';
import { applyRate, toCents, toUsd } from '../../../src/core/money.js';
import type { WorldInput } from '../../../src/market/world-schema.js';
import { until } from '../../until.js';
import { ikey, type Sim, startSim, T0, testWorld } from '../helpers.js';

export { ikey, type Sim, startSim, T0 };

const ALL_SCOPES = [
  'read:catalog',
  'read:account',
  'read:pulls',
  'rip:packs',
  'buy:cards',
  'sell:cards',
  'write:listings',
] as const;

export const DAY_S = 86_400;

/**
 * The shared test world (acct_a 1000 USD behind the dev keys; bob; an internal account) plus keys
 * that isolate single rules, a pack that only yields sealed packs, and a poor account.
 */
export function confWorld(opts: { volatility?: number; dynamics?: Record<string, number> } = {}): WorldInput {
  const w = testWorld();
  w.accounts = [...(w.accounts ?? []), { id: 'acct_poor', username: 'poor', balance: 5 }];
  w.keys = [
    ...(w.keys ?? []),
    { name: 'pulls-only', key: 'sk_pulls_only', scopes: ['read:pulls'], account: 'acct_a' },
    { name: 'unlinked-all', key: 'sk_unlinked_all', scopes: [...ALL_SCOPES], account: null },
    { name: 'poor', key: 'sk_poor', scopes: [...ALL_SCOPES], account: 'acct_poor' },
  ];
  const pokemon = w.categories!.pokemon!;
  pokemon.packs = [
    ...(pokemon.packs ?? []),
    {
      pack_type: 'sealedonly',
      name: 'Sealed only',
      price: 2,
      max_quantity: 5,
      bands: [
        {
          bucket_id: 'sealed',
          min_value: 1,
          max_value: 2,
          is_consolation: true,
          odds: { standard: 1 },
          cards: [1, 1.5, 2, 1, 1.5].map((value, i) => ({ name: `Sealed ${i}`, value })),
        },
      ],
    },
  ];
  w.dynamics = {
    ...w.dynamics,
    ...(opts.volatility !== undefined ? { value_daily_volatility: opts.volatility } : {}),
    ...opts.dynamics,
  };
  return w;
}

export const startConf = (opts?: Parameters<typeof confWorld>[0], seed = 7) =>
  startSim(confWorld(opts), seed);

type Res = Awaited<ReturnType<Sim['call']>>;

/** An error response: JSON body with `error`, the given status, and `code` (or none at all). */
export function expectError(r: Res, status: number, code?: string): void {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  const body = ErrorBody.parse(r.json);
  expect(typeof body.error).toBe('string');
  if (code) expect(body.code).toBe(code);
  else expect(body.code).toBeUndefined();
}

/** Waits until an order is held running (e.g. by a latency fault on the virtual clock). */
export async function untilOrderRunning(sim: Sim): Promise<void> {
  await until(async () => {
    const st = (await sim.call('GET', '/sim/v1/state')).json;
    return st.orders.some((o: { state: string }) => o.state === 'running');
  }, 'an order is running');
}

export const setFaults = async (sim: Sim, faults: Record<string, unknown>) => {
  const r = await sim.call('POST', '/sim/v1/faults', { body: { faults } });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
};

/** USD payout of `rate` on a USD value, rounded to the cent half away from zero (DESIGN.md). */
export const payout = (valueUsd: number, rate: number) => toUsd(applyRate(toCents(valueUsd), rate));

export const buyPacks = (sim: Sim, body: Record<string, unknown>, idem = ikey(), key = 'sk_sim_full') =>
  sim.call('POST', '/packs/purchase', { body, idem, key });

export const buyCard = (sim: Sim, body: Record<string, unknown>, idem = ikey(), key = 'sk_sim_full') =>
  sim.call('POST', '/cards/purchase', { body, idem, key });

export async function balance(sim: Sim, key = 'sk_sim_full'): Promise<number> {
  const r = await sim.call('GET', '/account', { key });
  expect(r.status).toBe(200);
  return r.json.balance as number;
}

export async function vault(sim: Sim, key = 'sk_sim_full', query: Record<string, string | number> = {}) {
  const r = await sim.call('GET', '/vault', { key, query: { per_page: 200, ...query } });
  expect(r.status).toBe(200);
  return r.json as {
    total: number;
    cards: {
      card_id: string;
      pull_id: string | null;
      value: number;
      listed: boolean;
      item: { name: string; market_value: number };
      buyback: {
        amount: number;
        rate: number;
        basis_value: number;
        locked_value_until: string | null;
      } | null;
    }[];
  };
}

export async function shopCards(sim: Sim) {
  const r = await sim.call('GET', '/catalog/cards', { query: { per_page: 1000 } });
  expect(r.status).toBe(200);
  return r.json.cards as { id: string; price: number; market_value: number; name: string }[];
}

/** Moves a minute on, then buys packs until a card (not a sealed pack) is pulled; returns that pull. */
export async function pullCard(sim: Sim, key = 'sk_sim_full', packType = 'basic') {
  for (let i = 0; i < 5; i++) {
    await sim.advance(60); // the speed limit: one purchase request per minute per key
    const r = await buyPacks(sim, { pack_type: packType, quantity: 3 }, ikey(), key);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const card = r.json.pulls.find((p: { kind: string }) => p.kind === 'card');
    if (card) return card as { pull_id: string; value: number; item: { id: string; name: string } };
  }
  throw new Error('no card pulled');
}

export const sellBack = (sim: Sim, items: { card_id: string; pull_id: string }[], key = 'sk_sim_full') =>
  sim.call('POST', '/cards/sell-back', { body: { items }, key });
