import { describe, expect, it } from 'vitest';
import type { PackPool } from '../../src/api/schemas.js';
import { toCents } from '../../src/core/money.js';
import { Rng } from '../../src/core/prng.js';
import { pullDistribution } from '../../src/strategy/distribution.js';
import { IncrementalScorer, liveRealizedMean } from '../../src/strategy/incremental-score.js';
import { liveOdds, runningLiveOdds } from '../../src/strategy/market-laws.js';
import { realizedStats, type ScoreRow, scorePool } from '../../src/strategy/score.js';
import type { Strategy } from '../../src/strategy/strategy-schema.js';
import { strategy } from '../strategy-builder.js';
import { SlotScorer } from './slot-scorer.js';

/**
 * Property: after random depletions, restocks and revaluations, the incremental row equals
 * `scorePool` on the equivalent pool. Unrounded statistics agree within 1e-9 relative (they are
 * sums of the same terms in another order); rounded fields agree exactly unless the unrounded
 * value lies within that tolerance of a rounding boundary (then by one rounding step). A row's
 * `growth` is computed only when its decision needs it (else null, as the backtest reads rows):
 * where it is there, it equals scorePool's.
 */

const BANDS = [
  { id: 'common', min: 5, max: 300, odds: [0.7, 0.6, 0.5], sealed: false },
  { id: 'rare', min: 1500, max: 9000, odds: [0.22, 0.28, 0.3], sealed: false },
  { id: 'epic', min: 20000, max: 250000, odds: [0.05, 0.08, 0.15], sealed: false },
  { id: 'sealed', min: 800, max: 2400, odds: [0.03, 0.04, 0], sealed: true },
];
const RISKS = ['chill', 'standard', 'aggressive'] as const;

function template(risk: number, price: number, withChase: boolean): PackPool {
  return {
    pack_type: 'p',
    name: 'P',
    category: 'pokemon',
    risk_level: RISKS[risk]!,
    price,
    available: true,
    expected_value: 31.5,
    chase: withChase
      ? {
          card: { id: 'chase', name: 'Chase', market_value: 4321.09, bucket_id: 'epic' },
          probability: 0.002,
          ends_at: null,
        }
      : null,
    total_cards: 0,
    bands: BANDS.map((b) => ({
      bucket_id: b.id,
      label: b.id,
      min_value: b.min / 100,
      max_value: b.max / 100,
      odds: b.odds[risk]!,
      is_consolation: b.sealed,
      hittable_cards: 0,
    })),
    cards: [],
  } as PackPool;
}

const MONEY = [
  'price',
  'ev',
  'server_expected_value',
  'ev_gap',
  'ev_low',
  'ev_high',
  'realized_ev',
  'realized_ev_low',
  'stdev',
  'realized_stdev',
  'score',
] as const;
const RATIOS = ['ev_ratio', 'realized_ev_ratio', 'p_loss', 'share_sold_back', 'kelly_quantity'] as const;

function close(a: number, b: number, rel = 1e-9): boolean {
  return Math.abs(a - b) <= rel * Math.max(1, Math.abs(a), Math.abs(b));
}

function expectSameRow(inc: ScoreRow, ref: ScoreRow, pool: PackPool, s: Strategy, balance?: number) {
  // Unrounded statistics first: the tight bound.
  const dist = pullDistribution(pool);
  const stats = realizedStats(dist, s, toCents(pool.price), balance);
  for (const k of MONEY) {
    // Equal to the cent, or one cent apart where the unrounded value is a (near) half cent.
    const d = Math.abs(inc[k] - ref[k]);
    if (d > 1e-9) {
      expect(d).toBeLessThanOrEqual(0.010000001);
      const unrounded = k.startsWith('realized') || k === 'score' ? stats.mean : dist.evCents;
      const frac = Math.abs(unrounded - Math.floor(unrounded) - 0.5);
      expect(frac).toBeLessThan(1e-6);
    }
  }
  for (const k of RATIOS) {
    const a = inc[k];
    const b = ref[k];
    if (a === null || b === null) expect(a).toBe(b);
    else expect(Math.abs(a - b)).toBeLessThanOrEqual(Math.max(1.0000001e-6, 1e-9 * Math.abs(b)));
  }
  // A plain value, never an accessor: the decision read it at once or not at all.
  expect(Object.getOwnPropertyDescriptor(inc, 'growth')?.get).toBeUndefined();
  if (ref.growth === null) expect(inc.growth).toBeNull();
  else if (inc.growth !== null) {
    expect(close(inc.growth, ref.growth, 1e-9)).toBe(true);
    expect(close(inc.growth, stats.growth, 1e-9)).toBe(true);
  }
  expect({ ...inc, growth: 0, ...Object.fromEntries([...MONEY, ...RATIOS].map((k) => [k, 0])) }).toEqual({
    ...ref,
    growth: 0,
    ...Object.fromEntries([...MONEY, ...RATIOS].map((k) => [k, 0])),
  });
}

function randomValue(rng: Rng, band: number): number {
  const b = BANDS[band]!;
  // Some repeated values (a coarse grid) and some arbitrary cents.
  return rng.next() < 0.3
    ? b.min + Math.round(rng.int(10) * ((b.max - b.min) / 10))
    : b.min + rng.int(b.max - b.min + 1);
}

/**
 * The templates' `expected_value` (31.5) is arbitrary and the cards random: the EV-gap check is off
 * here (a ratio of 1 never trips), so the rows exercise the economics. It has its own tests below.
 */
const noEvGap = (s: Strategy): Strategy => ({ ...s, open: { ...s.open, max_ev_gap_ratio: 1 } });

const STRATEGIES: [string, Strategy][] = (<[string, Strategy][]>[
  ['defaults', strategy()],
  [
    'kelly lists 25+',
    strategy({
      open: { min_ev_ratio: 0.5, sizing: 'kelly', kelly_fraction: 0.5 },
      sell: { threshold_usd: 25, list: { markup: 1.3, seller_fee_rate: 0.05 } },
    }),
  ],
  [
    'fixed, no listing',
    strategy({ open: { min_ev_ratio: 0, sizing: 'fixed' }, sell: { threshold_usd: 1e6 } }),
  ],
]).map(([name, s]) => [name, noEvGap(s)]);

describe('IncrementalScorer', () => {
  for (const [name, s] of STRATEGIES)
    it(`matches scorePool after random depletion, restock and revaluation (${name})`, () => {
      const rng = new Rng(42);
      for (let round = 0; round < 12; round++) {
        const risk = round % 3;
        const price = [10, 25, 150, 500][rng.int(4)]!;
        const scorer = new SlotScorer(template(risk, price, round % 2 === 0), s);
        let nextSlot = 0;
        const live: { band: number; slot: number }[] = [];
        for (let b = 0; b < BANDS.length; b++)
          for (let k = 0, n = 1 + rng.int(40); k < n; k++) {
            scorer.add(b, nextSlot, randomValue(rng, b));
            live.push({ band: b, slot: nextSlot++ });
          }
        for (let step = 0; step < 400; step++) {
          const u = rng.next();
          if (u < 0.45 && live.length > 0) {
            const i = rng.int(live.length);
            const c = live[i]!;
            scorer.remove(c.band, c.slot);
            live[i] = live[live.length - 1]!;
            live.pop();
          } else if (u < 0.85) {
            const band = rng.int(BANDS.length);
            scorer.add(band, nextSlot, randomValue(rng, band));
            live.push({ band, slot: nextSlot++ });
          } else if (live.length > 0) {
            const c = live[rng.int(live.length)]!;
            scorer.revalue(c.band, c.slot, randomValue(rng, c.band));
          }
          if (step === 200) scorer.chase = null; // the chase is hit
          if (step % 37 === 0) {
            const pool = scorer.body();
            const balance = rng.next() < 0.2 ? undefined : [5000, 100_000, 1_000_000][rng.int(3)]!;
            const ctx = balance === undefined ? {} : { balanceCents: balance };
            const inc = scorer.row(ctx);
            if (!scorer.drawable()) {
              expect(inc).toBeNull();
              expect(() => scorePool(pool, s, ctx)).toThrow();
              continue;
            }
            expect(inc).not.toBeNull();
            expectSameRow(inc!, scorePool(pool, s, ctx), pool, s, balance);
          }
        }
      }
    });

  it('decides by a proven growth sign exactly as by the computed growth (Kelly, balances near the price)', () => {
    // A full Kelly fraction: the growth is needed (sized ≥ 1) more often, near the price too.
    const s = strategy({
      open: { min_ev_ratio: 0, sizing: 'kelly', kelly_fraction: 1 },
      budget: { min_balance_usd: 0 },
    });
    const rng = new Rng(7);
    let proven = 0;
    let computed = 0;
    const seen = new Set<string>();
    for (let round = 0; round < 60; round++) {
      const risk = round % 3;
      const price = [10, 25, 150, 500, 2500][rng.int(5)]!;
      const scorer = new SlotScorer(template(risk, price, round % 2 === 0), s);
      let slot = 0;
      for (let b = 0; b < BANDS.length; b++)
        for (let k = 0, n = 1 + rng.int(30); k < n; k++) scorer.add(b, slot++, randomValue(rng, b));
      const pool = scorer.body();
      const priceCents = toCents(price);
      // From barely above the price (growth ≤ 0 even with an edge) to large balances.
      for (const m of [1.0001, 1.01, 1.1, 1.5, 2, 3, 5, 10, 30, 100, 1000, 1e5]) {
        const balance = Math.ceil(priceCents * m) + rng.int(50);
        const inc = scorer.row({ balanceCents: balance })!;
        // Growth is there only when the decision computed it (the sign could not be proven).
        if (inc.growth === null) proven++;
        else computed++;
        const ref = scorePool(pool, s, { balanceCents: balance });
        expect(inc.decision).toEqual(ref.decision);
        // A clone makes the same row.
        expect(scorer.clone().row({ balanceCents: balance })).toEqual(inc);
        seen.add(inc.decision.action === 'open' ? 'open' : inc.decision.reason);
        expectSameRow(inc, ref, pool, s, balance);
      }
    }
    // A steady pool a little above its price, at balances just above the price: Kelly sizes it
    // at once, the two-moment bound cannot settle the sign there, so the growth is computed.
    for (const risk of [0, 1, 2]) {
      const scorer = new SlotScorer(template(risk, 10, false), s);
      for (let k = 0; k < 40; k++) scorer.add(1, k, 1600 + rng.int(100));
      const pool = scorer.body();
      for (const balance of [1001, 1003, 1010, 1050]) {
        const inc = scorer.row({ balanceCents: balance })!;
        if (inc.growth !== null) computed++;
        expect(inc.decision).toEqual(scorePool(pool, s, { balanceCents: balance }).decision);
        expectSameRow(inc, scorePool(pool, s, { balanceCents: balance }), pool, s, balance);
        seen.add(inc.decision.action === 'open' ? 'open' : inc.decision.reason);
      }
    }
    // Both the proven and the computed paths ran, and both outcomes of the growth test occurred.
    expect(proven).toBeGreaterThan(100);
    expect(computed).toBeGreaterThan(0);
    expect(seen.has('open')).toBe(true);
    expect(seen.has('opening would lower expected log-growth of the balance')).toBe(true);
  });

  it('empties to null like scorePools skips, and keeps a row right after later changes', () => {
    const s = STRATEGIES[1]![1];
    const scorer = new SlotScorer(template(1, 25, false), s);
    expect(scorer.row()).toBeNull();
    scorer.add(0, 0, 250);
    scorer.add(1, 1, 4000);
    const pool = scorer.body();
    const row = scorer.row({ balanceCents: 50_000 })!;
    scorer.remove(1, 1); // the row was made before: it must not see this
    expectSameRow(row, scorePool(pool, s, { balanceCents: 50_000 }), pool, s, 50_000);
    scorer.remove(0, 0);
    expect(scorer.row()).toBeNull();
    expect(() => scorer.remove(0, 0)).toThrow(RangeError);
  });

  it('rows stay as they were made across many later changes, read in any order', () => {
    const s = STRATEGIES[1]![1];
    const rng = new Rng(3);
    const scorer = new SlotScorer(template(1, 25, false), s);
    let slot = 0;
    for (let k = 0; k < 30; k++) scorer.add(k % BANDS.length, slot++, randomValue(rng, k % BANDS.length));
    const made: { row: ScoreRow; pool: PackPool }[] = [];
    for (let round = 0; round < 6; round++) {
      const pool = scorer.body();
      // Two rows between changes; the last one is read with no change after it.
      made.push({ row: scorer.row({ balanceCents: 80_000 })!, pool });
      made.push({ row: scorer.row({ balanceCents: 80_000 })!, pool });
      if (round === 5) break;
      for (let k = 0; k < 20; k++) {
        const band = rng.int(BANDS.length);
        scorer.add(band, slot++, randomValue(rng, band)); // grows the scorer's band arrays too
      }
      scorer.remove(0, 0 + round * BANDS.length);
    }
    for (const { row, pool } of made.reverse())
      expectSameRow(row, scorePool(pool, s, { balanceCents: 80_000 }), pool, s, 80_000);
  });

  it('a clone and its source share band arrays until either writes (copy on first write)', () => {
    const s = STRATEGIES[1]![1];
    const rng = new Rng(5);
    const tpl = template(1, 25, false);
    // `source` and `twin` get the same cards; only `source` is cloned, so any write of a clone
    // into an array it shares would show as a difference between them.
    const source = new IncrementalScorer(tpl, s);
    const twin = new IncrementalScorer(tpl, s);
    const add = (band: number) => {
      const value = randomValue(rng, band);
      source.addId(band, source.valueId(band, value));
      twin.addId(band, twin.valueId(band, value));
    };
    for (let k = 0; k < 20; k++) add(k % BANDS.length);
    const ctx = { balanceCents: 70_000 };
    const clone = source.clone();
    expect(clone.rowFor(tpl, ctx)).toEqual(twin.rowFor(tpl, ctx));
    // The clone overwrites band 1 from its first position, appends to band 0 past its room.
    const other = Int32Array.from({ length: 6 }, () => clone.valueId(1, randomValue(rng, 1)));
    clone.setBand(1, other, 0, other.length);
    for (let k = 0; k < 40; k++) clone.addId(0, clone.valueId(0, randomValue(rng, 0)));
    expect(clone.rowFor(tpl, ctx)).not.toEqual(twin.rowFor(tpl, ctx));
    // The source re-reads its bands (an add marks them stale): still the twin's cards.
    add(0);
    add(1);
    expect(source.rowFor(tpl, ctx)).toEqual(twin.rowFor(tpl, ctx));
  });

  it('setBand of the changed bands only gives the rows of a scorer built afresh, and realizedMeanOf their mean', () => {
    const s = STRATEGIES[1]![1];
    const rng = new Rng(11);
    const tpl = template(1, 25, true);
    const empty = new IncrementalScorer(tpl, s);
    const handed = empty.clone(); // clones share the value ids
    // The same bands lent where they are (`viewBand`, as the dynamic market's sync) instead of copied.
    const lent = empty.clone();
    // The owner's copy of the cards: ids by position, bands at fixed offsets of one array.
    const room = 64;
    const ids = new Int32Array(BANDS.length * room);
    const count = new Int32Array(BANDS.length);
    const valueById = BANDS.map(() => new Map<number, number>());
    // The owner's running Σ expected realized value per band, for realizedMeanOf.
    const expected = new Float64Array(BANDS.length);
    const ctx = { balanceCents: 60_000 };
    const blocks = BANDS.map((_, b) => ids.subarray(b * room, (b + 1) * room));
    for (let round = 0; round < 40; round++) {
      const changed = new Set<number>();
      for (let k = 0; k < 12; k++) {
        const band = rng.int(BANDS.length);
        changed.add(band);
        if (count[band]! > 0 && rng.next() < 0.45) {
          const at = rng.int(count[band]!);
          const last = count[band]! - 1;
          expected[band] = last === 0 ? 0 : expected[band]! - empty.expectedOf(band, ids[band * room + at]!);
          ids[band * room + at] = ids[band * room + last]!;
          count[band] = last;
        } else if (count[band]! < room) {
          const value = randomValue(rng, band);
          const id = empty.valueId(band, value);
          valueById[band]!.set(id, value);
          expected[band] = expected[band]! + empty.expectedOf(band, id);
          ids[band * room + count[band]!] = id;
          count[band] = count[band]! + 1;
        }
      }
      // Only the bands that changed are handed over: the others keep what they had.
      for (const band of changed) handed.setBand(band, ids, band * room, count[band]!);
      for (const band of changed) lent.viewBand(band, blocks[band]!, count[band]!);
      // The same cards added one by one to a scorer with none.
      const fresh = empty.clone();
      for (let b = 0; b < BANDS.length; b++)
        for (let i = 0; i < count[b]!; i++) fresh.addId(b, ids[b * room + i]!);
      const a = fresh.rowFor(tpl, ctx);
      const got = handed.rowFor(tpl, ctx);
      expect(lent.rowFor(tpl, ctx)).toEqual(got);
      if (a === null) expect(got).toBeNull();
      else {
        const slots = new SlotScorer(tpl, s);
        for (let b = 0; b < BANDS.length; b++)
          for (let i = 0; i < count[b]!; i++) slots.add(b, i, valueById[b]!.get(ids[b * room + i]!)!);
        const pool = slots.body();
        expectSameRow(got!, a, pool, s, 60_000);
        expectSameRow(got!, scorePool(pool, s, ctx), pool, s, 60_000);
        // The owner's own counts and running sums give the row's realized mean.
        const mean = realizedStats(pullDistribution(pool), s, toCents(pool.price), 60_000).mean;
        expect(handed.realizedMeanOf(tpl, count, expected)).toBeCloseTo(mean, 6);
      }
    }
  });

  it('provenWait never hides an open: where it holds the row waits (most Kelly-size waits)', () => {
    const rng = new Rng(23);
    const strategies: Strategy[] = [];
    for (const min_ev_ratio of [0.8, 1, 1.2])
      for (const kelly_fraction of [0.25, 0.5, 1])
        for (const reserve of [0, 200])
          for (const threshold_usd of [25, 1e6])
            strategies.push(
              noEvGap(
                strategy({
                  open: { min_ev_ratio, sizing: 'kelly', kelly_fraction },
                  budget: { min_balance_usd: reserve },
                  sell: { threshold_usd, list: { markup: 1.3, seller_fee_rate: 0.05 } },
                }),
              ),
            );
    let kellyProofs = 0;
    let kellyWaits = 0;
    let kellyWaitsProven = 0;
    let opens = 0;
    for (let round = 0; round < 250; round++) {
      const s = strategies[rng.int(strategies.length)]!;
      const tpl = template(rng.int(3), [20, 50, 80, 120, 200][rng.int(5)]!, rng.next() < 0.5);
      const scorer = new IncrementalScorer(tpl, s);
      const count = new Int32Array(BANDS.length);
      const expected = new Float64Array(BANDS.length);
      for (let b = 0; b < BANDS.length; b++) {
        const n = rng.next() < 0.15 ? 0 : 1 + rng.int(40);
        for (let i = 0; i < n; i++) {
          const id = scorer.valueId(b, randomValue(rng, b));
          scorer.addId(b, id);
          expected[b] = expected[b]! + scorer.expectedOf(b, id);
        }
        count[b] = n;
      }
      for (let k = 0; k < 6; k++) {
        const balance = Math.round(toCents(tpl.price) * (1 + 10 ** (rng.next() * 4)));
        const proven = scorer.provenWait(tpl, count, expected, balance);
        const row = scorer.rowFor(tpl, { balanceCents: balance });
        if (proven) expect(row?.decision.action).toBe('wait');
        if (row?.decision.action === 'open') opens++;
        const mean = scorer.realizedMeanOf(tpl, count, expected);
        const aboveThreshold = mean >= s.open.min_ev_ratio * toCents(tpl.price);
        if (proven && aboveThreshold) kellyProofs++;
        if (row?.decision.action === 'wait' && row.decision.reason.startsWith('Kelly size')) {
          kellyWaits++;
          if (proven) kellyWaitsProven++;
        }
      }
    }
    expect(opens).toBeGreaterThan(50);
    expect(kellyProofs).toBeGreaterThan(50);
    expect(kellyWaitsProven).toBeGreaterThan(0.5 * kellyWaits);
  });

  it('liveRealizedMean is realizedMeanOf of a view without a chase, to the bit', () => {
    const rng = new Rng(17);
    const s = STRATEGIES[1]![1];
    const nb = BANDS.length;
    for (let round = 0; round < 300; round++) {
      const tpl = template(rng.int(3), [20, 50, 120][rng.int(3)]!, rng.next() < 0.3);
      // A chase that ended, or none: the view's chase is null (an active one takes realizedMeanOf).
      if (rng.next() < 0.5) tpl.chase = null;
      else if (tpl.chase) tpl.chase = { ...tpl.chase, probability: 0 };
      const scorer = new IncrementalScorer(tpl, s);
      const count = new Int32Array(nb);
      const expected = new Float64Array(nb);
      for (let b = 0; b < nb; b++) {
        const n = rng.next() < 0.25 ? 0 : 1 + rng.int(40);
        for (let i = 0; i < n; i++)
          expected[b] = expected[b]! + scorer.expectedOf(b, scorer.valueId(b, randomValue(rng, b)));
        count[b] = n;
      }
      // The shares a backtest pack keeps (pack-state.ts rebuildRunningOdds).
      const odds = Float64Array.from(tpl.bands, (b) => b.odds);
      const total = runningLiveOdds(odds, count, 0, nb, new Float64Array(nb), 0);
      const share = Float64Array.from(odds, (o, b) => {
        const w = liveOdds(o, count[b]!);
        return w > 0 ? w / total : 0;
      });
      const want = scorer.realizedMeanOf(tpl, count, expected);
      expect(liveRealizedMean(total, share, 0, nb, count, expected)).toBe(want);
    }
  });

  it('fromPool scores a recorded pool body like scorePool', () => {
    const rng = new Rng(7);
    const pool = template(0, 25, true);
    pool.cards = Array.from({ length: 60 }, (_, i) => {
      const band = i % 3;
      return {
        id: `c${i}`,
        name: 'c',
        market_value: randomValue(rng, band) / 100,
        bucket_id: BANDS[band]!.id,
      };
    });
    // Full bands (hittable = listed) as the dynamic market builds them.
    pool.bands = pool.bands.map((b) => {
      const n = pool.cards.filter((c) => c.bucket_id === b.bucket_id).length;
      return { ...b, hittable_cards: n, odds: n > 0 ? b.odds : 0 };
    });
    const s = STRATEGIES[1]![1];
    const scorer = SlotScorer.fromPool(pool, s);
    for (const balance of [undefined, 1_000_000]) {
      const ctx = balance === undefined ? {} : { balanceCents: balance };
      expectSameRow(scorer.row(ctx)!, scorePool(pool, s, ctx), pool, s, balance);
    }
  });
});

describe('IncrementalScorer price integrity (checked once per pool view, at its first row)', () => {
  const s = strategy({ open: { sizing: 'fixed', min_ev_ratio: 0 } });
  /** Commons of 2.00 USD only: EV 2.00 a pull. */
  const stocked = (t: PackPool): SlotScorer => {
    const scorer = new SlotScorer(
      { ...t, bands: t.bands.map((b, i) => ({ ...b, odds: i === 0 ? 1 : 0 })) },
      s,
    );
    for (let k = 0; k < 5; k++) scorer.add(0, k, 200);
    return scorer;
  };
  const decision = (x: SlotScorer) => x.row({})!.decision;

  it.each<[string, Partial<PackPool>, string | null]>([
    ['honest', { expected_value: 2 }, null],
    ['price 0', { price: 0, expected_value: 2 }, 'price_not_positive'],
    ['server EV far above the cards', { expected_value: 31.5 }, 'ev_gap'],
    [
      'band min above max',
      {
        expected_value: 2,
        bands: template(1, 25, false).bands.map((b) => ({ ...b, min_value: b.max_value + 1 })),
      },
      'band_bounds',
    ],
  ])('%s', (_name, over, reason) => {
    const scorer = stocked({ ...template(1, 25, false), ...over });
    if (reason === null) expect(decision(scorer)).toEqual({ action: 'open', quantity: 5 });
    else expect(decision(scorer)).toMatchObject({ action: 'wait', integrity: reason });
    // The same verdict as scorePool on the equivalent pool.
    expect(scorePool(scorer.body(), s).decision).toEqual(decision(scorer));
  });

  it("keeps a view's first EV verdict as the cards change, in clones too (the snapshot's expected_value does not follow the cards)", () => {
    const honest = stocked({ ...template(1, 25, false), expected_value: 2 });
    const view = honest.template; // one view object, as the dynamic market keeps per risk level
    expect(honest.rowFor(view)!.decision).toMatchObject({ action: 'open' });
    for (let k = 5; k < 10; k++) honest.add(0, k, 9000); // EV now 45.50, 22x the recorded 2.00
    expect(honest.rowFor(view)!.decision).toMatchObject({ action: 'open' });
    expect(honest.clone().rowFor(view)!.decision).toMatchObject({ action: 'open' });

    const off = stocked({ ...template(1, 25, false), expected_value: 45.5 });
    expect(off.rowFor(off.template)!.decision).toMatchObject({ action: 'wait', integrity: 'ev_gap' });
    for (let k = 5; k < 10; k++) off.add(0, k, 9000);
    expect(off.rowFor(off.template)!.decision).toMatchObject({ action: 'wait', integrity: 'ev_gap' });
  });
});
