import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { MIGRATIONS } from '../../src/store/migrations.js';
import { modelOrders } from '../../src/store/model-orders.js';
import type { OrderModelInput } from '../../src/store/model-store.js';
import type { OrderPromise } from '../../src/strategy/model-promise.js';
import { strategyDigest } from '../../src/strategy/strategy-digest.js';
import { strategy } from '../strategy-builder.js';
import { cardPull, packResponse, sealedPull, T0 } from './fixtures.js';

const BODY = { pack_type: 'starter', category: 'pokemon', quantity: 4, risk_level: 'standard' };
const STRATEGY = strategy({ name: 'lister', sell: { threshold_usd: 25, sealed_value_fraction: 0.5 } });
const PROMISE: OrderPromise = {
  packs: 4,
  priceCents: 2500,
  evCents: 3100,
  realizedEvCents: 2900,
  sdCents: 1500,
  pLoss: 0.7,
  parts: {
    sell_back: { meanCents: 800, sdCents: 300 },
    listing: { meanCents: 2000, sdCents: 1400 },
    held: { meanCents: 100, sdCents: 200 },
  },
};
const model: OrderModelInput = {
  strategy: STRATEGY,
  category: 'pokemon',
  packType: 'starter',
  riskLevel: 'standard',
  promise: PROMISE,
};
const FRESH = '2026-01-01T12:05:00.000Z';

describe('the model row of an order', () => {
  let clock: VirtualClock;
  let ledger: Ledger;
  beforeEach(() => {
    clock = new VirtualClock(T0);
    ledger = Ledger.open(':memory:', { clock });
  });
  afterEach(() => ledger.close());

  /** An order of four: a low card, a high card, another high card, a sealed pack. */
  function book(key = 'model-key-1', checkout = 'co-1') {
    ledger.recordIntent({ key, account: 'main', operation: 'pack', body: BODY, model });
    ledger.markIntentSent(key);
    return ledger.confirmIntent(
      key,
      packResponse(
        checkout,
        [
          cardPull(`${checkout}low`, 10, FRESH),
          cardPull(`${checkout}hi1`, 40, FRESH),
          cardPull(`${checkout}hi2`, 60, FRESH),
          sealedPull(`${checkout}s`, 8),
        ],
        100,
        900,
      ),
    );
  }

  it('is written with the intent, before anything is sent, with the strategy version', () => {
    ledger.recordIntent({ key: 'model-key-0', account: 'main', operation: 'pack', body: BODY, model });
    // Not confirmed: no order, so nothing to compare yet.
    expect(ledger.modelRows().orders).toEqual([]);
    book();
    const rows = ledger.modelRows();
    expect(rows.orders).toHaveLength(1);
    expect(rows.orders[0]).toMatchObject({
      intentKey: 'model-key-1',
      account: 'main',
      digest: strategyDigest(STRATEGY),
      strategyName: 'lister',
      category: 'pokemon',
      packType: 'starter',
      riskLevel: 'standard',
      promise: PROMISE,
      decidedAt: T0,
      quantity: 4,
      totalChargedCents: 10_000,
    });
    expect(JSON.parse(rows.strategies.get(strategyDigest(STRATEGY))!.json)).toEqual(STRATEGY);
  });

  it('turns into model-gap orders: each pull in its part and state', () => {
    const { pulls } = book();
    const [low, hi1, hi2] = pulls;
    ledger.recordDecision({ pullId: low!.pullId, action: 'sell_back', reason: 'low' });
    ledger.recordSellBack([
      { pull_id: low!.pullId, card_id: low!.cardId, status: 'sold', payout_amount: 9, payout_rate: 0.9 },
    ]);
    ledger.recordDecision({ pullId: hi1!.pullId, action: 'list', reason: 'high', priceCents: 5200 });
    clock.advanceSync(60_000);
    ledger.recordListing({ listingId: 'l-1', cardId: hi1!.cardId, pullId: hi1!.pullId, priceCents: 5200 });
    ledger.recordDecision({ pullId: hi2!.pullId, action: 'list', reason: 'high', priceCents: 7800 });
    ledger.recordListing({ listingId: 'l-2', cardId: hi2!.cardId, pullId: hi2!.pullId, priceCents: 7800 });
    clock.advanceSync(3_600_000);
    ledger.recordListingFill('l-2', 7410);
    const now = clock.now();
    const { orders, excluded } = modelOrders(ledger.modelRows(), now);
    expect(excluded).toBe(0);
    expect(orders).toHaveLength(1);
    const o = orders[0]!;
    expect(o).toMatchObject({ key: 'model-key-1', strategy: 'lister', spendCents: 10_000, at: T0 });
    expect(o.pulls.map((p) => [p.part, p.state, p.cents, p.listedAt])).toEqual([
      ['sell_back', 'resolved', 900, null],
      ['listing', 'listed', 0, T0 + 60_000],
      ['listing', 'resolved', 7410, T0 + 60_000],
      ['held', 'resolved', 400, null],
    ]);
    // The open listing's floor: its sell-back offer now (0.8 after the 5-minute window).
    expect(o.pulls[1]!.sellBackCents).toBe(3200);
  });

  it('a delisted card waiting for its sale is the listing part at its sell-back offer', () => {
    const { pulls } = book();
    const hi = pulls[1]!;
    ledger.recordDecision({ pullId: hi.pullId, action: 'list', reason: 'high', priceCents: 5200 });
    ledger.recordListing({ listingId: 'l-1', cardId: hi.cardId, pullId: hi.pullId, priceCents: 5200 });
    ledger.recordListingUpdate('l-1', { delisted: true });
    const o = modelOrders(ledger.modelRows(), clock.now() + 3_600_000).orders[0]!;
    // Delisted at once, long before max_days: not the strategy's doing (off the model's path).
    expect(o.pulls[1]).toMatchObject({
      part: 'listing',
      state: 'waiting',
      cents: 3200,
      listedAt: T0,
      offModel: true,
    });
    // Undecided pulls go where the strategy will send them: 10 USD sold back, 60 USD listed.
    expect(o.pulls[0]).toMatchObject({ part: 'sell_back', state: 'waiting', cents: 800 });
    expect(o.pulls[2]).toMatchObject({ part: 'listing', state: 'to_list' });
  });

  it('leaves out, and counts, orders with a pull shipped or gone, and filters by account and name', () => {
    const { pulls } = book('model-key-1', 'co-1');
    book('model-key-2', 'co-2');
    ledger.markPullGone(pulls[0]!.pullId, 'shipped');
    const r = modelOrders(ledger.modelRows(), clock.now());
    expect(r.orders.map((o) => o.key)).toEqual(['model-key-2']);
    expect(r.excluded).toBe(1);
    expect(ledger.modelRows({ account: 'other' }).orders).toEqual([]);
    expect(ledger.modelRows({ strategyName: 'other' }).orders).toEqual([]);
    expect(ledger.modelRows({ strategyName: 'lister' }).orders).toHaveLength(2);
    expect(ledger.modelRows({ since: T0 + 1 }).orders).toEqual([]);
  });

  it('an intent whose model row cannot be written is not recorded either (one transaction)', () => {
    const bad = { ...model, promise: { ...PROMISE, pLoss: null as unknown as number } };
    expect(() =>
      ledger.recordIntent({ key: 'model-key-9', account: 'main', operation: 'pack', body: BODY, model: bad }),
    ).toThrow();
    expect(ledger.getIntent('model-key-9')).toBeUndefined();
  });
});

describe('migration 4 on a ledger of an earlier packbot', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'packbot-model-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('adds the model tables and keeps every order (without a promise: not in the model)', () => {
    const path = join(dir, 'old.db');
    const db = new Database(path);
    for (const [i, sql] of MIGRATIONS.slice(0, 3).entries()) {
      db.exec(sql);
      db.pragma(`user_version = ${i + 1}`);
    }
    db.prepare(
      `INSERT INTO intents (key, account, operation, body, state, created_at, updated_at)
       VALUES ('old-key-01', 'main', 'pack', '{}', 'confirmed', 1, 1)`,
    ).run();
    db.close();
    const ledger = Ledger.open(path);
    expect(ledger.schemaVersion()).toBe(MIGRATIONS.length);
    expect(ledger.getIntent('old-key-01')?.state).toBe('confirmed');
    expect(ledger.modelRows().orders).toEqual([]);
    ledger.close();
  });
});
