/**
 * The market's laws (src/strategy/market-laws.ts), pure functions: table-driven, no mocks. Statistical
 * rows draw from a seeded Rng and allow 5 standard errors.
 */
import { describe, expect, it } from 'vitest';
import { Rng } from '../../src/core/prng.js';
import { RulesSpec } from '../../src/market/world-schema.js';
import {
  bandGap,
  fillProbability,
  fillRatePerDay,
  indexFactor,
  liveOdds,
  NO_CHOICE,
  nextEventDelayMs,
  OTHERS_ANY_SHARE,
  OTHERS_STANDARD_SHARE,
  othersRiskLevel,
  othersRiskShare,
  pastChase,
  pickByGap,
  pickByGapFlat,
  pickByPopularity,
  pickByStock,
  pickEqual,
  pickRunning,
  pickWeighted,
  poissonCount,
  pullEv,
  pullEvOfLevels,
  pullsChase,
  refillCount,
  refillShare,
  runningLiveOdds,
  sellBackAmount,
  sellBackOffer,
  valueStep,
} from '../../src/strategy/market-laws.js';

const RULES = RulesSpec.parse({});
const MIN = 60_000;
const DAY = 86_400_000;

/** Frequencies of `draw`'s answers over n draws. */
function frequencies(n: number, draw: () => number): Map<number, number> {
  const f = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const k = draw();
    f.set(k, (f.get(k) ?? 0) + 1);
  }
  return f;
}

function expectShare(count: number, n: number, p: number): void {
  const se = Math.sqrt((p * (1 - p)) / n);
  expect(Math.abs(count / n - p)).toBeLessThanOrEqual(5 * se + 1e-12);
}

describe('band choice: odds renormalised over bands holding cards', () => {
  it.each([
    { name: 'all bands live', odds: [0.5, 0.3, 0.2], cards: [4, 4, 4] },
    { name: 'the middle band empty', odds: [0.5, 0.3, 0.2], cards: [4, 0, 4] },
    { name: 'the first band empty', odds: [0.5, 0.3, 0.2], cards: [0, 1, 9] },
    { name: 'a live band with odds 0', odds: [0, 0.6, 0.4], cards: [5, 5, 5] },
    { name: 'only the last band live', odds: [0.7, 0.2, 0.1], cards: [0, 0, 3] },
  ])('$name', ({ odds, cards }) => {
    const w = odds.map((o, i) => liveOdds(o, cards[i]!));
    const total = w.reduce((a, b) => a + b, 0);
    const running = new Float64Array(odds.length);
    expect(runningLiveOdds(odds, cards, 0, odds.length, running, 0)).toBeCloseTo(total, 15);
    // At the total itself (rounding) both fall back to the last live band.
    expect(pickRunning(total, running, 0, odds.length)).toBe(pickWeighted(total, w));
    const rng = new Rng(7);
    const n = 40_000;
    const f = frequencies(n, () => {
      const u = rng.next();
      const a = pickWeighted(u * total, w);
      // The running-sum form chooses the same band for the same uniform.
      expect(pickRunning(u * total, running, 0, odds.length)).toBe(a);
      return a;
    });
    odds.forEach((_, i) => {
      const p = w[i]! / total;
      if (p === 0) expect(f.get(i) ?? 0).toBe(0);
      else expectShare(f.get(i) ?? 0, n, p);
    });
  });

  it.each([
    { x: 0, w: [0, 2, 3], want: 1 },
    { x: 1.999, w: [0, 2, 3], want: 1 },
    { x: 2, w: [0, 2, 3], want: 2 },
    { x: 5, w: [0, 2, 3, 0], want: 2 }, // rounding at the total: the last band with weight
    { x: 0, w: [0, 0], want: NO_CHOICE },
  ])('pickWeighted($x, $w) = $want', ({ x, w, want }) => {
    expect(pickWeighted(x, w)).toBe(want);
  });

  it.each([
    { u: 0.1, p: 0.2, hit: true },
    { u: 0.2, p: 0.2, hit: false },
    { u: 0, p: 0, hit: false },
  ])('the chase is pulled when u < p (u=$u, p=$p)', ({ u, p, hit }) => {
    expect(pullsChase(u, p)).toBe(hit);
  });

  it.each([
    { u: 0.2, p: 0.2, want: 0 },
    { u: 0.6, p: 0.2, want: 0.5 },
    { u: 0.5, p: 0, want: 0.5 },
  ])('past the chase, u=$u (p=$p) is uniform again: $want', ({ u, p, want }) => {
    expect(pastChase(u, p)).toBeCloseTo(want, 12);
  });

  it("reads past the chase a uniform on [0, 1): the band draw's deciles", () => {
    // Given no chase, u is uniform on [p, 1): what is left of it must be uniform on [0, 1).
    const rng = new Rng(3);
    const p = 0.3;
    const deciles = new Array<number>(10).fill(0);
    let n = 0;
    for (let i = 0; i < 200_000; i++) {
      const u = rng.next();
      if (pullsChase(u, p)) continue;
      const v = pastChase(u, p);
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(1);
      deciles[Math.floor(v * 10)]!++;
      n++;
    }
    // The largest uniform the generator gives stays below 1 past the chase.
    expect(pastChase(1 - 2 ** -32, 0.01)).toBeLessThan(1);
    // Each decile's count is binomial(n, 0.1): within 5 standard errors.
    const se = Math.sqrt(n * 0.1 * 0.9);
    for (const c of deciles) expect(Math.abs(c - n * 0.1)).toBeLessThan(5 * se);
  });
});

describe("a pull's expected value (the pricing model)", () => {
  // Bands: odds, cards, Σ value (cents): means 100, 1000, (empty), 40.
  const odds = [0.5, 0.2, 0.2, 0.1];
  const count = [4, 2, 0, 5];
  const sum = [400, 2000, 0, 200];
  it.each([
    {
      name: 'no chase: live odds renormalised',
      p: 0,
      chase: 0,
      ev: (0.5 * 100 + 0.2 * 1000 + 0.1 * 40) / 0.8,
    },
    {
      name: 'a chase first, the bands after it',
      p: 0.01,
      chase: 50_000,
      ev: 0.01 * 50_000 + 0.99 * ((0.5 * 100 + 0.2 * 1000 + 0.1 * 40) / 0.8),
    },
  ])('$name', ({ p, chase, ev }) => {
    expect(pullEv(p, chase, odds, count, sum)).toBeCloseTo(ev, 9);
  });

  it('no band holds a card: the chase alone (0 without one)', () => {
    expect(pullEv(0.01, 50_000, odds, [0, 0, 0, 0], [0, 0, 0, 0])).toBe(500);
    expect(pullEv(0, 0, odds, [0, 0, 0, 0], [0, 0, 0, 0])).toBe(0);
  });

  it("reads a pack's bands at an offset of arrays shared by every pack", () => {
    const at = (xs: number[]) => [7, 7, ...xs, 7];
    expect(pullEv(0, 0, odds, at(count), at(sum), 2, 4)).toBe(pullEv(0, 0, odds, count, sum));
  });

  it('summed over risk levels from kept live shares, the very sum of pullEv level by level', () => {
    const rng = new Rng(5);
    const n = 5;
    const levels = 3;
    for (let trial = 0; trial < 2_000; trial++) {
      const base = rng.int(3);
      const cnt = Array.from({ length: base + n }, () => (rng.next() < 0.25 ? 0 : 1 + rng.int(300)));
      const sm = cnt.map((c) => c * (1 + rng.int(20_000)) + rng.int(c + 1));
      const oddsOf = Array.from({ length: levels }, () =>
        Float64Array.from({ length: n }, () => (rng.next() < 0.2 ? 0 : rng.next())),
      );
      // What the backtest's packs keep between changes of which bands hold cards.
      const totals = new Float64Array(levels);
      const share = new Float64Array(levels * n);
      const cum = new Float64Array(levels * n);
      for (let r = 0; r < levels; r++) {
        totals[r] = runningLiveOdds(oddsOf[r]!, cnt, base, n, cum, r * n);
        for (let i = 0; i < n; i++) {
          const w = liveOdds(oddsOf[r]![i]!, cnt[base + i]!);
          share[r * n + i] = w > 0 ? w / totals[r]! : 0;
        }
      }
      const chaseP = rng.next() < 0.5 ? 0 : rng.next() * 0.01;
      const chaseCents = chaseP > 0 ? 1 + rng.int(1_000_000) : 0;
      let expected = 0;
      for (let r = 0; r < levels; r++) expected += pullEv(chaseP, chaseCents, oddsOf[r]!, cnt, sm, base, n);
      const got = pullEvOfLevels(
        chaseP,
        chaseCents,
        share,
        totals,
        levels,
        cnt,
        sm,
        base,
        n,
        new Float64Array(n),
      );
      expect(got).toBe(expected);
    }
  });
});

describe("other users' risk levels and packs", () => {
  it('the shares: 0.6 + 0.4/n for standard, 0.4/n for the others, 1/n without standard', () => {
    expect(OTHERS_STANDARD_SHARE + OTHERS_ANY_SHARE).toBe(1);
    expect(othersRiskShare(0, 3, 0)).toBeCloseTo(0.6 + 0.4 / 3, 15);
    expect(othersRiskShare(1, 3, 0)).toBeCloseTo(0.4 / 3, 15);
    expect(othersRiskShare(2, 3, -1)).toBeCloseTo(1 / 3, 15);
    for (const [levels, standard] of [
      [3, 1],
      [1, 0],
      [2, -1],
    ] as const) {
      let s = 0;
      for (let r = 0; r < levels; r++) s += othersRiskShare(r, levels, standard);
      expect(s).toBeCloseTo(1, 14);
    }
  });

  it.each([
    { levels: 3, standard: 1 },
    { levels: 2, standard: 0 },
    { levels: 3, standard: -1 },
  ])(
    'othersRiskLevel draws by othersRiskShare ($levels levels, standard at $standard)',
    ({ levels, standard }) => {
      const rng = new Rng(11);
      const n = 30_000;
      const f = frequencies(n, () => othersRiskLevel(levels, standard, rng));
      for (let r = 0; r < levels; r++) expectShare(f.get(r) ?? 0, n, othersRiskShare(r, levels, standard));
    },
  );

  it('packs by popularity; equal popularity is ⌊u·n⌋', () => {
    const pop = [1, 3, 0, 6];
    const rng = new Rng(3);
    const n = 30_000;
    const f = frequencies(n, () => pickByPopularity(rng.next(), pop));
    for (let i = 0; i < pop.length; i++) expectShare(f.get(i) ?? 0, n, pop[i]! / 10);
    const a = new Rng(8);
    const b = new Rng(8);
    for (let i = 0; i < 1000; i++)
      expect(pickEqual(7, a)).toBe(pickByPopularity(b.next(), [1, 1, 1, 1, 1, 1, 1]));
  });

  it('shop purchases by category stock; an empty shop draws nothing', () => {
    const stock = [10, 0, 30, 60];
    const rng = new Rng(5);
    const n = 30_000;
    const f = frequencies(n, () => pickByStock(stock, rng));
    for (let i = 0; i < stock.length; i++) expectShare(f.get(i) ?? 0, n, stock[i]! / 100);
    const a = new Rng(9);
    const b = new Rng(9);
    for (let i = 0; i < 1000; i++) expect(pickByStock(stock, a)).toBe(pickWeighted(b.next() * 100, stock));
    expect(pickByStock([0, 0], a)).toBe(NO_CHOICE);
    expect(a.next()).toBe(b.next());
  });
});

describe('restock', () => {
  it.each([
    { size: 10, cards: 4, gap: 6 },
    { size: 10, cards: 10, gap: 0 },
    { size: 3, cards: 5, gap: 0 },
  ])('bandGap($size, $cards) = $gap', ({ size, cards, gap }) => {
    expect(bandGap(size, cards)).toBe(gap);
  });

  it('arrivals go to bands in proportion to their gaps', () => {
    const size = [9, 10, 5, 4];
    const count = [9, 6, 0, 5]; // gaps 0, 4, 5, 0 (an overfull band counts none)
    const rng = new Rng(5);
    const n = 18_000;
    const f = frequencies(n, () => pickByGap(rng.int(9), size, count, 0, 4));
    expectShare(f.get(1) ?? 0, n, 4 / 9);
    expectShare(f.get(2) ?? 0, n, 5 / 9);
    expect((f.get(0) ?? 0) + (f.get(3) ?? 0)).toBe(0);
    expect(pickByGap(0, [3], [3], 0, 1)).toBe(NO_CHOICE);
  });

  it('picks the same band without a branch per band (pickByGapFlat), gaps empty or overfull', () => {
    const rng = new Rng(17);
    for (let trial = 0; trial < 2000; trial++) {
      const n = 1 + rng.int(7);
      const size = new Int32Array(n + 2);
      const count = new Int32Array(n + 2);
      let total = 0;
      for (let i = 1; i <= n; i++) {
        size[i] = rng.int(6);
        count[i] = rng.int(8);
        total += bandGap(size[i]!, count[i]!);
      }
      for (let x = 0; x < total; x++)
        expect(pickByGapFlat(x, size, count, 1, n)).toBe(pickByGap(x, size, count, 1, n));
    }
  });

  it.each([
    { gap: 10, rate: 0.3, dt: 1 },
    { gap: 3, rate: 0.3, dt: 1 },
    { gap: 1, rate: 0.05, dt: 1 },
    { gap: 40, rate: 2, dt: 1 },
  ])(
    'refill of a gap of $gap at $rate/h over $dt h: expectation gap·(1 − e^(−rate·dt))',
    ({ gap, rate, dt }) => {
      const share = refillShare(rate, dt);
      expect(share).toBeCloseTo(1 - Math.exp(-rate * dt), 15);
      const want = gap * share;
      const rng = new Rng(9);
      const n = 20_000;
      let sum = 0;
      let sq = 0;
      for (let i = 0; i < n; i++) {
        const k = refillCount(gap, share, rng);
        expect(k).toBeGreaterThanOrEqual(Math.floor(want));
        expect(k).toBeLessThanOrEqual(Math.min(gap, Math.floor(want) + 1));
        sum += k;
        sq += k * k;
      }
      const mean = sum / n;
      const se = Math.sqrt(Math.max(sq / n - mean * mean, 1e-12) / n);
      expect(Math.abs(mean - want)).toBeLessThanOrEqual(5 * se + 1e-9);
    },
  );

  it('no gap or no rate: no card and no draw', () => {
    const rng = new Rng(1);
    const before = new Rng(1).next();
    expect(refillCount(0, 0.5, rng)).toBe(0);
    expect(refillCount(5, refillShare(0, 1), rng)).toBe(0);
    expect(rng.next()).toBe(before);
  });
});

describe('value index step', () => {
  it.each([
    { trend: 0, sigma: 0.02, dt: 1 / 24 },
    { trend: 0, sigma: 0.3, dt: 1 },
    { trend: 0.01, sigma: 0.05, dt: 1 / 24 },
  ])('E[factor] = e^(trend·dt) (a martingale at trend 0): trend $trend, σ $sigma', ({ trend, sigma, dt }) => {
    const step = valueStep(trend, sigma, dt);
    expect(step.drift).toBeCloseTo((trend - (sigma * sigma) / 2) * dt, 15);
    expect(step.scale).toBeCloseTo(sigma * Math.sqrt(dt), 15);
    const rng = new Rng(21);
    const n = 40_000;
    let sum = 0;
    let sq = 0;
    for (let i = 0; i < n; i++) {
      const x = indexFactor(step, rng.normal());
      sum += x;
      sq += x * x;
    }
    const mean = sum / n;
    const se = Math.sqrt((sq / n - mean * mean) / n);
    expect(Math.abs(mean - Math.exp(trend * dt))).toBeLessThanOrEqual(5 * se);
  });

  it('no volatility and no trend: the index stays put', () => {
    expect(indexFactor(valueStep(0, 0, 1 / 24), 1.7)).toBe(1);
  });
});

describe('listing fills', () => {
  it.each([
    { price: 100, value: 100, base: 1, sens: 4, rate: 1 },
    { price: 120, value: 100, base: 1, sens: 4, rate: Math.exp(-0.8) },
    { price: 80, value: 100, base: 2, sens: 4, rate: 2 * Math.exp(0.8) },
    { price: 80, value: 0, base: 1, sens: 4, rate: 0 },
  ])('hazard per day at price $price, value $value', ({ price, value, base, sens, rate }) => {
    expect(fillRatePerDay(price, value, base, sens)).toBeCloseTo(rate, 12);
  });

  it.each([
    { rate: 1, dt: 1 / 24 },
    { rate: 5, dt: 1 / 24 },
    { rate: 0.1, dt: 1 },
  ])('per tick: 1 − e^(−rate·dt), and n ticks compound to the hazard over n·dt', ({ rate, dt }) => {
    const p = fillProbability(rate, dt);
    expect(p).toBeCloseTo(1 - Math.exp(-rate * dt), 15);
    expect(p).toBeLessThanOrEqual(rate * dt);
    const survive24 = (1 - p) ** 24;
    expect(survive24).toBeCloseTo(Math.exp(-rate * dt * 24), 12);
    expect(fillProbability(0, dt)).toBe(0);
  });
});

describe('sell-back', () => {
  const at = Date.parse('2025-01-01T00:00:00Z');
  it.each([
    { name: 'at the pull', kind: 'pull', now: at, rate: 0.9, amount: 900 },
    { name: 'at the end of the fresh window', kind: 'pull', now: at + 5 * MIN, rate: 0.9, amount: 900 },
    { name: 'just after the fresh window', kind: 'pull', now: at + 5 * MIN + 1, rate: 0.8, amount: 800 },
    { name: 'at the end of the lock', kind: 'pull', now: at + 7 * DAY, rate: 0.8, amount: 800 },
    { name: 'after the lock: current value', kind: 'pull', now: at + 7 * DAY + 1, rate: 0.8, amount: 1000 },
    { name: 'bought card at once: no fresh window', kind: 'purchase', now: at, rate: 0.8, amount: 800 },
    { name: 'bought card after the lock', kind: 'purchase', now: at + 8 * DAY, rate: 0.8, amount: 1000 },
  ] as const)('$name', ({ kind, now, rate, amount }) => {
    // Basis 1000 cents (value at pull), worth 1250 now.
    const offer = sellBackOffer(kind, at, 1000, 1250, now, RULES);
    expect(offer.rate).toBe(rate);
    expect(offer.basisCents).toBe(now <= at + 7 * DAY ? 1000 : 1250);
    expect(offer.amountCents).toBe(amount);
    expect(offer.lockedUntil).toBe(now <= at + 7 * DAY ? at + 7 * DAY : null);
    expect(sellBackAmount(kind, at, 1000, 1250, now, RULES)).toBe(offer.amountCents);
  });

  it("the world's rules override the spec's numbers", () => {
    const rules = RulesSpec.parse({
      fresh_rate: 0.95,
      fresh_window_seconds: 60,
      lock_days: 1,
      market_rate: 0.7,
    });
    expect(sellBackAmount('pull', 0, 1000, 2000, 60_000, rules)).toBe(950);
    expect(sellBackAmount('pull', 0, 1000, 2000, 60_001, rules)).toBe(800);
    expect(sellBackAmount('pull', 0, 1000, 2000, DAY + 1, rules)).toBe(1400);
    // Rounded half away from zero to the cent.
    expect(sellBackAmount('pull', 0, 1005, 0, 0, RULES)).toBe(905);
  });
});

describe('Poisson processes', () => {
  it.each([
    { rate: 30, dt: 1 },
    { rate: 3, dt: 1 },
    { rate: 0.5, dt: 0.25 },
  ])('counts per tick and exponential delays have the same mean rate ($rate/h)', ({ rate, dt }) => {
    const rng = new Rng(13);
    const n = 20_000;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += poissonCount(rate, dt, rng);
    const mean = rate * dt;
    expect(Math.abs(sum / n - mean)).toBeLessThanOrEqual(5 * Math.sqrt(mean / n));
    let ms = 0;
    for (let i = 0; i < n; i++) ms += nextEventDelayMs(rate, rng);
    const hours = ms / n / 3_600_000;
    // Exponential mean 1/rate, sd 1/rate (rounding to the ms is negligible here).
    expect(Math.abs(hours - 1 / rate)).toBeLessThanOrEqual(5 / rate / Math.sqrt(n) + 1e-6);
  });

  it('a zero rate: no events, never', () => {
    const rng = new Rng(1);
    expect(poissonCount(0, 1, rng)).toBe(0);
    expect(nextEventDelayMs(0, rng)).toBe(Number.POSITIVE_INFINITY);
  });
});
