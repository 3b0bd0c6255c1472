/**
 * The ledger's dashboard and read-API reads: what they return, that no call prepares a statement
 * (all are prepared once at open), and the card-answer verdict confirmIntent receives.
 */
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { VirtualClock } from '../../src/core/clock.js';
import { Ledger, NEEDS_REVIEW_REASON } from '../../src/store/ledger.js';
import { cardPull, packResponse, T0 } from './fixtures.js';

const BODY = { pack_type: 'starter', category: 'pokemon', quantity: 1, risk_level: 'standard' };
const CARD = {
  checkout_id: 'co-card',
  transaction_id: 'tx-1',
  card_id: 'c-9',
  source: 'shop' as const,
  listing_id: null,
  price: 26,
  fee: 1,
  total_charged: 27,
  remaining_balance: 953,
  item: { id: 'c-9', name: 'Nine', market_value: 30, category: 'onepiece' },
};

describe('Ledger reads', () => {
  let clock: VirtualClock;
  let ledger: Ledger;
  beforeEach(() => {
    clock = new VirtualClock(T0);
    ledger = Ledger.open(':memory:', { clock });
    ledger.recordBalance('main', 100_000, 'account');
    clock.advanceSync(1000);
    ledger.recordIntent({ key: 'key-00000001', account: 'main', operation: 'pack', body: BODY });
    ledger.markIntentSent('key-00000001');
    ledger.confirmIntent(
      'key-00000001',
      packResponse('co-1', [cardPull('a', 12.34, '2026-01-01T12:05:00.000Z')], 10, 99_990 / 100),
    );
    clock.advanceSync(1000);
    ledger.recordDecision({ pullId: 'pull-a', action: 'list', reason: 'test', priceCents: 1500 });
    ledger.recordListing({ listingId: 'l-1', cardId: 'card-a', priceCents: 1500 });
    clock.advanceSync(1000);
    ledger.recordListingUpdate('l-1', { priceCents: 1400 });
    clock.advanceSync(1000);
    ledger.recordListingFill('l-1', 1300);
  });
  afterEach(() => {
    vi.restoreAllMocks();
    ledger.close();
  });

  it('answers the dashboard without preparing a statement', () => {
    const prepare = vi.spyOn(Database.prototype, 'prepare');
    expect(ledger.recentPulls(10).map((p) => [p.pullId, p.seq, p.status])).toEqual([['pull-a', 1, 'sold']]);
    expect(ledger.recentPulls(10, 1)).toEqual([]);
    expect(ledger.balanceHistory('main').map((b) => b.balanceCents)).toEqual([100_000, 99_990]);
    expect(ledger.balanceHistory('main', T0 + 1).map((b) => b.balanceCents)).toEqual([99_990]);
    expect(ledger.cashFlows('main')).toEqual([
      { at: T0 + 1000, cents: -1000 },
      { at: T0 + 4000, cents: 1300 },
    ]);
    expect(ledger.listingHistories()).toEqual([
      {
        listing_id: 'l-1',
        state: 'filled',
        created_at: T0 + 2000,
        delisted_at: null,
        filled_at: T0 + 4000,
        value_cents: 1234,
        prices: [
          { priceCents: 1500, at: T0 + 2000 },
          { priceCents: 1400, at: T0 + 3000 },
        ],
      },
    ]);
    expect(ledger.listingOfPull('pull-a')).toMatchObject({ listingId: 'l-1', proceedsCents: 1300 });
    expect(ledger.intentOfOrder('co-1')?.key).toBe('key-00000001');
    expect(ledger.intentsUpdatedSince(T0).map((i) => i.key)).toEqual(['key-00000001']);
    expect(ledger.intentsUpdatedSince(T0 + 1000)).toEqual([]);
    expect(ledger.reportData(T0, T0 + 5000).orders).toHaveLength(1);
    expect(ledger.latestActivityAt()).toBe(T0 + 4000);
    expect(prepare).not.toHaveBeenCalled();
  });

  it('holds a bought card for review when the caller finds its answer wrong', () => {
    const body = { card_id: 'c-9', max_price: 25 };
    ledger.recordIntent({ key: 'card-key-001', account: 'main', operation: 'card', body });
    ledger.markIntentSent('card-key-001');
    const res = ledger.confirmIntent('card-key-001', CARD, undefined, 'charged too much');
    expect(res.order.needsReview).toBe(true);
    expect(ledger.getPull('tx-1')?.status).toBe('held');
    expect(ledger.decisionsFor('tx-1').map((d) => d.reason)).toEqual(['held for review: charged too much']);

    // No verdict: the same answer is booked and its card left open to be decided.
    ledger.recordIntent({ key: 'card-key-002', account: 'main', operation: 'card', body });
    ledger.markIntentSent('card-key-002');
    const plain = ledger.confirmIntent('card-key-002', {
      ...CARD,
      checkout_id: 'co-2',
      transaction_id: 'tx-2',
    });
    expect(plain.order.needsReview).toBe(false);
    expect(ledger.getPull('tx-2')?.status).toBe('open');
    expect(ledger.decisionsFor('tx-2')).toEqual([]);

    // The service's own flag still holds the card, with its own reason.
    ledger.recordIntent({ key: 'card-key-003', account: 'main', operation: 'card', body });
    ledger.markIntentSent('card-key-003');
    ledger.confirmIntent('card-key-003', {
      ...CARD,
      checkout_id: 'co-3',
      transaction_id: 'tx-3',
      needs_review: true,
    });
    expect(ledger.decisionsFor('tx-3').map((d) => d.reason)).toEqual([NEEDS_REVIEW_REASON]);
  });
});
