/**
 * The fault proxy and the audit on an in-process simulator (fast, no CLI): a server that forgets
 * keys charges a re-sent order twice and the audit says so; a lying pool shows price 0.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { audit, summaryLine } from '../../chaos/audit.js';
import { type FaultProxy, NO_MODES, startFaultProxy } from '../../chaos/proxy.js';
import { ACCOUNT, chaosWorld, FRESH_WINDOW_MS, KEY, PACK } from '../../chaos/setup.js';
import { API_PREFIX } from '../../src/api/partner-api.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { parseWorld } from '../../src/market/world.js';
import { Ledger } from '../../src/store/ledger.js';
import { removeTempDirs, tempDir } from '../e2e/helpers.js';

afterAll(removeTempDirs);

describe('fault proxy', () => {
  const clock = new SimClock();
  const market = new Market(parseWorld(chaosWorld()), { clock, seed: 3 });
  let server: SimServer;
  let proxy: FaultProxy;
  beforeAll(async () => {
    server = await startSimServer({ market, clock, port: 0 });
    proxy = await startFaultProxy(server.url, 3);
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  const buy = (key: string) =>
    fetch(`${proxy.url}${API_PREFIX}/packs/purchase`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify({ pack_type: PACK, category: 'pokemon', quantity: 1, risk_level: 'standard' }),
    });
  const entries = () =>
    market
      .ledger()
      .filter((e) => e.accountId === ACCOUNT)
      .map((e) => ({
        kind: e.kind,
        accountId: e.accountId,
        ref: e.ref,
        amountCents: e.amountCents,
        at: e.at,
      }));

  it('passes a re-sent key through by default (the server replays), and forgets it on demand', async () => {
    const first = (await (await buy('chaos_key_0001')).json()) as { checkout_id: string };
    const replay = (await (await buy('chaos_key_0001')).json()) as {
      checkout_id: string;
      idempotent_replay?: boolean;
    };
    expect(replay).toMatchObject({ checkout_id: first.checkout_id, idempotent_replay: true });

    proxy.setModes({ ...NO_MODES, forgetKeys: true });
    const again = (await (await buy('chaos_key_0001')).json()) as {
      checkout_id: string;
      idempotent_replay?: boolean;
    };
    expect(again.checkout_id).not.toBe(first.checkout_id);
    expect(again.idempotent_replay).toBeUndefined();
    expect(proxy.rekeyed).toBe(1);
    expect(proxy.charges.get(again.checkout_id)?.originalKey).toBe('chaos_key_0001');
    proxy.setModes(NO_MODES);

    // The audit against a ledger that knows nothing: one double charge, every pull lost.
    const dir = tempDir('packbot-chaos-proxy-');
    const path = join(dir, 'ledger.db');
    Ledger.open(path).close();
    const r = audit({
      ledgerPath: path,
      kills: 0,
      simEntries: entries(),
      vault: [],
      modelProblems: market.audit(),
      seen: proxy.charges,
      caps: { dailyCents: 1_000_000, totalCents: 1_000_000 },
      freshWindowMs: FRESH_WINDOW_MS,
      now: clock.now(),
    });
    expect(r).toMatchObject({ orders: 0, charges: 2, doubleCharges: 1, lostPulls: 2, ok: false });
    expect(summaryLine(r)).toBe(
      'chaos: 0 kills, 0 orders, 2 charges, 1 double charges, 2 lost pulls, 0 sold at 0.9 of 0, ledger - simulator = 2000 cents',
    );
  });

  it('swallows a purchase answer after the order committed, and still records the charge', async () => {
    proxy.setModes({ ...NO_MODES, dropAfterRate: 1 });
    await expect(buy('chaos_key_0002')).rejects.toThrow();
    proxy.setModes(NO_MODES);
    const seen = [...proxy.charges.values()].filter((c) => c.originalKey === 'chaos_key_0002');
    expect(seen).toHaveLength(1);
    expect(entries().filter((e) => e.ref === seen[0]!.checkoutId && e.kind === 'pack_purchase')).toHaveLength(
      1,
    );
  });

  it('serves price 0 in the pool of the chosen pack while the pack list keeps the real price', async () => {
    const get = async (path: string) =>
      (await (
        await fetch(`${proxy.url}${API_PREFIX}${path}`, { headers: { authorization: `Bearer ${KEY}` } })
      ).json()) as Record<string, unknown>;
    const pool = `/catalog/packs/pool?category=pokemon&pack_type=${PACK}&risk_level=standard`;
    expect((await get(pool)).price).toBe(10);
    proxy.setModes({ ...NO_MODES, zeroPricePack: PACK });
    expect((await get(pool)).price).toBe(0);
    const list = (await get('/catalog/packs?category=pokemon')) as {
      packs: { pack_type: string; price: number }[];
    };
    expect(list.packs.find((p) => p.pack_type === PACK)?.price).toBe(10);
    proxy.setModes(NO_MODES);
  });
});
