import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { Ledger, LedgerError } from '../../src/store/ledger.js';
import { SCHEMA_VERSION } from '../../src/store/migrations.js';
import { cardPull, packResponse, sealedPull, T0 } from './fixtures.js';

const BODY = { pack_type: 'starter', category: 'pokemon', quantity: 2, risk_level: 'aggressive' };

describe('Ledger (in memory)', () => {
  let clock: VirtualClock;
  let ledger: Ledger;
  beforeEach(() => {
    clock = new VirtualClock(T0);
    ledger = Ledger.open(':memory:', { clock });
  });
  afterEach(() => ledger.close());

  function confirmTwo(key = 'key-00000001', checkout = 'co-1') {
    ledger.recordIntent({ key, account: 'main', operation: 'pack', body: BODY, expectedValueCents: 2000 });
    ledger.markIntentSent(key);
    return ledger.confirmIntent(
      key,
      packResponse(
        checkout,
        [cardPull(`${checkout}a`, 12.34, '2026-01-01T12:05:00.000Z'), sealedPull(`${checkout}b`, 3)],
        20,
        980,
      ),
    );
  }

  it('walks an intent pending → sent → confirmed, writing order, pulls and balance together', () => {
    const i = ledger.recordIntent({ key: 'key-00000001', account: 'main', operation: 'pack', body: BODY });
    expect(i.state).toBe('pending');
    expect(i.attempts).toBe(0);
    expect(ledger.unresolvedIntents().map((x) => x.key)).toEqual(['key-00000001']);
    clock.advanceSync(1000);
    expect(ledger.markIntentSent('key-00000001')).toMatchObject({
      state: 'sent',
      attempts: 1,
      updatedAt: T0 + 1000,
    });
    const res = ledger.confirmIntent(
      'key-00000001',
      packResponse('co-1', [cardPull('a', 12.34, '2026-01-01T12:05:00.000Z'), sealedPull('b', 3)], 20, 980),
    );
    expect(res.recorded).toBe(true);
    expect(res.order).toMatchObject({
      checkoutId: 'co-1',
      packType: 'starter',
      category: 'pokemon',
      riskLevel: 'aggressive',
      totalChargedCents: 2000,
      remainingBalanceCents: 98000,
    });
    expect(res.pulls).toHaveLength(2);
    expect(res.pulls[0]).toMatchObject({
      pullId: 'pull-a',
      cardId: 'card-a',
      valueCents: 1234,
      buybackCents: 1111,
      buybackValidUntil: Date.parse('2026-01-01T12:05:00.000Z'),
      afterCents: 987,
      isChase: false,
      status: 'open',
    });
    expect(res.pulls[1]).toMatchObject({ kind: 'sealed_pack', status: 'held', buybackCents: null });
    expect(ledger.unresolvedIntents()).toEqual([]);
    expect(ledger.getIntent('key-00000001')?.state).toBe('confirmed');
    expect(ledger.latestBalance('main')).toMatchObject({ balanceCents: 98000, source: 'purchase' });
    expect(ledger.undecidedPulls().map((p) => p.pullId)).toEqual(['pull-a']);
  });

  it('returns the booked pulls exactly as the ledger reads them back (random orders)', () => {
    const rng = new Rng(20261129);
    for (let o = 0; o < 40; o++) {
      const pulls = Array.from({ length: 1 + rng.int(10) }, (_, i) => {
        const id = `r${o}-${i}`;
        const value = Math.round(rng.next() * 100_000) / 100;
        if (rng.next() < 0.15) return sealedPull(id, value);
        const pull = cardPull(id, value, new Date(T0 + rng.int(600_000)).toISOString());
        pull.hit.is_chase = rng.next() < 0.1;
        return rng.next() < 0.1 ? { ...pull, buyback: null } : pull;
      });
      const key = `key-random-${o}`;
      ledger.recordIntent({ key, account: rng.next() < 0.5 ? 'main' : 'alt', operation: 'pack', body: BODY });
      ledger.markIntentSent(key);
      clock.advanceSync(rng.int(120_000));
      const booked = ledger.confirmIntent(key, packResponse(`co-r${o}`, pulls, 20, 980));
      expect(booked.pulls).toStrictEqual(ledger.pullsOfOrder(`co-r${o}`));
    }
  });

  it("records an order's decisions as one write: all of them, or none", () => {
    confirmTwo();
    confirmTwo('key-00000002', 'co-2');
    const before = ledger.holdings();
    expect(() =>
      ledger.recordDecisions([
        { pullId: 'pull-co-1a', action: 'sell_back', reason: 'r', priceCents: 1111 },
        { pullId: 'pull-nope', action: 'list', reason: 'r', priceCents: 2000 },
      ]),
    ).toThrow(LedgerError);
    expect(ledger.holdings()).toEqual(before);
    expect(ledger.decisionsFor('pull-co-1a')).toEqual([]);
    const rows = ledger.recordDecisions([
      { pullId: 'pull-co-1a', action: 'sell_back', reason: 'below', priceCents: 1111 },
      { pullId: 'pull-co-2a', action: 'list', reason: 'fill 0.80', priceCents: 2000 },
      { pullId: 'pull-co-1b', action: 'hold', reason: 'sealed' },
    ]);
    expect(rows.map((r) => [r.pullId, r.action, r.priceCents])).toEqual([
      ['pull-co-1a', 'sell_back', 1111],
      ['pull-co-2a', 'list', 2000],
      ['pull-co-1b', 'hold', null],
    ]);
    expect(rows.map((r) => ledger.decisionsFor(r.pullId))).toEqual(rows.map((r) => [r]));
    expect(ledger.getPull('pull-co-1a')?.status).toBe('sell_pending');
    expect(ledger.getPull('pull-co-2a')?.status).toBe('list_pending');
    expect(ledger.getPull('pull-co-1b')?.status).toBe('held');
  });

  it('treats a replayed confirmation as a no-op (nothing counted twice)', () => {
    confirmTwo();
    const again = ledger.confirmIntent(
      'key-00000001',
      packResponse('co-1', [cardPull('co-1a', 12.34, '2026-01-01T12:05:00.000Z')], 20, 980),
    );
    expect(again.recorded).toBe(false);
    expect(again.pulls).toHaveLength(2);
  });

  it('refuses a known key with a different body, accepts the same body again', () => {
    ledger.recordIntent({ key: 'key-00000001', account: 'main', operation: 'pack', body: BODY });
    expect(
      ledger.recordIntent({ key: 'key-00000001', account: 'main', operation: 'pack', body: BODY }).state,
    ).toBe('pending');
    expect(() =>
      ledger.recordIntent({
        key: 'key-00000001',
        account: 'main',
        operation: 'pack',
        body: { ...BODY, quantity: 3 },
      }),
    ).toThrow(LedgerError);
    expect(() =>
      ledger.recordIntent({ key: 'short', account: 'main', operation: 'pack', body: BODY }),
    ).toThrow(/8 to 128/);
  });

  it('keeps failed and in-doubt states apart; confirmed is final', () => {
    ledger.recordIntent({ key: 'key-aaaaaaaa', account: 'main', operation: 'pack', body: BODY });
    ledger.recordIntent({ key: 'key-bbbbbbbb', account: 'main', operation: 'pack', body: BODY });
    ledger.markIntentSent('key-aaaaaaaa');
    ledger.markIntentSent('key-bbbbbbbb');
    expect(ledger.failIntent('key-aaaaaaaa', 'ORDER_REFUNDED', 'refunded')).toMatchObject({
      state: 'failed',
      errorCode: 'ORDER_REFUNDED',
    });
    expect(ledger.markInDoubt('key-bbbbbbbb', 'TRANSPORT_FAILED').state).toBe('in_doubt');
    expect(ledger.unresolvedIntents().map((i) => i.key)).toEqual(['key-bbbbbbbb']);
    expect(ledger.unresolvedCount()).toBe(1);
    // A retry re-sends: attempts grow, state goes back to sent.
    expect(ledger.markIntentSent('key-bbbbbbbb')).toMatchObject({
      state: 'sent',
      attempts: 2,
      errorCode: null,
    });
    confirmTwo('key-cccccccc', 'co-9');
    expect(() => ledger.failIntent('key-cccccccc', 'X')).toThrow(LedgerError);
    expect(() => ledger.markIntentSent('key-cccccccc')).toThrow(LedgerError);
  });

  it('counts a sell-back payout once, even across retries and already_sold echoes', () => {
    confirmTwo();
    ledger.recordDecision({ pullId: 'pull-co-1a', action: 'sell_back', reason: 'below threshold' });
    expect(ledger.pullsAwaitingSale().map((p) => p.pullId)).toEqual(['pull-co-1a']);
    const first = ledger.recordSellBack([
      {
        card_id: 'card-co-1a',
        pull_id: 'pull-co-1a',
        status: 'sold',
        transaction_id: 't1',
        payout_amount: 11.11,
        payout_rate: 0.9,
      },
    ]);
    expect(first.newlyPaidCents).toBe(1111);
    const echo = ledger.recordSellBack([
      {
        card_id: 'card-co-1a',
        pull_id: 'pull-co-1a',
        status: 'already_sold',
        transaction_id: 't1',
        payout_amount: 11.11,
        payout_rate: 0.9,
      },
    ]);
    expect(echo.newlyPaidCents).toBe(0);
    expect(echo.rows[0]?.counted).toBe(false);
    expect(ledger.getPull('pull-co-1a')?.status).toBe('sold');
    expect(ledger.saleOf('pull-co-1a')?.transactionId).toBe('t1');
    expect(ledger.pullsAwaitingSale()).toEqual([]);
  });

  it('counts an already_sold result when the original answer was lost', () => {
    confirmTwo();
    ledger.recordDecision({ pullId: 'pull-co-1a', action: 'sell_back', reason: 'r' });
    const out = ledger.recordSellBack([
      {
        card_id: 'card-co-1a',
        pull_id: 'pull-co-1a',
        status: 'already_sold',
        transaction_id: 't1',
        payout_amount: 11.11,
        payout_rate: 0.9,
      },
    ]);
    expect(out.newlyPaidCents).toBe(1111);
  });

  it('returns a failed sell-back item to open so it is decided again', () => {
    confirmTwo();
    ledger.recordDecision({ pullId: 'pull-co-1a', action: 'sell_back', reason: 'r' });
    const out = ledger.recordSellBack([
      { card_id: 'card-co-1a', pull_id: 'pull-co-1a', status: 'failed', error: 'card is listed' },
    ]);
    expect(out.newlyPaidCents).toBe(0);
    expect(ledger.getPull('pull-co-1a')?.status).toBe('open');
  });

  it('tracks a listing through reprice, delist, relist and fill', () => {
    confirmTwo();
    ledger.recordDecision({
      pullId: 'pull-co-1a',
      action: 'list',
      reason: 'above threshold',
      priceCents: 2400,
    });
    expect(ledger.pullsAwaitingListing()).toHaveLength(1);
    ledger.recordListing({ listingId: 'L1', cardId: 'card-co-1a', priceCents: 2400 });
    expect(ledger.getPull('pull-co-1a')?.status).toBe('listed');
    expect(ledger.activeListings().map((l) => l.listingId)).toEqual(['L1']);
    clock.advanceSync(60_000);
    expect(ledger.recordListingUpdate('L1', { priceCents: 2200 })).toMatchObject({
      priceCents: 2200,
      repricedAt: T0 + 60_000,
    });
    ledger.recordListingUpdate('L1', { delisted: true });
    expect(ledger.getPull('pull-co-1a')?.status).toBe('open');
    expect(ledger.activeListings()).toEqual([]);
    expect(() => ledger.recordListingFill('L1', 100)).toThrow(/delisted/);
    ledger.recordListing({ listingId: 'L2', cardId: 'card-co-1a', priceCents: 2000 });
    expect(ledger.activeListingForCard('card-co-1a')?.listingId).toBe('L2');
    expect(ledger.recordListingFill('L2', 2000)).toMatchObject({ state: 'filled', proceedsCents: 2000 });
    expect(ledger.getPull('pull-co-1a')?.status).toBe('sold');
  });

  it('finds the active listings whose pull was decided otherwise since, in one read', () => {
    confirmTwo();
    confirmTwo('key-00000002', 'co-2');
    for (const [pullId, listingId, cardId] of [
      ['pull-co-1a', 'L1', 'card-co-1a'],
      ['pull-co-2a', 'L2', 'card-co-2a'],
    ] as const) {
      ledger.recordDecision({ pullId, action: 'list', reason: 'above threshold', priceCents: 2400 });
      ledger.recordListing({ listingId, cardId, priceCents: 2400 });
    }
    expect(ledger.unwantedListings('main')).toEqual([]);
    ledger.recordDecision({ pullId: 'pull-co-2a', action: 'hold', reason: 'operator control: keep' });
    expect(ledger.unwantedListings('main').map((l) => [l.listingId, l.pullStatus])).toEqual([['L2', 'held']]);
    expect(ledger.unwantedListings('other')).toEqual([]);
    ledger.recordListingUpdate('L2', { delisted: true });
    expect(ledger.unwantedListings('main')).toEqual([]);
  });

  it('lists holdings: open, pending, listed and held pulls, not sold ones', () => {
    confirmTwo();
    confirmTwo('key-00000002', 'co-2');
    ledger.recordDecision({ pullId: 'pull-co-1a', action: 'sell_back', reason: 'r' });
    ledger.recordSellBack([
      { card_id: 'card-co-1a', pull_id: 'pull-co-1a', status: 'sold', payout_amount: 11.11 },
    ]);
    expect(
      ledger
        .holdings()
        .map((p) => p.pullId)
        .sort(),
    ).toEqual(['pull-co-1b', 'pull-co-2a', 'pull-co-2b']);
    ledger.markPullGone('pull-co-2a', 'shipped');
    expect(ledger.holdings()).toHaveLength(2);
  });

  it("reads one account's pulls and listings by account, the same rows the unfiltered reads hold", () => {
    confirmTwo();
    ledger.recordIntent({ key: 'key-00000002', account: 'other', operation: 'pack', body: BODY });
    ledger.markIntentSent('key-00000002');
    ledger.confirmIntent(
      'key-00000002',
      packResponse(
        'co-2',
        [cardPull('co-2a', 7.5, '2026-01-01T12:05:00.000Z'), sealedPull('co-2b', 2)],
        20,
        500,
      ),
    );
    ledger.recordDecision({ pullId: 'pull-co-1a', action: 'list', reason: 'r', priceCents: 1500 });
    ledger.recordListing({ listingId: 'L1', cardId: 'card-co-1a', pullId: 'pull-co-1a', priceCents: 1500 });
    ledger.recordDecision({ pullId: 'pull-co-2a', action: 'sell_back', reason: 'r' });
    for (const account of ['main', 'other', 'nobody']) {
      const all = ledger.holdings().filter((p) => p.account === account);
      expect(ledger.holdings(account)).toEqual(all);
      expect(ledger.cardHoldings(account)).toEqual(all.filter((p) => p.kind === 'card'));
      const counted = new Map<string, number>();
      for (const p of all) {
        const k = JSON.stringify([p.kind, p.status, p.valueCents]);
        counted.set(k, (counted.get(k) ?? 0) + 1);
      }
      expect(ledger.ownedValues(account).sort()).toEqual(
        [...counted].map(([k, n]) => [...JSON.parse(k), n]).sort(),
      );
      expect(ledger.activeListings(account)).toEqual(
        ledger.activeListings().filter((l) => l.account === account),
      );
      expect(ledger.pullsAwaitingSale(account)).toEqual(
        ledger.pullsAwaitingSale().filter((p) => p.account === account),
      );
    }
    expect(ledger.ownedValues('main').sort()).toEqual([
      ['card', 'listed', 1234, 1],
      ['sealed_pack', 'held', 300, 1],
    ]);
    expect(ledger.pullsAwaitingSale('other').map((p) => p.pullId)).toEqual(['pull-co-2a']);
    expect(ledger.hasPull('pull-co-2b')).toBe(true);
    expect(ledger.hasPull('pull-co-9')).toBe(false);
  });

  it('derives the expected balance from the last observation and later flows', () => {
    expect(ledger.expectedBalance('main')).toBeUndefined();
    confirmTwo(); // observation 980.00 at T0
    clock.advanceSync(1000);
    ledger.recordDecision({ pullId: 'pull-co-1a', action: 'sell_back', reason: 'r' });
    ledger.recordSellBack([
      { card_id: 'card-co-1a', pull_id: 'pull-co-1a', status: 'sold', payout_amount: 11.11 },
    ]);
    ledger.recordSellBack([
      { card_id: 'card-co-1a', pull_id: 'pull-co-1a', status: 'already_sold', payout_amount: 11.11 },
    ]);
    expect(ledger.expectedBalance('main')).toBe(98000 + 1111);
    clock.advanceSync(1000);
    ledger.recordBalance('main', 99111, 'sell-back');
    expect(ledger.expectedBalance('main')).toBe(99111);
    expect(ledger.expectedBalance('other')).toBeUndefined();
  });

  it('records a card purchase as an order with its price and fee, and the card as a holding', () => {
    ledger.recordIntent({
      key: 'card-key-001',
      account: 'main',
      operation: 'card',
      body: { card_id: 'c-9', max_price: 25 },
    });
    ledger.markIntentSent('card-key-001');
    const at = clock.now();
    const res = ledger.confirmIntent('card-key-001', {
      checkout_id: 'co-card',
      transaction_id: 'tx-1',
      card_id: 'c-9',
      source: 'shop',
      listing_id: null,
      price: 24.5,
      fee: 1,
      total_charged: 25.5,
      remaining_balance: 974.5,
      item: { id: 'c-9', name: 'Nine', market_value: 30, category: 'onepiece' },
      needs_review: true,
    });
    expect(res.order).toMatchObject({
      operation: 'card',
      cardId: 'c-9',
      category: 'onepiece',
      packType: null,
      riskLevel: null,
      quantity: 1,
      totalChargedCents: 2550,
      priceCents: 2450,
      feeCents: 100,
      source: 'shop',
      needsReview: true,
    });
    // Sold back by the purchase's transaction id, at 0.8 of min(price, value) until the lock ends.
    expect(res.pulls).toEqual([
      expect.objectContaining({
        pullId: 'tx-1',
        cardId: 'c-9',
        origin: 'purchase',
        pricePaidCents: 2450,
        valueCents: 3000,
        buybackCents: 1960,
        buybackRate: 0.8,
        buybackValidUntil: at + 7 * 86_400_000,
        afterCents: null,
      }),
    ]);
    expect(ledger.cardsOrderedSince('main', at)).toEqual({ count: 1, chargedCents: 2550 });
    expect(ledger.cardsOrderedSince('main', at + 1)).toEqual({ count: 0, chargedCents: 0 });
    expect(ledger.cardsHeldForReview('main')).toBe(1);
    expect(ledger.getPull('tx-1')?.status).toBe('held');
    // A replay books nothing twice.
    expect(
      ledger.confirmIntent('card-key-001', {
        ...JSON.parse(ledger.getIntent('card-key-001')!.responseJson!),
        idempotent_replay: true,
      }).recorded,
    ).toBe(false);
    expect(ledger.holdings('main')).toHaveLength(1);
  });

  it('a failed intent confirmed later (a replay succeeded after all) keeps its pulls', () => {
    ledger.recordIntent({ key: 'late-success', account: 'main', operation: 'pack', body: BODY });
    ledger.markIntentSent('late-success');
    ledger.failIntent('late-success', 'SERVER_ERROR');
    ledger.markIntentSent('late-success');
    const res = ledger.confirmIntent('late-success', packResponse('co-late', [sealedPull('s', 1)], 5, 95));
    expect(res.recorded).toBe(true);
    expect(ledger.getIntent('late-success')?.state).toBe('confirmed');
  });

  it('records balance observations', () => {
    ledger.recordBalance('main', 100_00, 'account');
    clock.advanceSync(5);
    ledger.recordBalance('main', 90_00, 'sell-back');
    expect(ledger.latestBalance('main')).toMatchObject({
      balanceCents: 9000,
      source: 'sell-back',
      at: T0 + 5,
    });
    expect(ledger.latestBalance('other')).toBeUndefined();
  });
});

describe('Ledger on disk: crash safety', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'packbot-ledger-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('creates the parent directory, uses WAL, FULL sync and the current schema version', () => {
    const path = join(dir, 'nested', 'deeper', 'bot.db');
    const ledger = Ledger.open(path);
    ledger.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('an intent recorded and sent survives a "crash" with its exact body and is unresolved on reopen', () => {
    const path = join(dir, 'bot.db');
    const body = { pack_type: 'p-1', quantity: 3, category: 'sports', risk_level: 'chill' };
    const ledger = Ledger.open(path, { clock: new VirtualClock(T0) });
    ledger.recordIntent({
      key: 'crash-key-1',
      account: 'main',
      operation: 'pack',
      body,
      expectedValueCents: 900,
    });
    ledger.markIntentSent('crash-key-1');
    // The process dies here: no confirm, no clean shutdown of the bot (the handle is just dropped).
    ledger.close();

    const reopened = Ledger.open(path);
    const [intent, ...rest] = reopened.unresolvedIntents();
    expect(rest).toEqual([]);
    expect(intent).toMatchObject({ key: 'crash-key-1', state: 'sent', attempts: 1, expectedValueCents: 900 });
    expect(intent?.bodyJson).toBe(JSON.stringify(body));
    expect(JSON.stringify(intent?.body)).toBe(JSON.stringify(body));
    // Resolution: re-send the same key and body, then confirm the (replayed) answer once.
    reopened.markIntentSent('crash-key-1');
    reopened.confirmIntent(
      'crash-key-1',
      packResponse('co-x', [cardPull('x', 5, '2026-01-01T12:05:00.000Z')], 15, 85),
    );
    reopened.close();
    const third = Ledger.open(path);
    expect(third.unresolvedIntents()).toEqual([]);
    expect(third.holdings().map((p) => p.pullId)).toEqual(['pull-x']);
    third.close();
  });

  it('an order whose pulls cannot all be written is rolled back entirely and stays unresolved', () => {
    const path = join(dir, 'bot.db');
    const ledger = Ledger.open(path);
    ledger.recordIntent({ key: 'atomic-key', account: 'main', operation: 'pack', body: BODY });
    ledger.markIntentSent('atomic-key');
    const dup = cardPull('same', 5, '2026-01-01T12:05:00.000Z');
    expect(() => ledger.confirmIntent('atomic-key', packResponse('co-a', [dup, dup], 10, 90))).toThrow();
    expect(ledger.unresolvedIntents().map((i) => i.key)).toEqual(['atomic-key']);
    expect(ledger.orderForIntent('atomic-key')).toBeUndefined();
    expect(ledger.holdings()).toEqual([]);
    ledger.close();
  });

  it('a second process sees committed writes immediately (durable before the call returns)', () => {
    const path = join(dir, 'bot.db');
    const writer = Ledger.open(path);
    writer.recordIntent({ key: 'seen-by-other', account: 'main', operation: 'pack', body: BODY });
    const reader = new Database(path, { readonly: true });
    expect(reader.prepare('SELECT body FROM intents WHERE key = ?').get('seen-by-other')).toEqual({
      body: JSON.stringify(BODY),
    });
    expect(writer.durability()).toEqual({
      journalMode: 'wal',
      synchronous: 'full',
      tempStore: 'memory',
      checkpoints: 'sqlite',
    });
    reader.close();
    writer.close();
  });

  it('reopening runs no migration twice and keeps the data', () => {
    const path = join(dir, 'bot.db');
    const first = Ledger.open(path);
    first.recordBalance('main', 5, 'account');
    first.close();
    const again = Ledger.open(path);
    expect(again.latestBalance('main')?.balanceCents).toBe(5);
    again.close();
  });

  it('refuses a ledger written by a newer packbot', () => {
    const path = join(dir, 'bot.db');
    const db = new Database(path);
    db.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    db.close();
    expect(() => Ledger.open(path)).toThrow(/newer/);
  });
});
