import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpClient } from '../../../src/api/client.js';
import { takeSnapshot, writeSnapshot } from '../../../src/backtest/snapshot/snapshot.js';
import { loadWorld } from '../../../src/config/world-file.js';
import { HOUR_MS, VirtualClock } from '../../../src/core/clock.js';
import { Market } from '../../../src/market/market.js';
import { type SimServer, startSimServer } from '../../../src/market/server.js';
import { runCli } from '../../cli/run-cli.js';
import { writeConfig } from '../../e2e/helpers.js';
import { truthWorld } from './helpers.js';

let server: SimServer;
let dir: string;
let snaps: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'packbot-calibrate-'));
  snaps = join(dir, 'snaps');
  mkdirSync(snaps);
  const clock = new VirtualClock('2026-03-02T00:00:00Z');
  const market = new Market(truthWorld(), { clock, seed: 7 });
  server = await startSimServer({ market, clock });
  const local = new VirtualClock('2026-01-01T00:00:00Z');
  const api = createHttpClient({
    baseUrl: server.url,
    apiKey: 'sk_sim_full',
    clock: local,
    pacing: { readBudget: false },
  });
  for (let h = 0; h <= 9; h++) {
    if (h > 0) await clock.advance(HOUR_MS);
    const snap = await takeSnapshot(api, { clock: local, source: 'sim', serverNow: () => api.serverNow() });
    writeSnapshot(join(snaps, `s${h}.json`), snap);
  }
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('packbot calibrate', () => {
  it('fits the series, writes a world file the backtest and the simulator take, and the JSON', async () => {
    process.env.PB_CAL_KEY = 'sk_sim_full';
    const config = writeConfig(dir, { baseUrl: server.url, keyEnv: 'PB_CAL_KEY' });
    const out = join(dir, 'dynamics.yaml');
    const json = join(dir, 'calibration.json');
    const r = await runCli([
      'calibrate',
      '--config',
      config,
      '--snapshots',
      snaps,
      '--out',
      out,
      '--json',
      json,
    ]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/others_pack_openings_per_hour\s+\d/);
    expect(r.stdout).toMatch(/held-out check: fitted on 6 snapshots, predicting the last 5/);
    const c = JSON.parse(readFileSync(json, 'utf8'));
    expect(c).toMatchObject({ format: 'packbot.calibration/v1', span: { snapshots: 10 } });
    expect(c.samples.others_pack_openings_per_hour).toBeGreaterThan(100);
    expect(c.defaulted.listing_fills_per_day_at_value).toMatch(/too few listings/);
    const world = loadWorld(out);
    expect(world.dynamics.others_pack_openings_per_hour).toBeCloseTo(
      c.dynamics.others_pack_openings_per_hour,
      3,
    );
    expect(world.dynamics.listing_fills_per_day_at_value).toBe(1);
    expect(Object.keys(world.categories)).toContain('pokemon');
    const v = await runCli(['validate', out]);
    expect(v.code).toBe(0);
  });

  it('keeps the openings default and says so when the key cannot read the report', async () => {
    process.env.PB_CAL_READ = 'sk_sim_read';
    const sub = join(dir, 'read');
    mkdirSync(sub, { recursive: true });
    const config = writeConfig(sub, { baseUrl: server.url, keyEnv: 'PB_CAL_READ' });
    const json = join(sub, 'c.json');
    const r = await runCli([
      'calibrate',
      '--config',
      config,
      '--snapshots',
      snaps,
      '--out',
      join(sub, 'd.yaml'),
      '--json',
      json,
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/kept the default: the key cannot read the purchase report/);
    const c = JSON.parse(readFileSync(json, 'utf8'));
    expect(c.dynamics.others_pack_openings_per_hour).toBe(30);
    expect(c.samples.value_daily_volatility).toBeGreaterThan(0);
  });

  it.each([
    [['calibrate', '--out', 'x.yaml'], /--snapshots DIR is required/],
    [['calibrate', '--snapshots', '/nonexistent/dir', '--out', 'x.yaml'], /no such directory/],
    [['calibrate', '--snapshots', 'x', '--out', 'y', '--bogus'], /Unknown option/],
  ])('refuses bad usage: %j', async (argv, message) => {
    const r = await runCli(argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('needs at least two snapshots', async () => {
    const one = join(dir, 'one');
    mkdirSync(one, { recursive: true });
    writeSnapshot(join(one, 'a.json'), JSON.parse(readFileSync(join(snaps, 's0.json'), 'utf8')));
    const config = writeConfig(dir, { baseUrl: server.url, keyEnv: 'PB_CAL_KEY' });
    const r = await runCli([
      'calibrate',
      '--config',
      config,
      '--snapshots',
      one,
      '--out',
      join(dir, 'z.yaml'),
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/1 snapshot\(s\); calibration needs at least two/);
  });
});
