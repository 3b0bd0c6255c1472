import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Identity, PackList, PurchaseReportPage } from '../../src/api/schemas.js';
import { ikey, type Sim, startSim, T0 } from './helpers.js';

let sim: Sim;
beforeAll(async () => {
  sim = await startSim();
});
afterAll(async () => {
  expect(sim.market.audit()).toEqual([]);
  await sim.close();
});

describe('authentication and scopes', () => {
  it('401 for missing, malformed, unknown and disabled keys; the key never appears in errors', async () => {
    const cases: [Record<string, string>, string | null][] = [
      [{}, null],
      [{ authorization: 'Token sk_sim_full' }, null],
      [{ authorization: 'Bearer' }, null],
      [{}, 'sk_nope'],
      [{}, 'sk_sim_disabled'],
    ];
    for (const [headers, key] of cases) {
      const r = await sim.call('GET', '/me', { key, headers });
      expect(r.status).toBe(401);
      expect(JSON.stringify(r.json)).not.toMatch(/sk_/);
    }
  });

  it('403 for a missing scope or an unlinked key on account endpoints; /me needs no scope', async () => {
    const buy = await sim.call('POST', '/packs/purchase', {
      key: 'sk_sim_read',
      body: { pack_type: 'basic' },
      idem: ikey(),
    });
    expect(buy.status).toBe(403);
    expect((await sim.call('GET', '/pulls', { key: 'sk_sim_read' })).status).toBe(403);
    expect((await sim.call('GET', '/account', { key: 'sk_sim_unlinked' })).status).toBe(403);
    expect((await sim.call('GET', '/vault', { key: 'sk_sim_unlinked' })).status).toBe(403);
    expect((await sim.call('GET', '/catalog/packs', { key: 'sk_sim_unlinked' })).status).toBe(200);
    const me = Identity.parse((await sim.call('GET', '/me', { key: 'sk_sim_unlinked' })).json);
    expect(me).toMatchObject({ linked: false, account: null, key: { name: 'sim-unlinked' } });
    const full = Identity.parse((await sim.call('GET', '/me')).json);
    expect(full.linked).toBe(true);
    expect(full.key.scopes).toHaveLength(7);
    expect(full.account).toMatchObject({ id: 'acct_a', username: 'alice' });
  });
});

describe('HTTP shell', () => {
  it('404 unknown route, 405 wrong method, 400 malformed JSON, 413 too large', async () => {
    expect((await sim.call('GET', '/nope')).status).toBe(404);
    const m = await sim.call('GET', '/packs/purchase');
    expect(m.status).toBe(405);
    expect(m.headers.get('allow')).toBe('POST');
    const bad = await sim.call('POST', '/packs/purchase', { raw: '{"pack_type":', idem: ikey() });
    expect(bad.status).toBe(400);
    expect(bad.json.error).toMatch(/JSON/);
    const big = await sim.call('POST', '/cards/sell-back', {
      raw: JSON.stringify({ items: [], pad: 'x'.repeat(70_000) }),
    });
    expect(big.status).toBe(413);
    expect(typeof big.json.error).toBe('string');
  });

  it('lists packs: unbuyable packs omitted, out-of-stock listed with a reason', async () => {
    const list = PackList.parse((await sim.call('GET', '/catalog/packs')).json);
    const types = list.packs.map((p) => p.pack_type);
    expect(types).not.toContain('hidden');
    expect(list.packs.find((p) => p.pack_type === 'soldout')).toMatchObject({
      available: false,
      reason: 'out of stock',
    });
    expect((await sim.call('GET', '/catalog/packs', { query: { category: 'onepiece' } })).json).toEqual({
      category: 'onepiece',
      packs: [],
    });
    expect((await sim.call('GET', '/catalog/packs', { query: { category: 'cars' } })).status).toBe(400);
  });

  it('admin clock reads and advances', async () => {
    const c = (await sim.call('GET', '/sim/v1/clock')).json;
    expect(Date.parse(c.now)).toBe(sim.clock.now());
    const before = sim.clock.now();
    const r = (await sim.call('POST', '/sim/v1/clock/advance', { body: { seconds: 1.5 } })).json;
    expect(Date.parse(r.now)).toBe(before + 1500);
    expect((await sim.call('POST', '/sim/v1/clock/advance', { body: { seconds: -1 } })).status).toBe(400);
  });
});

describe('purchase report', () => {
  it('window rules: default 7 days to now, over 31 days / malformed / inverted give 400', async () => {
    const now = sim.clock.now();
    const d = PurchaseReportPage.parse((await sim.call('GET', '/pulls')).json);
    expect(Date.parse(d.until)).toBe(now);
    expect(Date.parse(d.since)).toBe(now - 7 * 86_400_000);
    const iso = (ms: number) => new Date(ms).toISOString();
    for (const q of [
      { since: iso(now - 32 * 86_400_000), until: iso(now) },
      { since: 'yesterday' },
      { since: iso(now), until: iso(now - 1000) },
      { until: '2026-01-01' },
      { per_page: 0 },
    ])
      expect((await sim.call('GET', '/pulls', { query: q })).status, JSON.stringify(q)).toBe(400);
    expect(
      (await sim.call('GET', '/pulls', { query: { since: iso(now - 31 * 86_400_000), until: iso(now) } }))
        .status,
    ).toBe(200);
  });

  it('lists our purchases, excludes internal accounts, and closed windows are stable', async () => {
    await sim.call('POST', '/packs/purchase', { body: { pack_type: 'basic', quantity: 2 }, idem: ikey() });
    await sim.call('POST', '/packs/purchase', {
      body: { pack_type: 'basic' },
      idem: ikey(),
      key: 'sk_house',
    });
    const since = new Date(T0 - 3600_000).toISOString();
    const until = new Date(sim.clock.now()).toISOString();
    await sim.advance(120);
    const page = PurchaseReportPage.parse(
      (await sim.call('GET', '/pulls', { query: { since, until } })).json,
    );
    expect(page.total).toBe(2);
    expect(
      page.pulls.every((r) => r.amount === 10 && r.source === 'pokemon' && r.pack_type === 'basic'),
    ).toBe(true);
    await sim.call('POST', '/packs/purchase', { body: { pack_type: 'basic' }, idem: ikey() });
    const again = (await sim.call('GET', '/pulls', { query: { since, until } })).json;
    expect(again).toEqual(page);
  });
});
