/**
 * The soak run's short version (`npm run soak` runs longer): one simulated day at 10 000× against
 * `packbot sim --speed 10000` in its own process, on real timers, with a leak of 20 MB a simulated
 * day planted in the bot's process. The verdict fails on it and measures about what was planted;
 * the simulator's figures are its own process's (read beside, not judged); open handles do not
 * grow and a stopped bot leaves none behind. (A flat bot's verdict over days is judged in
 * trend.test.ts on series of known truth, and by `npm run soak -- --days 7`: docs/operations.md.)
 */
import { describe, expect, it } from 'vitest';
import { runSoak, soakTable } from '../../soak/soak.js';

describe('soak (short)', () => {
  it('fails the verdict on a planted leak, measuring the bot alone', async () => {
    const r = await runSoak({ days: 1, speed: 10_000, leakMbPerDay: 20 });
    expect(r.samples.length).toBe(49);
    expect(r.logLines.error).toBe(0);
    expect(r.gcExposed).toBe(true);
    expect(r.verdict.memory).toBe('growing');
    expect(r.verdict.ok).toBe(false);
    expect(r.verdict.line).toContain('memory GROWING');
    // What the verdict measured is of the order of what was planted (on an idle machine about 20;
    // a busy one reads some samples late and the bot's own warm-up weighs in).
    expect(r.verdict.heapTrend!.slope).toBeGreaterThan(8);
    expect(r.verdict.heapTrend!.slope).toBeLessThan(40);
    expect(r.verdict.handlesFlat, JSON.stringify([r.start.handleTypes, r.end.handleTypes])).toBe(true);
    expect(r.handlesAfterStop).toBeLessThanOrEqual(r.handlesBefore);
    // The simulator ran in its own process: its memory is read from there, and it releases the
    // cards simulated other users take.
    expect(r.end.simRssMb).toBeGreaterThan(20);
    expect(r.end.simCardsReleased).toBeGreaterThan(300);
    expect(r.end.simCards).toBeLessThan(r.start.simCards + 100);
    expect(r.simGrowth).toContain('its own process');
    expect(soakTable(r).split('\n')).toHaveLength(5);
  }, 90_000);
});
