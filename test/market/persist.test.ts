/**
 * Market.saveState / restoreState: a restored market is the same market. Both copies get the same
 * further requests (purchases, replays, sell-backs, listings, card purchases, time passing with the
 * dynamics on) and must answer them identically, with the same dump, ledger and audit.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_WORLD_PATH, loadWorld } from '../../src/config/world-file.js';
import { VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import {
  decodeState,
  encodeState,
  readStateHeader,
  StateMismatchError,
  upgrade,
} from '../../src/market/persist.js';
import { reportRows } from '../../src/market/report-log.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { parseWorld } from '../../src/market/world.js';
import { T0, testWorld } from './helpers.js';

const KEY = 'sk_sim_full';
const world = loadWorld(DEFAULT_WORLD_PATH);

/** Runs one call and returns its response or its error (class, status, body), for comparison. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
  try {
    return { ok: await p };
  } catch (e) {
    const err = e as { name?: string; message?: string; status?: number; code?: string };
    return { err: [err.name, err.status, err.code, err.message] };
  }
}

type Api = ReturnType<Market['api']>;

/** Some trading: packs, a sell-back, a listing, a card purchase, time passing. */
async function trade(api: Api, clock: VirtualClock, tag: string): Promise<unknown[]> {
  const out: unknown[] = [];
  await clock.advance(61_000);
  const buy = (await api.purchasePacks({ pack_type: 'starter', quantity: 5 }, `${tag}-p1`)) as any;
  out.push(buy);
  out.push(await outcome(api.purchasePacks({ pack_type: 'starter', quantity: 5 }, `${tag}-p1`)));
  const cards = (buy.pulls as any[]).filter((p) => p.kind === 'card');
  await clock.advance(61_000);
  out.push(
    await outcome(api.sellBack(cards.slice(0, 2).map((p) => ({ card_id: p.item.id, pull_id: p.pull_id })))),
  );
  if (cards[2]) out.push(await outcome(api.createListing({ card_id: cards[2].item.id, price: 999 })));
  const shop = (await api.listShopCards({ category: 'pokemon' } as never)) as any;
  out.push(shop);
  const first = shop.cards?.[0] ?? shop.items?.[0];
  if (first)
    out.push(
      await outcome(api.purchaseCard({ card_id: first.id ?? first.card_id, max_price: 10_000 }, `${tag}-c1`)),
    );
  await clock.advance(3 * 3_600_000);
  out.push(await outcome(api.purchasePacks({ pack_type: 'collector', quantity: 2 }, `${tag}-p2`)));
  out.push(await outcome(api.getVault()));
  out.push(await outcome(api.getAccount()));
  out.push(await outcome(api.getPurchaseReport({} as never)));
  return out;
}

describe('market state persistence', () => {
  it('a restored market answers every further request exactly like the original', async () => {
    const clockA = new VirtualClock(T0);
    const a = new Market(world, { clock: clockA, seed: 11 });
    await trade(a.api(KEY), clockA, 'first');
    expect(a.audit()).toEqual([]);

    const buf = a.saveState({ note: 'x' });
    const header = readStateHeader(buf);
    expect(header).toMatchObject({ version: 1, seed: 11, savedAt: clockA.now(), meta: { note: 'x' } });

    const clockB = new VirtualClock(clockA.now());
    const b = Market.fromState(world, buf, { clock: clockB });
    expect(b.seed).toBe(11);
    expect(b.dump()).toEqual(a.dump());
    expect(b.ledger()).toEqual(a.ledger());

    // A replay of an order of the first session is answered from the restored idempotency store.
    const replayA = await outcome(
      a.api(KEY).purchasePacks({ pack_type: 'starter', quantity: 5 }, 'first-p1'),
    );
    const replayB = await outcome(
      b.api(KEY).purchasePacks({ pack_type: 'starter', quantity: 5 }, 'first-p1'),
    );
    expect(replayB).toEqual(replayA);
    expect((replayB as any).ok.idempotent_replay).toBe(true);

    const moreA = await trade(a.api(KEY), clockA, 'second');
    const moreB = await trade(b.api(KEY), clockB, 'second');
    expect(moreB).toEqual(moreA);
    expect(b.dump()).toEqual(a.dump());
    expect(b.ledger()).toEqual(a.ledger());
    expect(b.audit()).toEqual([]);
    expect(b.otherListings()).toEqual(a.otherListings());
    expect(readStateHeader(b.saveState())).toEqual(readStateHeader(a.saveState()));
  });

  it('the restored copy is independent of the original', async () => {
    const clock = new VirtualClock(T0);
    const a = new Market(world, { clock, seed: 3 });
    const buf = a.saveState();
    const b = Market.fromState(world, buf, { clock });
    await a.api(KEY).purchasePacks({ pack_type: 'starter', quantity: 1 }, 'key-00001');
    expect(b.ledger()).toHaveLength(0);
    expect(a.ledger().length).toBeGreaterThan(0);
  });

  it('refuses a state written for another seed or world, and bytes that are not a state', () => {
    const clock = new VirtualClock(T0);
    const buf = new Market(world, { clock, seed: 5 }).saveState();
    expect(() => new Market(world, { clock, seed: 6 }).restoreState(buf)).toThrow(StateMismatchError);
    expect(() => new Market(world, { clock, seed: 6 }).restoreState(buf)).toThrow(/seed 5/);
    const other = parseWorld(testWorld());
    expect(() => new Market(other, { clock, seed: 5 }).restoreState(buf)).toThrow(/another world/);
    expect(() => new Market(world, { clock, seed: 5 }).restoreState(Buffer.from('hello\n'))).toThrow(
      StateMismatchError,
    );
    const future = Buffer.from(buf.toString('latin1').replace('"version":1', '"version":9'), 'latin1');
    expect(() => new Market(world, { clock, seed: 5 }).restoreState(future)).toThrow(/version 9/);
  });

  it('leaves out orders still running, so a retry with their key runs after a restore', async () => {
    const clock = new VirtualClock(T0);
    const a = new Market(world, { clock, seed: 2 });
    a.setFaults({ 'POST /packs/purchase': { latency_ms: 1000 } as never });
    const running = a.api(KEY).purchasePacks({ pack_type: 'starter', quantity: 1 }, 'slow-order');
    const buf = a.saveState();
    await clock.advance(1000);
    await running;
    const b = Market.fromState(world, buf, { clock });
    expect(b.faults.list()).toEqual(a.faults.list());
    b.faults.clear();
    const r = (await b.api(KEY).purchasePacks({ pack_type: 'starter', quantity: 1 }, 'slow-order')) as any;
    expect(r.idempotent_replay).toBeUndefined();
    expect(b.audit()).toEqual([]);
  });

  it('moves a SimClock forward to the saved time, never back', () => {
    const wall = new VirtualClock(T0);
    const simA = new SimClock(wall);
    simA.advance(3_600_000);
    const buf = new Market(world, { clock: simA, seed: 1 }).saveState();
    expect(readStateHeader(buf).clockOffsetMs).toBe(3_600_000);
    const simB = new SimClock(wall);
    Market.fromState(world, buf, { clock: simB });
    expect(simB.now()).toBe(simA.now());
  });

  it('calls mutation listeners after writes only', async () => {
    const clock = new VirtualClock(T0);
    const m = new Market(world, { clock, seed: 1 });
    const ops: string[] = [];
    m.onMutation((op) => ops.push(op));
    await m.api(KEY).getAccount();
    await m.api(KEY).purchasePacks({ pack_type: 'starter', quantity: 1 }, 'key-00002');
    await outcome(m.api(KEY).sellBack([{ card_id: 'nope', pull_id: 'nope' }]));
    expect(ops).toEqual(['purchasePacks', 'sellBack']);
  });
});

describe('states saved before the report columns, released cards and draw tables', () => {
  it('are upgraded to the report rows they kept and empty release bookkeeping', async () => {
    const clock = new VirtualClock(T0);
    const m = new Market(world, { clock, seed: 4 });
    await trade(m.api(KEY), clock, 'old-layout');
    await clock.advance(6 * 3_600_000);
    const report = await m.api(KEY).getPurchaseReport({});
    expect(report.total).toBeGreaterThan(0);
    // The old layout: every opening as a row object (a free one among them), no release fields.
    const { header, state, faults } = decodeState(m.saveState(), world, 4);
    const rows = reportRows(state.report, 0, Number.MAX_SAFE_INTEGER).map((r) => ({
      at: r.at,
      userId: r.userId,
      amountCents: r.amountCents,
      source: state.inv.pools[r.pool]!.spec.report_source ?? state.inv.pools[r.pool]!.category,
      packType: state.inv.pools[r.pool]!.spec.pack_type,
      internal: false,
    }));
    rows.push({ ...rows[0]!, amountCents: 0 });
    const old = { ...state, report: rows, inv: { ...state.inv } } as unknown as typeof state;
    const inv = old.inv as Partial<typeof state.inv>;
    delete inv.free;
    delete inv.goneIds;
    delete inv.releasedTotal;
    // Nor the pools' draw tables (odds laid out per risk level, their totals, the empty bands).
    const tables = state.inv.pools.map((p) => ({
      bandOdds: p.bandOdds,
      oddsTotal: p.oddsTotal,
      emptyBands: p.emptyBands,
      drawWeights: p.drawWeights,
    }));
    for (const p of state.inv.pools) {
      const q = p as Partial<typeof p>;
      delete q.bandOdds;
      delete q.oddsTotal;
      delete q.emptyBands;
      delete q.drawWeights;
    }
    upgrade(old);
    expect(
      state.inv.pools.map((p) => ({
        bandOdds: p.bandOdds,
        oddsTotal: p.oddsTotal,
        emptyBands: p.emptyBands,
        drawWeights: p.drawWeights,
      })),
    ).toEqual(tables);
    const restored = Market.fromState(world, encodeState(header, old, faults), { clock });
    expect(await restored.api(KEY).getPurchaseReport({})).toEqual(report);
    expect(restored.audit()).toEqual([]);
    await clock.advance(86_400_000);
    expect((restored.dump() as { cards_released: number }).cards_released).toBeGreaterThan(0);
    expect(restored.audit()).toEqual([]);
  });
});
