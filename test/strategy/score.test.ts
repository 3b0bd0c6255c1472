import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/prng.js';
import { EmptyPoolError } from '../../src/strategy/distribution.js';
import { scorePool, scorePools } from '../../src/strategy/score.js';
import {
  allZeroOdds,
  band,
  card,
  chaseOnTop,
  consolationMidpoint,
  pool,
  singleBand,
  truncated,
} from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { flatLife, linearFill } from './helpers.js';

const handStrategy = strategy({
  sell: { threshold_usd: 50, list: { ...flatLife, markup: 1.5, fill: linearFill } },
});

describe('scorePool on hand-computed pools', () => {
  /*
   * chaseOnTop at price 10, threshold 50, markup 1.5, fill 0.4 at 1.5x:
   * chase 500 → listed at 750: 0.4·750 + 0.6·400 = 540 (> 450 sell-back, so listed);
   * others sold back at 0.9: 1.80, 3.60 | 18, 27, 36.
   * realized = 0.01·540 + 0.99·(0.8·2.7 + 0.2·27) = 5.4 + 7.4844 = 12.8844 → 12.88
   * p_loss = P(1.80 or 3.60) = 0.99·0.8 = 0.792; sold back share = 0.99.
   */
  it('chase on top: ev, realized_ev, p_loss, gap', () => {
    const row = scorePool(chaseOnTop, handStrategy);
    expect(row.ev).toBe(13.32);
    expect(row.ev_ratio).toBeCloseTo(1.3316, 6);
    expect(row.server_expected_value).toBe(13.32);
    expect(row.ev_gap).toBe(0);
    expect(row.realized_ev).toBe(12.88);
    expect(row.realized_ev_ratio).toBeCloseTo(1.28844, 6);
    expect(row.p_loss).toBeCloseTo(0.792, 9);
    expect(row.share_sold_back).toBeCloseTo(0.99, 9);
    expect(row.estimated).toBe(false);
    // The pool holds 5 band cards: an order of more would fail as a whole (all or nothing).
    expect(row.decision).toEqual({ action: 'open', quantity: 5 });
  });

  it('stdev of the pull value', () => {
    // single band 1..4: variance 1.25 → stdev 1.118 → 1.12
    expect(scorePool(singleBand, handStrategy).stdev).toBe(1.12);
  });

  it('sealed packs count at the configured fraction', () => {
    // consolationMidpoint: card 8 sold back at 7.20; sealed 2.00 at fraction f.
    const half = scorePool(consolationMidpoint, strategy({ sell: { sealed_value_fraction: 0.5 } }));
    expect(half.realized_ev).toBe(0.5 * 7.2 + 0.5 * 1); // 4.10
    const full = scorePool(consolationMidpoint, strategy({ sell: { sealed_value_fraction: 1 } }));
    expect(full.realized_ev).toBe(4.6);
  });

  it('reports the gap to the server expected value', () => {
    const row = scorePool({ ...chaseOnTop, expected_value: 12.5 }, handStrategy);
    expect(row.ev_gap).toBe(0.82);
  });

  it('truncated pool: estimated, bounds, decision on the low bound', () => {
    // Values 20, 10, unseen 2 at mid 15 (low 5): sold back at 0.9 → realized 13.50, low 9.00.
    const row = scorePool(truncated, strategy({ open: { min_ev_ratio: 1 } }));
    expect(row.estimated).toBe(true);
    expect([row.ev, row.ev_low, row.ev_high]).toEqual([15, 10, 20]);
    expect(row.realized_ev).toBe(13.5);
    expect(row.realized_ev_low).toBe(9);
    expect(row.decision).toMatchObject({ action: 'wait', reason: expect.stringMatching(/low bound/) });
    const refused = scorePool(truncated, strategy({ open: { min_ev_ratio: 0, allow_estimated: false } }));
    expect(refused.decision).toMatchObject({ action: 'wait', reason: expect.stringMatching(/truncated/) });
  });

  it('seller fee lowers the listing value', () => {
    // chase listed at 750, fee 10% → 675: 0.4·675 + 0.6·400 = 510 → realized 5.1 + 7.4844 = 12.58
    const s = strategy({
      sell: { list: { ...flatLife, markup: 1.5, fill: linearFill, seller_fee_rate: 0.1 } },
    });
    expect(scorePool(chaseOnTop, s).realized_ev).toBe(12.58);
  });

  it('growth: expected log-growth of the balance, computed independently', () => {
    const balance = 100_000; // 1000.00 USD
    const row = scorePool(chaseOnTop, handStrategy, { balanceCents: balance });
    const outcomes: [number, number][] = [
      [0.01 * 0.4, 75000],
      [0.01 * 0.6, 40000],
      [0.99 * 0.4, 180],
      [0.99 * 0.4, 360],
      [(0.99 * 0.2) / 3, 1800],
      [(0.99 * 0.2) / 3, 2700],
      [(0.99 * 0.2) / 3, 3600],
    ];
    const g = outcomes.reduce((s, [p, x]) => s + p * Math.log((balance - 1000 + x) / balance), 0);
    expect(row.growth).toBeCloseTo(g, 12);
    expect(row.growth!).toBeGreaterThan(0);
    expect(row.kelly_quantity).toBeGreaterThan(0);
  });

  it.each([
    ['excluded category', { packs: { categories: ['onepiece'] } }, /category pokemon not in strategy/],
    ['excluded pack', { packs: { exclude: ['chase-top'] } }, /excluded/],
    ['include list', { packs: { include: ['other'] } }, /not included/],
    ['risk level', { packs: { risk_levels: ['chill'] } }, /risk level standard/],
    ['min ratio', { open: { min_ev_ratio: 1.5 } }, /below min_ev_ratio 1.5/],
  ] as const)('waits when %s', (_n, over, reason) => {
    const row = scorePool(chaseOnTop, strategy({ ...over, sell: { list: { fill: linearFill } } }));
    expect(row.decision).toMatchObject({ action: 'wait', reason: expect.stringMatching(reason) });
  });

  it('waits when unavailable or unaffordable, sizes by Kelly and the pack max', () => {
    expect(scorePool({ ...chaseOnTop, available: false }, handStrategy).decision).toMatchObject({
      reason: 'pack unavailable',
    });
    expect(scorePool(chaseOnTop, handStrategy, { balanceCents: 900 }).decision).toMatchObject({
      reason: expect.stringMatching(/balance does not cover/),
    });
    expect(scorePool(chaseOnTop, handStrategy, { maxQuantity: () => 3 }).decision).toEqual({
      action: 'open',
      quantity: 3,
    });
    // 120 USD: a 1% shot at 750 cannot carry the 99% of small losses at this size (growth < 0);
    // Kelly is below one pack too, which decides without the growth.
    const poor = scorePool(chaseOnTop, handStrategy, { balanceCents: 12_000 });
    expect(poor.growth!).toBeLessThan(0);
    expect(poor.decision).toMatchObject({
      action: 'wait',
      reason: expect.stringMatching(/Kelly size below/),
    });
    // No edge at all: waits on growth (≤ 0 by Jensen) whatever the balance.
    const noEdge = strategy({ open: { min_ev_ratio: 0 }, sell: { list: { fill: linearFill } } });
    expect(
      scorePool({ ...chaseOnTop, price: 20 }, noEdge, { balanceCents: 10_000_000 }).decision,
    ).toMatchObject({
      action: 'wait',
      reason: expect.stringMatching(/log-growth/),
    });
    // 1100 USD: growth > 0 but bankroll 1000 × edge 2.88 / variance ≈ 3205 ≈ 0.9 packs; half-Kelly < 1.
    const small = scorePool(chaseOnTop, handStrategy, { balanceCents: 110_000 });
    expect(small.growth!).toBeGreaterThan(0);
    expect(small.kelly_quantity!).toBeCloseTo(0.9, 1);
    expect(small.decision).toMatchObject({ action: 'wait', reason: expect.stringMatching(/Kelly/) });
    // Fixed sizing ignores Kelly but not the balance.
    const fixed = strategy({ open: { sizing: 'fixed' }, sell: { list: { fill: linearFill } } });
    expect(scorePool(chaseOnTop, fixed, { balanceCents: 12_000 }).decision).toEqual({
      action: 'open',
      quantity: 5,
    });
    expect(scorePool(chaseOnTop, fixed, { balanceCents: 900 }).decision).toMatchObject({ action: 'wait' });
    // 100k USD: Kelly allows far more than the strategy's max_quantity of 10, and the pool's 5 cards cap it.
    expect(scorePool(chaseOnTop, handStrategy, { balanceCents: 10_000_000 }).decision).toEqual({
      action: 'open',
      quantity: 5,
    });
    // Only bands that can be hit count: one card left at odds > 0 means one pack per order.
    const last = {
      ...chaseOnTop,
      bands: chaseOnTop.bands.map((b, i) => ({
        ...b,
        hittable_cards: i === 0 ? 1 : 0,
        odds: i === 0 ? b.odds : 0,
      })),
    };
    expect(scorePool(last, strategy({ open: { sizing: 'fixed', min_ev_ratio: 0 } })).decision).toMatchObject({
      action: 'open',
      quantity: 1,
    });
  });
});

describe('scorePools', () => {
  it('sorts open rows first, best score first, and skips empty pools when asked', () => {
    const skipped: string[] = [];
    const worse = { ...chaseOnTop, pack_type: 'worse', price: 12 };
    const rows = scorePools(
      [worse, allZeroOdds, chaseOnTop, { ...chaseOnTop, pack_type: 'dear', price: 20 }],
      handStrategy,
      {
        onSkip: (p, e) => skipped.push(`${p.pack_type}: ${e.message}`),
      },
    );
    expect(rows.map((r) => r.pack_type)).toEqual(['chase-top', 'worse', 'dear']);
    expect(rows[2]!.decision.action).toBe('wait');
    expect(skipped).toHaveLength(1);
    expect(() => scorePools([allZeroOdds], handStrategy)).toThrow(EmptyPoolError);
  });
});

describe('property: raising the threshold never lowers the share sold back', () => {
  it.each([true, false])('only_when_better = %s', (better) => {
    const rng = new Rng(42);
    const cards = Array.from({ length: 60 }, (_, i) =>
      card(`c${i}`, i % 2 ? 'a' : 'b', Math.floor(rng.next() * 20000) / 100),
    );
    const p = pool({ bands: [band('a', 0.7, 0, 200, 30), band('b', 0.3, 0, 200, 30)], cards });
    let last = -1;
    for (let t = 0; t <= 220; t += 5) {
      const row = scorePool(p, strategy({ sell: { threshold_usd: t, list: { only_when_better: better } } }));
      expect(row.share_sold_back).toBeGreaterThanOrEqual(last);
      last = row.share_sold_back;
    }
    expect(last).toBe(1);
  });
});

describe('price integrity in the row', () => {
  // chaseOnTop: EV 13.32 a pull at price 10 (open-worthy); expected_value 13.32 as the server says.
  const fixed = strategy({ open: { sizing: 'fixed', max_quantity: 10 } });
  const list = (usd: number) => () => Math.round(usd * 100);

  it.each<[string, Parameters<typeof pool>[0], number | undefined, string | null]>([
    ['honest, list equal: opens', chaseOnTop, 10, null],
    ['honest, list not read: opens', chaseOnTop, undefined, null],
    // The premium bug: a pool at price 0 skipped the min-EV check and opened at any EV.
    ['pool price 0', { ...chaseOnTop, price: 0 }, 10, 'price_not_positive'],
    ['pool price 0, list not read', { ...chaseOnTop, price: 0 }, undefined, 'price_not_positive'],
    ['pool cheaper than the list', { ...chaseOnTop, price: 1 }, 10, 'price_mismatch'],
    [
      'band min above max',
      { ...chaseOnTop, bands: [band('low', 0.8, 5, 1, 2), band('mid', 0.2, 10, 49.99, 3)] },
      10,
      'band_bounds',
    ],
    ['server EV 0 against 13.32', { ...chaseOnTop, expected_value: 0 }, 10, 'ev_gap'],
  ])('%s', (_name, body, listUsd, reason) => {
    const ctx = listUsd === undefined ? {} : { listPriceCents: list(listUsd) };
    const row = scorePool(pool(body), fixed, ctx);
    expect(row.list_price).toBe(listUsd ?? null);
    if (reason === null) expect(row.decision).toEqual({ action: 'open', quantity: 5 });
    else {
      expect(row.decision).toMatchObject({ action: 'wait', integrity: reason });
      expect(row.decision.action === 'wait' && row.decision.reason).toMatch(/^price integrity: /);
    }
  });

  it('an integrity failure wins over the economics, after the strategy filters and availability', () => {
    const free = { ...chaseOnTop, price: 0 };
    expect(scorePool({ ...free, available: false }, fixed).decision).toEqual({
      action: 'wait',
      reason: 'pack unavailable',
    });
    const kelly = scorePool(free, strategy(), { balanceCents: 1_000_000 });
    expect(kelly.decision).toMatchObject({ action: 'wait', integrity: 'price_not_positive' });
  });
});
