import { describe, expect, it } from 'vitest';
import { LATE_RATE } from '../../src/api/rules.js';
import { DAY_MS, HOUR_MS } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';
import { KIND_SEALED, pullDistribution, sampleAtom } from '../../src/strategy/distribution.js';
import { listingCurve } from '../../src/strategy/listing-curve.js';
import { FRESH_RATE } from '../../src/strategy/listing-model.js';
import { fillProbability, fillRatePerDay } from '../../src/strategy/market-laws.js';
import {
  type ModelOrder,
  type ModelPull,
  modelGap,
  modelJson,
  orderFigures,
  zOf,
} from '../../src/strategy/model-gap.js';
import { type OrderPromise, orderPromise } from '../../src/strategy/model-promise.js';
import { compilePolicy, sealedValueCents } from '../../src/strategy/pull-policy.js';
import { scorePool } from '../../src/strategy/score.js';
import { band, card, pool } from '../fixtures/pools.js';
import { strategy } from '../strategy-builder.js';
import { flatLife } from './helpers.js';

/** One price for 3 days, no drift: sold at 1.3 × 0.95 or sold back at 0.8 after 3 days. */
const flat = strategy({
  sell: {
    threshold_usd: 25,
    list: {
      ...flatLife,
      markup: 1.3,
      max_days: 3,
      seller_fee_rate: 0.05,
      fill: { model: 'hazard', fills_per_day_at_value: 1, price_sensitivity: 4 },
    },
  },
});
const curve = listingCurve(flat);

const promise = (over: Partial<OrderPromise> = {}): OrderPromise => ({
  packs: 2,
  priceCents: 1000,
  evCents: 1200,
  realizedEvCents: 1100,
  sdCents: 300,
  pLoss: 0.4,
  parts: {
    sell_back: { meanCents: 500, sdCents: 100 },
    listing: { meanCents: 400, sdCents: 600 },
    held: { meanCents: 200, sdCents: 150 },
  },
  ...over,
});

const pullOf = (p: Partial<ModelPull> & Pick<ModelPull, 'part'>): ModelPull => ({
  valueCents: 1000,
  state: 'resolved',
  cents: 900,
  listedAt: null,
  sellBackCents: 800,
  ...p,
});

const order = (pulls: ModelPull[], over: Partial<ModelOrder> = {}): ModelOrder => ({
  key: 'k1',
  at: 0,
  strategy: 'flat',
  digest: 'd'.repeat(64),
  category: 'pokemon',
  packType: 'test',
  riskLevel: 'standard',
  promise: promise(),
  spendCents: 2000,
  pulls,
  ...over,
});

describe('orderFigures: one order by hand', () => {
  it('resolved: a pull sold back and a sealed pack held', () => {
    const f = orderFigures(
      order([pullOf({ part: 'sell_back', cents: 900 }), pullOf({ part: 'held', cents: 500 })]),
      curve,
      0,
    );
    // Expected net 2 × (1100 − 1000); realized 900 + 500 − 2000; variance 2 × 300².
    expect(f.total).toEqual({ packs: 2, pulls: 2, expected: 200, realized: -600, variance: 180_000 });
    expect(f.parts.sell_back).toEqual({
      packs: 2,
      pulls: 1,
      expected: 1000,
      realized: 900,
      variance: 20_000,
    });
    expect(f.parts.held).toEqual({ packs: 2, pulls: 1, expected: 400, realized: 500, variance: 45_000 });
    // No card listed: nothing to compare with the listing model.
    expect(f.parts.listing).toEqual({ packs: 0, pulls: 0, expected: 0, realized: 0, variance: 0 });
    expect(f.resolvedPacks).toBe(2);
    expect(f.openPulls).toBe(0);
  });

  it('listed: conditioned on the card listed, marked by its age while it runs', () => {
    const v = 5000;
    const at = 30 * HOUR_MS;
    const listed = pullOf({ part: 'listing', valueCents: v, state: 'listed', listedAt: 0, cents: 0 });
    const m = curve.markAt(at);
    const f = orderFigures(order([pullOf({ part: 'sell_back' }), listed]), curve, at);
    expect(f.parts.listing.packs).toBe(1);
    expect(f.parts.listing.expected).toBeCloseTo(v * curve.mean, 9);
    expect(f.parts.listing.realized).toBeCloseTo(v * m.mark, 9);
    expect(f.parts.listing.variance).toBeCloseTo(v * v * m.variance, 6);
    expect(f.resolvedPacks).toBe(1);
    expect(f.openPulls).toBe(1);
    // At its sell-back offer instead (a floor): 0.8 × value.
    const floor = orderFigures(order([pullOf({ part: 'sell_back' }), listed]), curve, at, 'sell_back');
    expect(floor.parts.listing.realized).toBe(800);
    expect(floor.parts.listing.variance).toBeCloseTo(v * v * m.variance, 6);
  });

  it.each([
    ['filled', 'resolved', 6175, 6175],
    ['ended unsold, sold back', 'resolved', 4000, 4000],
    ['ended unsold, sale pending', 'waiting', 4000, 4000],
  ] as const)('listing %s: its outcome, with the whole variance', (_n, state, cents, realized) => {
    const f = orderFigures(
      order([pullOf({ part: 'listing', valueCents: 5000, state, cents })]),
      curve,
      DAY_MS,
    );
    expect(f.parts.listing.realized).toBe(realized);
    expect(f.parts.listing.variance).toBeCloseTo(25e6 * curve.variance, 6);
  });

  it("a listing ended off the model's path (delisted by hand) is judged by the whole-life spread", () => {
    const early = pullOf({ part: 'listing', valueCents: 5000, cents: 4000, listedAt: 0, offModel: true });
    const f = orderFigures(order([early]), curve, HOUR_MS / 4);
    // At a quarter of an hour the model's spread is still 0: an early end would be infinitely off.
    expect(curve.markAt(HOUR_MS / 4).variance).toBe(0);
    expect(f.parts.listing.variance).toBeCloseTo(25e6 * curve.variance, 6);
  });

  it('a pull waiting for its sell-back counts at the offer and keeps the order open', () => {
    const f = orderFigures(order([pullOf({ part: 'sell_back', state: 'waiting', cents: 720 })]), curve, 0);
    expect(f.parts.sell_back.realized).toBe(720);
    expect(f.resolvedPacks).toBe(0);
    expect(f.openPulls).toBe(1);
  });
});

describe('modelGap: groups and JSON', () => {
  it('sums by pack and by strategy version, and reports z = gap / se', () => {
    const a = order([pullOf({ part: 'sell_back', cents: 1900 }), pullOf({ part: 'held', cents: 500 })]);
    const b = order([pullOf({ part: 'sell_back', cents: 300 }), pullOf({ part: 'held', cents: 100 })], {
      key: 'k2',
      at: 10,
      riskLevel: 'chill',
      digest: 'e'.repeat(64),
    });
    const r = modelGap([b, a], 20, () => curve);
    expect(r.orders).toBe(2);
    expect(r.total.expected).toBe(400);
    expect(r.total.realized).toBe(2400 - 2000 + 400 - 2000);
    expect(r.byPack.map((g) => g.riskLevel)).toEqual(['chill', 'standard']);
    expect(r.byStrategy.map((g) => g.digest[0])).toEqual(['d', 'e']);
    expect(r.series.map((p) => p.expected)).toEqual([200, 400]);
    // Both resolved in full; an order with a listing still running is not.
    expect(r.resolved.orders).toBe(2);
    const open = order([pullOf({ part: 'listing', state: 'listed', listedAt: 0 })], { key: 'k3', at: 15 });
    expect(modelGap([a, b, open], 20, () => curve).resolved).toEqual(r.resolved);
    const j = modelJson(r);
    expect(j.packs).toBe(4);
    // Realized −1200 against 400 expected: −16 USD, se √(4 × 300²) = 6 USD.
    expect(j.gap_usd).toBe(-16);
    expect(j.se_usd).toBe(6);
    expect(j.z).toBe(-2.667);
    expect(j.by_strategy[0]!.version).toBe('dddddddddddd');
    expect(j.parts.listing.z).toBeNull();
    expect(j.series[1]).toMatchObject({ at: new Date(10).toISOString(), gap_usd: -16, se_usd: 6 });
  });

  it('zOf is null without a spread', () => {
    expect(zOf({ expected: 1, realized: 2, variance: 0 })).toBeNull();
    expect(zOf({ expected: 100, realized: 70, variance: 100 })).toBe(-3);
  });
});

/** Sealed 0.1 (worth 20), low cards sold back 0.6, high cards 30..60 listed 0.3. */
const mixed = pool({
  price: 12,
  bands: [band('sealed', 0.1, 20, 20, 1, true), band('low', 0.6, 5, 9, 5), band('high', 0.3, 30, 60, 4)],
  cards: [
    card('s', 'sealed', 20),
    ...[5, 6, 7, 8, 9].map((v) => card(`l${v}`, 'low', v)),
    ...[30, 40, 50, 60].map((v) => card(`h${v}`, 'high', v)),
  ],
});

/**
 * Orders drawn from the model's own world: pulls from the pool's distribution, handled by the
 * strategy's policy, listings filling on hourly ticks with the strategy's own fill law (or a law
 * `slower` times slower). Returns the orders as the ledger would show them at `now`.
 */
function world(rng: Rng, n: number, now: number, slower = 1): ModelOrder[] {
  const dist = pullDistribution(mixed);
  const row = scorePool(mixed, flat);
  const policy = compilePolicy(flat);
  const q = fillProbability(fillRatePerDay(1.3, 1, 1 / slower, 4), HOUR_MS / DAY_MS);
  const orders: ModelOrder[] = [];
  for (let i = 0; i < n; i++) {
    const at = Math.floor((i / n) * (now - 12 * HOUR_MS));
    const packs = 1 + rng.int(3);
    const pulls: ModelPull[] = [];
    for (let k = 0; k < packs; k++) {
      const j = sampleAtom(dist, rng.next());
      const v = dist.value[j]!;
      if (dist.kind[j] === KIND_SEALED) {
        pulls.push(
          pullOf({ part: 'held', valueCents: v, cents: sealedValueCents(v, flat), sellBackCents: 0 }),
        );
        continue;
      }
      const plan = policy.plan(v, FRESH_RATE);
      if (plan.action === 'sell_back') {
        pulls.push(pullOf({ part: 'sell_back', valueCents: v, cents: plan.payoutCents }));
        continue;
      }
      // Ticks at 0.5 h, 1.5 h, … until the 3-day deadline, then sold back at 0.8.
      let endedAt = 3 * DAY_MS;
      let paid = Math.round(v * LATE_RATE);
      for (let t = 0.5 * HOUR_MS; t < 3 * DAY_MS; t += HOUR_MS)
        if (rng.next() < q) {
          endedAt = t;
          paid = Math.round(plan.priceCents * 0.95);
          break;
        }
      const open = at + endedAt > now;
      pulls.push(
        pullOf({
          part: 'listing',
          valueCents: v,
          state: open ? 'listed' : 'resolved',
          cents: open ? 0 : paid,
          listedAt: at,
          sellBackCents: Math.round(v * LATE_RATE),
        }),
      );
    }
    orders.push(
      order(pulls, {
        key: `o${i}`,
        at,
        promise: orderPromise(row, dist, flat, packs),
        spendCents: packs * 1200,
      }),
    );
  }
  return orders;
}

describe("modelGap on the model's own world: z is a standard normal", () => {
  it('overall and per part, at an instant when many listings still run', () => {
    const rng = new Rng(42);
    const zs: Record<string, number[]> = { total: [], sell_back: [], listing: [], held: [] };
    for (let rep = 0; rep < 300; rep++) {
      const now = 2 * DAY_MS;
      const r = modelGap(world(rng, 40, now), now, () => curve);
      zs.total!.push(zOf(r.total)!);
      for (const p of ['sell_back', 'listing', 'held'] as const) zs[p]!.push(zOf(r.parts[p])!);
    }
    for (const [name, xs] of Object.entries(zs)) {
      const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
      const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
      expect(Math.abs(mean), `${name} mean z`).toBeLessThan(0.25);
      expect(sd, `${name} sd of z`).toBeGreaterThan(0.8);
      expect(sd, `${name} sd of z`).toBeLessThan(1.2);
    }
  });

  it('only comparing listings that ended would be biased: the quick ones are the sales', () => {
    const rng = new Rng(5);
    const now = 2 * DAY_MS;
    const orders = world(rng, 400, now);
    const r = modelGap(orders, now, () => curve);
    expect(Math.abs(zOf(r.parts.listing)!)).toBeLessThan(3);
    // The naive comparison: listings already ended against the whole-life expectation.
    let gap = 0;
    let variance = 0;
    for (const o of orders)
      for (const p of o.pulls)
        if (p.part === 'listing' && p.state === 'resolved') {
          gap += p.cents - p.valueCents * curve.mean;
          variance += p.valueCents ** 2 * curve.variance;
        }
    expect(gap / Math.sqrt(variance)).toBeGreaterThan(3);
  });

  it('a world whose listings fill twenty times slower drives the listing part below −3', () => {
    const rng = new Rng(9);
    const now = 2 * DAY_MS;
    const r = modelGap(world(rng, 60, now, 20), now, () => curve);
    expect(zOf(r.parts.listing)!).toBeLessThan(-3);
    // The sell-back and held parts do not move.
    expect(Math.abs(zOf(r.parts.sell_back)!)).toBeLessThan(3);
    expect(Math.abs(zOf(r.parts.held)!)).toBeLessThan(3);
  });
});
