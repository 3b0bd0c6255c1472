/**
 * The dynamic market's listings: a listing's whole life is decided when it is listed, deciding
 * only where a decision can change (`keepRange`) and looking ahead tick by tick for the sale.
 * That must be the very listing a bot deciding at every tick would have: a naive replay (the
 * simulator's fill at each tick, then `decideListing` at each tick and at each decision's
 * `until`) on the same value path and fill draw gives the same end, at the same time, for the same
 * amount and at the same last price, listing by listing.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Listing } from '../../src/backtest/path/path-market.js';
import { Engine } from '../../src/backtest/run/engine.js';
import { loadSnapshot } from '../../src/backtest/snapshot/load.js';
import type { DynamicMarket } from '../../src/backtest/world/dynamic-market.js';
import { DAY_MS, HOUR_MS } from '../../src/core/clock.js';
import { applyRate } from '../../src/core/money.js';
import { Rng } from '../../src/core/prng.js';
import { decideListing } from '../../src/strategy/decide-listing.js';
import { fillRatePerDay } from '../../src/strategy/market-laws.js';
import { strategy } from '../strategy-builder.js';

const SNAPSHOT = loadSnapshot(join(import.meta.dirname, '..', 'fixtures', 'sim-pokemon-snapshot.json'));
const LOCK_MS = 7 * DAY_MS;
// Strong drift so that values leave their ranges often; the world's defaults otherwise.
const DYNAMICS = { value_daily_volatility: 0.08, value_daily_trend: -0.01 };

// The default reprice band (5%), none, and one wider than a markup step (steps still reprice).
const STRATEGIES = [
  strategy(
    {
      sell: { threshold_usd: 1, list: { markup: 1.3, max_days: 3, markup_step: 0.1, min_markup: 1.1 } },
    },
    { base: 'backtest' },
  ),
  strategy(
    {
      sell: {
        threshold_usd: 1,
        list: { markup: 1.3, max_days: 3, markup_step: 0.1, min_markup: 1.1, reprice_band: 0 },
      },
    },
    { base: 'backtest' },
  ),
  strategy(
    {
      sell: {
        threshold_usd: 1,
        list: { markup: 1.5, max_days: 5, markup_step: 0.05, min_markup: 1.1, reprice_band: 0.12 },
      },
    },
    { base: 'backtest' },
  ),
  strategy(
    {
      sell: {
        threshold_usd: 1,
        list: { markup: 1.8, max_days: 9, markup_step: 0.15, min_markup: 1.2, reprice_every_hours: 6 },
      },
    },
    { base: 'backtest' },
  ),
];

interface Outcome {
  outcome: string;
  at: number;
  amountCents: number;
  /** The price when it ended, and how many times it was repriced on the way (naive replay only). */
  price: number;
  reprices: number;
}

function newListing(basis: number, t0: number, pulledAt: number): Listing {
  return {
    pool: 0,
    plan: 0,
    category: 'pokemon',
    pulledAt,
    listedAt: t0,
    basisCents: basis,
    priceCents: Math.round(basis * 1.6),
    anchorIndex: 1,
    eventAt: t0,
    outcome: 'pending',
    amountCents: 0,
    fillBudget: 0,
    modelOrder: -1,
  };
}

/** The market's own answer, decided when listed. */
function byMarket(market: DynamicMarket, l: Listing, t0: number, budget: number): Outcome {
  market.advance(t0);
  // The fill draw comes from the rng passed to list: one whose first exponential is `budget`.
  market.list(l, t0, fixedExponential(budget));
  return { outcome: l.outcome, at: l.eventAt, amountCents: l.amountCents, price: l.priceCents, reprices: 0 };
}

/** An Rng whose first exponential(1) draw is `e`. */
function fixedExponential(e: number): Rng {
  const rng = new Rng(1);
  rng.exponential = () => e;
  return rng;
}

/** A bot looking at the listing at every tick (after the tick's fill) and at every `until`. */
function naive(
  market: DynamicMarket,
  l: Listing,
  t0: number,
  budget: number,
  s: (typeof STRATEGIES)[number],
): Outcome {
  market.advance(t0);
  // The category index at listing, as list() records it (on a copy: list decides the whole life).
  const probe = { ...l };
  market.list(probe, t0, new Rng(1));
  l.anchorIndex = probe.anchorIndex;
  let left = budget;
  let reprices = 0;
  let pricedAt = l.listedAt;
  const tick = HOUR_MS;
  let nextTick = t0 + tick - ((t0 - SNAPSHOT_START) % tick);
  let until = t0;
  let t = t0;
  for (let guard = 0; guard < 100_000; guard++) {
    market.advance(t);
    const value = market.valueNow(l);
    if (t === nextTick) {
      left -= fillRatePerDay(l.priceCents, value, 1, 4) * (tick / DAY_MS);
      if (left <= 0)
        return {
          outcome: 'sold',
          at: t,
          amountCents: l.priceCents - applyRate(l.priceCents, 0.05),
          price: l.priceCents,
          reprices,
        };
      nextTick += tick;
    }
    for (;;) {
      const d = decideListing(
        {
          priceCents: l.priceCents,
          listedAt: l.listedAt,
          pricedAt,
          marketValueCents: value,
          basisValueCents: l.basisCents,
          lockedValueUntil: l.pulledAt + LOCK_MS,
        },
        s,
        t,
      );
      if (d.action === 'delist_and_sell_back')
        return {
          outcome: 'sold_back',
          at: t,
          amountCents: market.holdValue(l, t),
          price: l.priceCents,
          reprices,
        };
      if (d.action === 'keep') {
        until = d.until;
        break;
      }
      l.priceCents = d.priceCents;
      pricedAt = t;
      reprices++;
    }
    t = Math.min(nextTick, until);
  }
  throw new Error('listing never ended');
}
const SNAPSHOT_START = Date.parse(SNAPSHOT.taken_at);

describe('dynamic market listings', () => {
  it('end as deciding at every tick would: same outcome, time, amount and last price', () => {
    let sold = 0;
    let back = 0;
    let repriced = 0;
    for (const [si, s] of STRATEGIES.entries()) {
      const engine = new Engine({
        snapshot: SNAPSHOT,
        strategy: s,
        days: 30,
        seed: 3,
        market: 'dynamic',
        dynamics: DYNAMICS,
      });
      const rng = new Rng(40 + si);
      for (let i = 0; i < 60; i++) {
        // Listed some minutes into the path, pulled up to 8 days before (some locks end on the way).
        const t0 = SNAPSHOT_START + rng.int(5 * DAY_MS);
        const pulledAt = t0 - rng.int(8 * DAY_MS);
        const basis = 500 + rng.int(30_000);
        const budget = rng.exponential(1) * (rng.next() < 0.3 ? 6 : 1);
        const a = engine.marketFor(i) as DynamicMarket;
        const b = engine.marketFor(i) as DynamicMarket;
        const got = byMarket(a, newListing(basis, t0, pulledAt), t0, budget);
        const want = naive(b, newListing(basis, t0, pulledAt), t0, budget, s);
        expect(got, `strategy ${si} listing ${i}`).toEqual({ ...want, reprices: 0 });
        if (got.outcome === 'sold') sold++;
        else back++;
        if (want.reprices > 1) repriced++;
      }
    }
    // Both endings and repricing on the way are exercised.
    expect(sold).toBeGreaterThan(10);
    expect(back).toBeGreaterThan(10);
    expect(repriced).toBeGreaterThan(10);
  });
});
