/**
 * Spec "States and transitions", order (idempotency key) table: one test per row, for both
 * purchase endpoints. A running order is held by a latency fault on the virtual clock (the market
 * sleeps on the clock) and released by advancing the clock: no wall-clock wait anywhere.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  balance,
  buyCard,
  buyPacks,
  expectError,
  ikey,
  type Sim,
  setFaults,
  shopCards,
  startConf,
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

interface Kind {
  name: string;
  endpoint: string;
  /** A valid order body; `n` picks a different order. */
  body(n: number): Promise<Record<string, unknown>>;
  send(body: Record<string, unknown>, idem: string): ReturnType<Sim['call']>;
}

const kinds: Kind[] = [
  {
    name: 'pack purchase',
    endpoint: 'POST /packs/purchase',
    body: async (n) => ({ pack_type: 'basic', quantity: n + 1 }),
    send: (b, k) => buyPacks(sim, b, k),
  },
  {
    name: 'card purchase',
    endpoint: 'POST /cards/purchase',
    body: async (n) => {
      const c = (await shopCards(sim))[n]!;
      return { card_id: c.id, max_price: c.price };
    },
    send: (b, k) => buyCard(sim, b, k),
  },
];

const orders = async () => (await sim.call('GET', '/sim/v1/state')).json.orders as { state: string }[];

/** Starts an order that stays running until the clock passes 60 s. */
async function startRunning(kind: Kind, body: Record<string, unknown>, idem: string) {
  await setFaults(sim, { [kind.endpoint]: { latency_ms: 60_000 } });
  const pending = kind.send(body, idem);
  await untilOrderRunning(sim);
  return { pending }; // wrapped: awaiting startRunning must not await the order itself
}

async function finish({ pending }: { pending: ReturnType<Sim['call']> }) {
  await sim.call('DELETE', '/sim/v1/faults');
  await sim.advance(60);
  return pending;
}

describe.each(kinds)('order states: $name', (kind) => {
  it('(none) --first request with a key--> running', async () => {
    expect(await orders()).toEqual([]);
    const pending = await startRunning(kind, await kind.body(0), ikey());
    expect(await orders()).toEqual([expect.objectContaining({ state: 'running' })]);
    expect((await finish(pending)).status).toBe(200);
  });

  it('running --order completes--> finished; the stored response is kept', async () => {
    const k = ikey();
    const body = await kind.body(0);
    const pending = await startRunning(kind, body, k);
    const done = await finish(pending);
    expect(done.status).toBe(200);
    expect(await orders()).toEqual([expect.objectContaining({ state: 'finished' })]);
    const replay = await kind.send(body, k);
    const { idempotent_replay, ...stored } = replay.json;
    expect(idempotent_replay).toBe(true);
    expect(stored).toEqual(done.json);
  });

  it('running --order fails--> failed: refunded, key released', async () => {
    const before = await balance(sim);
    await setFaults(sim, { [kind.endpoint]: { latency_ms: 60_000, error_rate: 1 } });
    const k = ikey();
    const pending = kind.send(await kind.body(0), k);
    await untilOrderRunning(sim);
    await sim.advance(60);
    const failed = await pending;
    expectError(failed, 500);
    expect(await balance(sim)).toBe(before);
    expect(await orders()).toEqual([]); // the key is released
    const net = sim.market.ledger().reduce((s, e) => s + e.amountCents, 0);
    expect(net).toBe(0); // anything charged was refunded
    await sim.call('DELETE', '/sim/v1/faults');
  });

  it('finished --retry with the same key and body--> finished; original response with idempotent_replay: true, nothing charged', async () => {
    const k = ikey();
    const body = await kind.body(0);
    const first = await kind.send(body, k);
    expect(first.status).toBe(200);
    expect(first.json.idempotent_replay).toBeUndefined();
    const after = await balance(sim);
    const ledger = sim.market.ledger().length;
    await sim.advance(5);
    const again = await kind.send(body, k);
    expect(again.status).toBe(200);
    const { idempotent_replay, ...rest } = again.json;
    expect(idempotent_replay).toBe(true);
    expect(rest).toEqual(first.json);
    expect(await balance(sim)).toBe(after);
    expect(sim.market.ledger().length).toBe(ledger);
  });

  it('running --retry with the same key--> running; 409 IDEMPOTENCY_IN_PROGRESS', async () => {
    const k = ikey();
    const body = await kind.body(0);
    const pending = await startRunning(kind, body, k);
    const busy = await kind.send(body, k);
    expectError(busy, 409, 'IDEMPOTENCY_IN_PROGRESS');
    expect(await orders()).toEqual([expect.objectContaining({ state: 'running' })]);
    const done = await finish(pending);
    expect(done.status).toBe(200);
    expect(done.json.idempotent_replay).toBeUndefined();
  });

  it('running --same key, different body--> unchanged; 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const k = ikey();
    const pending = await startRunning(kind, await kind.body(0), k);
    expectError(await kind.send(await kind.body(1), k), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await orders()).toEqual([expect.objectContaining({ state: 'running' })]);
    expect((await finish(pending)).status).toBe(200);
  });

  it('finished --same key, different body--> unchanged; 422 IDEMPOTENCY_KEY_REUSED', async () => {
    const k = ikey();
    const first = await kind.send(await kind.body(0), k);
    expect(first.status).toBe(200);
    const after = await balance(sim);
    await sim.advance(60);
    expectError(await kind.send(await kind.body(1), k), 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await balance(sim)).toBe(after);
    expect(await orders()).toEqual([expect.objectContaining({ state: 'finished' })]);
  });

  it('failed --retry with the same key--> running; the order runs again', async () => {
    await setFaults(sim, { [kind.endpoint]: { error_rate: 1, times: 1 } });
    const k = ikey();
    const body = await kind.body(0);
    const before = await balance(sim);
    expectError(await kind.send(body, k), 500);
    expect(await balance(sim)).toBe(before);
    const retry = await kind.send(body, k);
    expect(retry.status, JSON.stringify(retry.json)).toBe(200);
    expect(retry.json.idempotent_replay).toBeUndefined();
    expect(await balance(sim)).toBeCloseTo(before - retry.json.total_charged, 9);
  });
});
