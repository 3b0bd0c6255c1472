/**
 * Fault injection over HTTP: connection dropped before / after the order commits, malformed 200
 * bodies, server faults with refund, latency holding an order running on the virtual clock.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PackPurchaseResponse } from '../../../src/api/schemas.js';
import { until } from '../../until.js';
import { balance, buyCard, buyPacks, ikey, type Sim, setFaults, shopCards, startConf } from './support.js';

let sim: Sim;
beforeEach(async () => {
  sim = await startConf();
});
afterEach(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

/** A raw request: resolves with the status and text, or with `dropped` when the socket closed. */
async function raw(path: string, body: unknown, idem?: string) {
  try {
    const res = await fetch(new URL(`/api/partner/v1${path}`, sim.server.url), {
      method: 'POST',
      headers: {
        authorization: 'Bearer sk_sim_full',
        'content-type': 'application/json',
        ...(idem ? { 'idempotency-key': idem } : {}),
      },
      body: JSON.stringify(body),
    });
    return { dropped: false as const, status: res.status, text: await res.text() };
  } catch (e) {
    return { dropped: true as const, error: e };
  }
}

describe('dropped connection', () => {
  it('before commit (pack purchase): nothing happens; a retry with the same key runs the order once', async () => {
    await setFaults(sim, { 'POST /packs/purchase': { drop_before_rate: 1, times: 1 } });
    const k = ikey();
    const body = { pack_type: 'basic', quantity: 2 };
    expect((await raw('/packs/purchase', body, k)).dropped).toBe(true);
    expect(await balance(sim)).toBe(1000);
    expect(sim.market.ledger()).toEqual([]);
    const retry = await buyPacks(sim, body, k);
    expect(retry.status).toBe(200);
    expect(retry.json.idempotent_replay).toBeUndefined();
    expect(await balance(sim)).toBe(980);
  });

  it('after commit (pack purchase): the retry with the same key replays with idempotent_replay: true; charged once', async () => {
    await setFaults(sim, { 'POST /packs/purchase': { drop_after_rate: 1, times: 1 } });
    const k = ikey();
    const body = { pack_type: 'basic', quantity: 2 };
    expect((await raw('/packs/purchase', body, k)).dropped).toBe(true);
    expect(await balance(sim)).toBe(980); // committed
    await sim.advance(5); // within the speed limit: a replay never counts against it
    const retry = await buyPacks(sim, body, k);
    expect(retry.status).toBe(200);
    const r = PackPurchaseResponse.parse(retry.json);
    expect(r.idempotent_replay).toBe(true);
    expect(r.total_charged).toBe(20);
    expect(await balance(sim)).toBe(980);
    expect(sim.market.ledger().filter((e) => e.kind === 'pack_purchase')).toHaveLength(1);
    expect((await sim.call('GET', '/account')).json.limits.packs_today).toBe(2);
  });

  it('after commit (card purchase): the retry replays; charged once', async () => {
    await setFaults(sim, { 'POST /cards/purchase': { drop_after_rate: 1, times: 1 } });
    const c = (await shopCards(sim))[0]!;
    const k = ikey();
    const body = { card_id: c.id, max_price: c.price };
    expect((await raw('/cards/purchase', body, k)).dropped).toBe(true);
    const after = await balance(sim);
    expect(after).toBeCloseTo(1000 - c.price - 1, 9);
    const retry = await buyCard(sim, body, k);
    expect(retry.status).toBe(200);
    expect(retry.json.idempotent_replay).toBe(true);
    expect(await balance(sim)).toBe(after);
  });

  it('on reads and sell-back too (any endpoint)', async () => {
    await setFaults(sim, { '*': { drop_before_rate: 1, times: 1 } });
    await expect(
      fetch(new URL('/api/partner/v1/me', sim.server.url), {
        headers: { authorization: 'Bearer sk_sim_full' },
      }),
    ).rejects.toThrow();
    expect((await sim.call('GET', '/me')).status).toBe(200);
  });
});

describe('malformed body', () => {
  it('a 200 whose body is not valid JSON; the order committed, and a retry replays it', async () => {
    await setFaults(sim, { 'POST /packs/purchase': { malformed_rate: 1, times: 1 } });
    const k = ikey();
    const body = { pack_type: 'basic' };
    const r = await raw('/packs/purchase', body, k);
    expect(r.dropped).toBe(false);
    if (r.dropped) return;
    expect(r.status).toBe(200);
    expect(() => JSON.parse(r.text)).toThrow();
    expect(await balance(sim)).toBe(990);
    const retry = await buyPacks(sim, body, k);
    expect(retry.json.idempotent_replay).toBe(true);
    expect(await balance(sim)).toBe(990);
  });

  it('on a read endpoint', async () => {
    await setFaults(sim, { 'GET /account': { malformed_rate: 1, times: 1 } });
    const res = await fetch(new URL('/api/partner/v1/account', sim.server.url), {
      headers: { authorization: 'Bearer sk_sim_full' },
    });
    expect(res.status).toBe(200);
    await expect(res.json()).rejects.toThrow();
    expect((await sim.call('GET', '/account')).json.balance).toBe(1000);
  });
});

describe('server fault (500)', () => {
  it('pack purchase: a pack fails to open, the whole order is refunded and none of its pulls stand', async () => {
    const pool = async () =>
      (await sim.call('GET', '/catalog/packs/pool', { query: { pack_type: 'basic' } })).json.total_cards;
    const cardsBefore = await pool();
    await setFaults(sim, { 'POST /packs/purchase': { error_rate: 1, times: 1 } });
    const r = await buyPacks(sim, { pack_type: 'basic', quantity: 5 });
    expect(r.status).toBe(500);
    expect(await balance(sim)).toBe(1000);
    expect(await pool()).toBe(cardsBefore);
    expect((await sim.call('GET', '/vault')).json.total).toBe(0);
    const ledger = sim.market.ledger();
    expect(ledger.map((e) => [e.kind, e.amountCents])).toEqual([
      ['pack_purchase', -5000],
      ['pack_refund', 5000],
    ]);
    // The report does not list a refunded purchase.
    expect((await sim.call('GET', '/pulls')).json.total).toBe(0);
  });

  it('fault rules are listed and cleared by the admin API', async () => {
    await setFaults(sim, { 'GET /me': { error_rate: 1 } });
    expect((await sim.call('GET', '/sim/v1/faults')).json.faults['GET /me'].error_rate).toBe(1);
    expect((await sim.call('GET', '/me')).status).toBe(500);
    await sim.call('DELETE', '/sim/v1/faults');
    expect((await sim.call('GET', '/me')).status).toBe(200);
  });
});

describe('latency', () => {
  it('on reads: the response waits for the virtual clock', async () => {
    await setFaults(sim, { 'GET /account': { latency_ms: 10_000 } });
    let done = false;
    const pending = sim.call('GET', '/account').then((r) => {
      done = true;
      return r;
    });
    // Wait until the market sleeps on the clock, then check it has not answered.
    await until(() => sim.clock.nextWakeAt() !== undefined, 'the market asleep on the virtual clock');
    expect(done).toBe(false);
    await sim.advance(10);
    expect((await pending).status).toBe(200);
    await sim.call('DELETE', '/sim/v1/faults');
  });
});
