import { describe, expect, it } from 'vitest';
import { DAY_MS, nextUtcMidnight, VirtualClock } from '../../src/core/clock.js';
import { Rng } from '../../src/core/prng.js';

describe('VirtualClock', () => {
  it('wakes sleepers in deadline order as time advances', async () => {
    const clock = new VirtualClock('2026-01-01T00:00:00Z');
    const woke: string[] = [];
    void clock.sleep(2000).then(() => woke.push(`b@${clock.now()}`));
    void clock.sleep(1000).then(() => woke.push(`a@${clock.now()}`));
    await clock.advance(500);
    expect(woke).toEqual([]);
    await clock.advance(2000);
    const t0 = Date.parse('2026-01-01T00:00:00Z');
    expect(woke).toEqual([`a@${t0 + 1000}`, `b@${t0 + 2000}`]);
    expect(clock.now()).toBe(t0 + 2500);
  });

  it('aborts a sleep', async () => {
    const clock = new VirtualClock(0);
    const ac = new AbortController();
    const p = clock.sleep(1000, ac.signal);
    ac.abort(new Error('stop'));
    await expect(p).rejects.toThrow('stop');
    expect(clock.nextWakeAt()).toBeUndefined();
  });

  it('never goes backwards', () => {
    const clock = new VirtualClock(1000);
    expect(() => clock.set(0)).toThrow(RangeError);
  });

  it('computes next UTC midnight', () => {
    expect(nextUtcMidnight(Date.parse('2026-03-04T23:59:59Z'))).toBe(Date.parse('2026-03-05T00:00:00Z'));
    expect(nextUtcMidnight(Date.parse('2026-03-05T00:00:00Z'))).toBe(
      Date.parse('2026-03-05T00:00:00Z') + DAY_MS,
    );
  });
});

describe('Rng', () => {
  it('is deterministic per seed and roughly uniform', () => {
    const a = new Rng(42);
    const b = new Rng(42);
    const xs = Array.from({ length: 10_000 }, () => a.next());
    expect(xs.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b.next()));
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(mean).toBeGreaterThan(0.48);
    expect(mean).toBeLessThan(0.52);
    expect(new Rng(1).next()).not.toBe(new Rng(2).next());
  });
});
