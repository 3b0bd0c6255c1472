/**
 * The soak's judgement alone, on made-up series with known truth: a flat series whose noise is
 * correlated from sample to sample (as heap after GC is) is not called growing, though the
 * textbook standard error would call it so; a real leak beyond the limit is; a short run is
 * inconclusive. Deterministic noise (a seeded generator), no bot.
 */
import { describe, expect, it } from 'vitest';
import { type Sample, verdictOf } from '../../soak/soak.js';
import { judge, trend } from '../../soak/trend.js';
import { Rng } from '../../src/core/prng.js';

/** 7 days hourly: level + slope·t + AR(1) noise (φ 0.9) + a daily wave. */
function series(slopePerDay: number, seed: number, days = 7, perDay = 24): [number, number][] {
  const rng = new Rng(seed);
  const rnd = () => rng.nextUint32() / 2 ** 32;
  const normal = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  let ar = 0;
  const out: [number, number][] = [];
  for (let i = 0; i <= days * perDay; i++) {
    const t = i / perDay;
    ar = 0.9 * ar + 0.15 * normal();
    out.push([t, 25 + slopePerDay * t + ar + 0.3 * Math.sin(2 * Math.PI * t)]);
  }
  return out;
}

describe('trend with its uncertainty', () => {
  it('recovers a known slope, its bounds around it', () => {
    const t = trend(series(2, 1), 24)!;
    expect(t.slope).toBeGreaterThan(1.5);
    expect(t.slope).toBeLessThan(2.5);
    expect(t.low).toBeLessThan(t.slope);
    expect(t.high).toBeGreaterThan(t.slope);
    expect(t.n).toBe(169);
  });

  it('a flat series with correlated noise is never growing against the limit, though a naive interval often finds growth', () => {
    let naiveFindsGrowth = 0;
    for (let seed = 1; seed <= 50; seed++) {
      const pts = series(0, seed).filter(([t]) => t >= 1);
      expect(judge(trend(pts, 24), 0.5), `seed ${seed}`).not.toBe('growing');
      // The textbook interval (independent errors): its lower bound above 0 "shows" growth.
      if (trend(pts, 0)!.low > 0) naiveFindsGrowth++;
    }
    // Nominally 5 % (2.5 of 50); correlated noise makes it about one run in five.
    expect(naiveFindsGrowth).toBeGreaterThanOrEqual(6);
  });

  it('mostly flat, and never growing, for a flat series; growing for a leak of 2 MB/day', () => {
    const verdicts = Array.from({ length: 20 }, (_, i) =>
      judge(
        trend(
          series(0, 100 + i).filter(([t]) => t >= 1),
          24,
        ),
        0.5,
      ),
    );
    expect(verdicts.filter((v) => v === 'flat').length).toBeGreaterThanOrEqual(15);
    for (let seed = 1; seed <= 20; seed++)
      expect(
        judge(
          trend(
            series(2, seed).filter(([t]) => t >= 1),
            24,
          ),
          0.5,
        ),
      ).toBe('growing');
  });

  it('too few samples is inconclusive, whatever they show', () => {
    expect(judge(trend(series(5, 1, 1, 20), 5), 0.5)).toBe('inconclusive');
    expect(judge(null, 0.5)).toBe('inconclusive');
  });
});

describe("the soak's verdict on samples", () => {
  const sample = (t: number, heap: number, over: Partial<Sample> = {}): Sample => ({
    label: t === 0 ? 'start' : `t ${t}`,
    t,
    at: t,
    wallSeconds: t,
    rssMb: 120,
    heapUsedMb: heap,
    handles: 8,
    handleTypes: {},
    ledgerKb: 100 + t * 10,
    walKb: 0,
    orders: Math.round(t * 5),
    windowsMissed: 0,
    loopP99Ms: 1,
    simRssMb: 90,
    simCards: 2000,
    simCardsReleased: Math.round(t * 800),
    ...over,
  });
  const extra = {
    logLines: { total: 0, warn: 0, error: 0 },
    gcExposed: true,
    handlesBefore: 4,
    handlesAfterStop: 3,
    samplesPerDay: 24,
  };

  it('passes a flat bot (exit 0) and fails a leaking one (exit 1), naming the trend and the limit', () => {
    const flat = verdictOf(
      { days: 7, speed: 5000 },
      series(0, 7).map(([t, y]) => sample(t, y)),
      extra,
    );
    expect(flat.verdict.memory).toBe('flat');
    expect(flat.verdict.ok).toBe(true);
    expect(flat.verdict.line).toMatch(
      /memory flat \(heap trend [+-]\d+\.\d+ MB\/day, 95 % bounds .* limit 0\.5 MB\/day/,
    );
    const leak = verdictOf(
      { days: 7, speed: 5000 },
      series(1.5, 7).map(([t, y]) => sample(t, y)),
      extra,
    );
    expect(leak.verdict.memory).toBe('growing');
    expect(leak.verdict.ok).toBe(false);
    expect(leak.verdict.line).toContain('memory GROWING');
  });

  it('an RSS level far above the warm-up is growing; more handles fail too', () => {
    const pts = series(0, 9).map(([t, y]) => sample(t, y, { rssMb: t > 6 ? 200 : 120 }));
    expect(verdictOf({ days: 7, speed: 5000 }, pts, extra).verdict.memory).toBe('growing');
    const handles = series(0, 9).map(([t, y]) => sample(t, y, { handles: t > 6 ? 12 : 8 }));
    const r = verdictOf({ days: 7, speed: 5000 }, handles, extra);
    expect(r.verdict.handlesFlat).toBe(false);
    expect(r.verdict.ok).toBe(false);
  });
});
