import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../src/api/client.js';
import { TransportError, UnauthorizedError } from '../../src/api/errors.js';
import type { PartnerApi } from '../../src/api/partner-api.js';
import { recordSeries, snapshotName } from '../../src/backtest/snapshot/record.js';
import { takeSnapshot } from '../../src/backtest/snapshot/snapshot.js';
import { loadWorld } from '../../src/config/world-file.js';
import { type Clock, HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { startSimServer } from '../../src/market/server.js';

/** The recorder's own clock: every sleep jumps straight to its end (no wall-clock wait). */
class JumpingClock implements Clock {
  constructor(public t: number) {}
  now(): number {
    return this.t;
  }
  async sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason;
    this.t += Math.max(0, ms);
  }
}

const dirs: string[] = [];
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'packbot-record-'));
  dirs.push(d);
  return d;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const T0 = Date.parse('2026-03-02T10:00:00Z');
/** A world and its market on the recorder's clock (one category: fast). */
function sim(clock: Clock) {
  const market = new Market(loadWorld(), { clock, seed: 3 });
  return { market, api: market.api('sk_sim_full') };
}
const base = { everyMs: HOUR_MS, shop: false, source: 'test', categories: ['pokemon'] as const };

describe('recordSeries', () => {
  it('takes one snapshot per interval, named by time, in order', async () => {
    const clock = new JumpingClock(T0);
    const dir = tempDir();
    const r = await recordSeries({
      ...base,
      ...sim(clock),
      clock,
      dir,
      count: 3,
      serverNow: () => clock.now(),
    });
    expect(r).toEqual({ written: 3, total: 3, interrupted: false });
    const files = readdirSync(dir).sort();
    expect(files).toEqual([0, 1, 2].map((k) => snapshotName(T0 + k * HOUR_MS)));
    const snap = JSON.parse(readFileSync(join(dir, files[2]!), 'utf8'));
    expect(snap).toMatchObject({
      format: 'packbot.snapshot/v2',
      taken_at: '2026-03-02T12:00:00.000Z',
      shop: null,
    });
  });

  it('stops at --duration measured from the first snapshot', async () => {
    const clock = new JumpingClock(T0);
    const r = await recordSeries({ ...base, ...sim(clock), clock, dir: tempDir(), durationMs: 6 * HOUR_MS });
    expect(r.total).toBe(6);
  });

  it('resumes: counts what the directory holds and keeps its cadence; drops a crash temp file', async () => {
    const clock = new JumpingClock(T0);
    const dir = tempDir();
    const world = sim(clock);
    await recordSeries({ ...base, ...world, clock, dir, count: 2 });
    writeFileSync(join(dir, `${snapshotName(T0 + 5 * HOUR_MS)}.tmp-999`), '{"half":');
    writeFileSync(join(dir, 'notes.txt'), 'kept');
    // A restart 30 minutes after the second snapshot: the third is due an hour after the second.
    clock.t = T0 + HOUR_MS + 30 * 60_000;
    const r = await recordSeries({ ...base, ...world, clock, dir, count: 4 });
    expect(r).toEqual({ written: 2, total: 4, interrupted: false });
    expect(readdirSync(dir).sort()).toEqual([
      'notes.txt',
      ...[0, 1, 2, 3].map((k) => snapshotName(T0 + k * HOUR_MS)),
    ]);
  });

  it('skips an interval that fails transiently, retries once sooner, and goes on', async () => {
    const clock = new JumpingClock(T0);
    const { api } = sim(clock);
    let fail = 0;
    const flaky: PartnerApi = {
      ...api,
      listPacks: (q) => {
        // The second interval fails twice (its try and its retry), then all is well.
        if (clock.now() >= T0 + HOUR_MS && fail < 2) {
          fail++;
          return Promise.reject(new TransportError('reset', 'connection reset'));
        }
        return api.listPacks(q);
      },
    };
    const skipped: number[] = [];
    const dir = tempDir();
    const r = await recordSeries({
      ...base,
      api: flaky,
      clock,
      dir,
      count: 3,
      onSkipped: (_e, at) => skipped.push(at),
    });
    expect(r.total).toBe(3);
    // The retry: a tenth of the interval, at most 5 minutes; then the next interval.
    expect(skipped).toEqual([T0 + HOUR_MS + 5 * 60_000, T0 + 2 * HOUR_MS]);
    expect(readdirSync(dir).sort()).toEqual([0, 2, 3].map((k) => snapshotName(T0 + k * HOUR_MS)));
  });

  it('a fatal error (bad key) stops the recording', async () => {
    const clock = new JumpingClock(T0);
    const { api } = sim(clock);
    const bad: PartnerApi = { ...api, listPacks: () => Promise.reject(new UnauthorizedError('bad key')) };
    await expect(recordSeries({ ...base, api: bad, clock, dir: tempDir(), count: 2 })).rejects.toThrow(
      /bad key/,
    );
  });

  it('an interrupt during a sync writes no file', async () => {
    const clock = new JumpingClock(T0);
    const { api } = sim(clock);
    const controller = new AbortController();
    const interrupted: PartnerApi = {
      ...api,
      getAccount: () => {
        controller.abort();
        return api.getAccount();
      },
    };
    const dir = tempDir();
    const r = await recordSeries({
      ...base,
      api: interrupted,
      clock,
      dir,
      count: 2,
      signal: controller.signal,
    });
    expect(r).toEqual({ written: 0, total: 0, interrupted: true });
    expect(readdirSync(dir)).toEqual([]);
  });
});

describe('snapshots are stamped with the server time', () => {
  it("uses the simulator's Date header (its clock, advanced through the admin API), not ours", async () => {
    const simClock = new VirtualClock(T0);
    const market = new Market(loadWorld(), { clock: simClock, seed: 3 });
    const server = await startSimServer({ market, clock: simClock });
    try {
      const admin = await fetch(`${server.url}/sim/v1/clock/advance`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ seconds: 5 * 3600 }),
      });
      expect(admin.headers.get('date')).toBe(new Date(T0).toUTCString());
      const local = new JumpingClock(Date.parse('2026-01-01T00:00:00Z'));
      const api = createHttpClient({ baseUrl: server.url, apiKey: 'sk_sim_full', clock: local });
      expect(api.serverNow()).toBeNull();
      const snap = await takeSnapshot(api, {
        clock: local,
        source: 'test',
        categories: ['pokemon'],
        serverNow: () => api.serverNow(),
      });
      expect(snap.taken_at).toBe('2026-03-02T15:00:00.000Z');
      expect(snap.local_time).toBe('2026-01-01T00:00:00.000Z');
      expect(snap.time_source).toBe('server');
      // Shop stock: every card of the category, as the paged listing gives it.
      const shop = snap.shop!;
      expect(shop.map((s) => s.category)).toEqual(['pokemon']);
      expect(shop[0]!.cards.length).toBe(shop[0]!.total);
      expect(shop[0]!.cards.length).toBeGreaterThan(0);
      expect(shop[0]!.cards[0]).toMatchObject({
        price: expect.any(Number),
        market_value: expect.any(Number),
      });
    } finally {
      await server.close();
    }
  });
});
