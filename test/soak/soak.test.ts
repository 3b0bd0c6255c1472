/**
 * The soak run's short version (`npm run soak` runs 30 days): one simulated day on the embedded
 * simulator at 10 000×, on real timers. It completes, the bot trades, open handles do not grow
 * across the day, a stopped bot leaves none behind, and the simulator's card stock does not grow
 * with the cards simulated other users take.
 */
import { describe, expect, it } from 'vitest';
import { runSoak, soakTable } from '../../soak/soak.js';

describe('soak (short)', () => {
  it('runs a simulated day with handles flat', async () => {
    // At least one order before the end: on a busy machine the day may pass before the first.
    const r = await runSoak({ days: 1, speed: 10_000, minOrders: 1 });
    expect(r.samples.map((s) => s.label)).toEqual(['start', 'end']);
    expect(r.end.orders).toBeGreaterThan(0);
    expect(r.logLines.error).toBe(0);
    expect(r.verdict.handlesFlat, JSON.stringify([r.start.handleTypes, r.end.handleTypes])).toBe(true);
    expect(r.handlesAfterStop).toBeLessThanOrEqual(r.handlesBefore);
    // The simulator does not keep the cards simulated other users take (about 800 a day).
    expect(r.end.simCardsReleased).toBeGreaterThan(300);
    expect(r.end.simCards).toBeLessThan(r.start.simCards + 100);
    expect(soakTable(r).split('\n')).toHaveLength(5);
  });
});
