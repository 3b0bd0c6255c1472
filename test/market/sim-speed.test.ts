/**
 * `packbot sim --speed S`: the simulator's clock runs S times the wall, and GET /sim/v1/clock gives
 * its speed and anchor so another process keeps the same time (the soak's bot does). The clock
 * arithmetic on a clock that only moves when told; the CLI as a child process.
 */
import { describe, expect, it } from 'vitest';
import { startSimProcess } from '../../soak/sim-process.js';
import { VirtualClock } from '../../src/core/clock.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { runCli } from '../cli/run-cli.js';
import { ROOT } from '../e2e/helpers.js';

describe('SimClock with a speed', () => {
  it('runs speed times the wall from its start, plus what advance adds; its anchor rebuilds it', async () => {
    const wall = new VirtualClock(Date.UTC(2026, 0, 1));
    const clock = new SimClock(wall, 100);
    const start = clock.now();
    await wall.advance(1_000);
    expect(clock.now()).toBe(start + 100_000);
    clock.advance(5_000);
    expect(clock.now()).toBe(start + 105_000);
    const a = clock.anchor();
    expect(a.simMs + (wall.now() - a.wallMs) * a.speed).toBe(clock.now());
  });

  it('wakes a sleeper after its simulated time, on a wall timer speed times shorter', async () => {
    const clock = new SimClock(undefined, 1_000);
    const t0 = performance.now();
    const s0 = clock.now();
    await clock.sleep(60_000);
    expect(clock.now() - s0).toBeGreaterThanOrEqual(60_000);
    // 60 simulated seconds are 60 wall ms; a generous bound for a shared machine.
    expect(performance.now() - t0).toBeLessThan(5_000);
  });
});

describe('packbot sim --speed', () => {
  it('serves a clock another process follows from its anchor', async () => {
    const sim = await startSimProcess({ root: ROOT, world: `${ROOT}/config/sim.yaml`, seed: 1, speed: 1000 });
    try {
      const read = async () =>
        (await (await fetch(`${sim.url}/sim/v1/clock`)).json()) as { now: string; speed: number };
      const first = await read();
      expect(first.speed).toBe(1000);
      // Ours, rebuilt from the anchor, agrees with the simulator's answer within the round trip.
      const before = sim.clock.now();
      const theirs = Date.parse((await read()).now);
      const after = sim.clock.now();
      expect(theirs).toBeGreaterThanOrEqual(before - 1000);
      expect(theirs).toBeLessThanOrEqual(after + 1000);
      // And it runs a thousand times the wall.
      const w0 = Date.now();
      const s0 = Date.parse((await read()).now);
      while (Date.now() - w0 < 200) await new Promise((r) => setTimeout(r, 20));
      const s1 = Date.parse((await read()).now);
      expect(s1 - s0).toBeGreaterThanOrEqual(150_000);
    } finally {
      await sim.stop();
    }
  });

  it('refuses a speed out of range with exit 2', async () => {
    for (const speed of ['0', '20000', 'fast']) {
      const r = await runCli(['sim', '--port', '0', '--speed', speed]);
      expect(r.code, speed).toBe(2);
      expect(r.stderr).toContain('--speed must be a number from 1 to 10000');
    }
  });
});
