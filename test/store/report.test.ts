import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS, VirtualClock } from '../../src/core/clock.js';
import { Ledger } from '../../src/store/ledger.js';
import { computeReport } from '../../src/store/pnl.js';
import { bookOrder, cardPull, packResponse, sealedPull, T0 } from './fixtures.js';

/**
 * Day 1 (2026-01-01): order A, pokemon/starter aggressive, 2 packs, $20 charged, EV $18, sd $4:
 *   pull a1 $12.34 sold back for $11.11; pull a2 sealed $3 (held).
 * Day 2: order B, sports/elite chill, 1 pack, $50, EV $60, sd $3: pull b1 $70 listed, filled for $80.
 * Day 2: order C, pokemon/starter aggressive, 1 pack, $10, no EV: pull c1 $9 still open (window over).
 */
function build(ledger: Ledger, clock: VirtualClock) {
  const order = (
    key: string,
    body: object,
    ev: number | undefined,
    sd: number | undefined,
    res: Parameters<Ledger['confirmIntent']>[1],
  ) => {
    bookOrder(ledger, key, res, { body, expectedValueCents: ev, stdevCents: sd });
  };
  order(
    'key-order-a',
    { pack_type: 'starter', quantity: 2, risk_level: 'aggressive' },
    1800,
    400,
    packResponse('A', [cardPull('a1', 12.34, '2026-01-01T12:05:00.000Z'), sealedPull('a2', 3)], 20, 980),
  );
  clock.advanceSync(60_000);
  ledger.recordDecision({ pullId: 'pull-a1', action: 'sell_back', reason: 'low' });
  ledger.recordSellBack([{ card_id: 'card-a1', pull_id: 'pull-a1', status: 'sold', payout_amount: 11.11 }]);
  ledger.recordSellBack([
    { card_id: 'card-a1', pull_id: 'pull-a1', status: 'already_sold', payout_amount: 11.11 },
  ]);
  clock.set(T0 + DAY_MS);
  order(
    'key-order-b',
    { pack_type: 'elite', category: 'sports', quantity: 1, risk_level: 'chill' },
    6000,
    300,
    packResponse('B', [cardPull('b1', 70, '2026-01-02T12:05:00.000Z')], 50, 930),
  );
  ledger.recordDecision({ pullId: 'pull-b1', action: 'list', reason: 'high', priceCents: 8000 });
  ledger.recordListing({ listingId: 'LB', cardId: 'card-b1', priceCents: 8000 });
  clock.advanceSync(3_600_000);
  ledger.recordListingFill('LB', 8000);
  order(
    'key-order-c',
    { pack_type: 'starter', quantity: 1, risk_level: 'aggressive' },
    undefined,
    undefined,
    packResponse('C', [cardPull('c1', 9, '2026-01-02T13:05:00.000Z')], 10, 920),
  );
}

describe('computeReport', () => {
  let clock: VirtualClock;
  let ledger: Ledger;
  beforeEach(() => {
    clock = new VirtualClock(T0);
    ledger = Ledger.open(':memory:', { clock });
    build(ledger, clock);
  });
  afterEach(() => ledger.close());

  it('computes totals, net P&L and luck over all orders', () => {
    const end = T0 + 3 * DAY_MS;
    const r = computeReport(ledger.reportData(0, end), 0, end);
    expect(r.totals).toMatchObject({
      orders: 3,
      packsOpened: 4,
      spendCents: 8000,
      sellbackPayoutCents: 1111, // the already_sold echo is not counted again
      listingProceedsCents: 8000,
      holdings: 2, // sealed a2 and open c1
      holdingsSellbackCents: 720, // c1 after its window: 0.8 × $9; sealed: 0
      holdingsMarketCents: 1200,
      netCents: 1111 + 8000 + 720 - 8000,
      ordersWithExpectation: 2,
      expectedValueCents: 7800,
      realizedValueCents: 1234 + 300 + 7000,
    });
    // (8534 − 7800) / sqrt(400² + 300²) = 734 / 500
    expect(r.totals.luckSigma).toBeCloseTo(1.47, 2);
  });

  it('groups by pack, risk level and UTC day, and the groups add up to the total', () => {
    const end = T0 + 3 * DAY_MS;
    const r = computeReport(ledger.reportData(0, end), 0, end);
    expect(r.byPack.map((g) => [g.key, g.packsOpened, g.netCents])).toEqual([
      ['pokemon/starter', 3, 1111 + 720 - 3000],
      ['sports/elite', 1, 3000],
    ]);
    expect(r.byRiskLevel.map((g) => g.key)).toEqual(['aggressive', 'chill']);
    expect(r.byDay.map((g) => [g.key, g.spendCents])).toEqual([
      ['2026-01-01', 2000],
      ['2026-01-02', 6000],
    ]);
    for (const groups of [r.byPack, r.byRiskLevel, r.byDay])
      expect(groups.reduce((s, g) => s + g.netCents, 0)).toBe(r.totals.netCents);
    expect(r.byPack.find((g) => g.key === 'sports/elite')?.luckSigma).toBeCloseTo(3.33, 2);
  });

  it('selects orders by window and values holdings as of its end', () => {
    // Only day 1, ending 30 s after the order: a1 not yet sold, still inside its 0.9 window.
    const r = computeReport(ledger.reportData(T0, T0 + 30_000), T0, T0 + 30_000);
    expect(r.totals).toMatchObject({
      orders: 1,
      sellbackPayoutCents: 0,
      holdings: 2,
      holdingsSellbackCents: 1111,
      netCents: 1111 - 2000,
    });
    expect(
      computeReport(ledger.reportData(0, T0 + DAY_MS), 0, T0 + DAY_MS, { account: 'x' }).totals.orders,
    ).toBe(0);
    const none = computeReport(
      ledger.reportData(T0 + 5 * DAY_MS, T0 + 6 * DAY_MS),
      T0 + 5 * DAY_MS,
      T0 + 6 * DAY_MS,
    );
    expect(none.totals.orders).toBe(0);
    expect(none.totals.luckSigma).toBeNull();
  });
});
