/**
 * The operator commands: doctor against the simulator over HTTP (the server `packbot sim` runs)
 * with the full key (exit 0) and with a key that cannot sell back (exit 1 naming the scope); and
 * status, vault, listings, orders and delist --all on an embedded bot's books, with the bot stopped
 * (ledger and the saved simulator state) and running (its API).
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { SimClock } from '../../src/market/sim-clock.js';
import { devKeys } from '../../src/market/world.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { generousStrategy, removeTempDirs, tempDir, writeConfig } from '../e2e/helpers.js';
import { runCli } from './run-cli.js';

afterAll(removeTempDirs);

const TOKEN = 'operator-test-token-0123456789';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe('packbot doctor against the simulator over HTTP', () => {
  // Doctor compares the service's Date header (this clock's time) with the wall clock: the
  // simulator's own clock follows the wall clock, however long the tests before this one took.
  const clock = new SimClock();
  const world = testWorld({
    keys: [
      ...(devKeys('acct_t') ?? []),
      {
        name: 'no-sell',
        key: 'sk_sim_nosell',
        scopes: ['read:catalog', 'read:account', 'rip:packs'],
        account: 'acct_t',
      },
    ],
  });
  let server: SimServer;
  let dir: string;
  let config: string;
  beforeAll(async () => {
    server = await startSimServer({ market: new Market(world, { clock, seed: 3 }), clock, port: 0 });
    dir = tempDir('packbot-doctor-');
    // Nothing listens on the metrics port: the bot is not running, which is fine.
    config = writeConfig(dir, {
      baseUrl: server.url,
      keyEnv: 'PB_DOCTOR_KEY',
      metricsPort: await freePort(),
    });
  });
  afterAll(() => server.close());

  it('exits 0 with the full key', async () => {
    process.env.PB_DOCTOR_KEY = 'sk_sim_full';
    const r = await runCli(['doctor', '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('All is well.');
    expect(r.stdout).toMatch(/ok\s+main: identity\s+key 'sim-full' acts on tester/);
    expect(r.code).toBe(0);
    const json = await runCli(['doctor', '--config', config, '--json']);
    const parsed = JSON.parse(json.stdout);
    expect(parsed.ok).toBe(true);
    expect(parsed.checks.map((c: { check: string }) => c.check)).toEqual(
      expect.arrayContaining(['main: scopes', 'main: limits', 'main: clock', 'ledger', 'metrics']),
    );
  });

  it('names a marketplace fee the strategy does not assume, once sales measured it', async () => {
    process.env.PB_DOCTOR_KEY = 'sk_sim_full';
    const ledger = Ledger.open(join(dir, 'ledger.db'), { clock: new VirtualClock(START) });
    ledger.observeBalance('main', 100_000, 'reconcile', 0.05);
    let balance = 100_000;
    for (const [i, price] of [4000, 6000, 10_000].entries()) {
      ledger.recordListing({ listingId: `l${i}`, cardId: `c${i}`, priceCents: price, account: 'main' });
      ledger.recordListingFill(`l${i}`, null);
      balance += price * 0.9;
      ledger.observeBalance('main', balance, 'reconcile', 0.05);
    }
    ledger.close();
    const r = await runCli(['doctor', '--config', config]);
    expect(r.stdout).toMatch(
      /warn\s+main: marketplace fee\s+the marketplace kept 10\.00% of 3 sale\(s\); the strategy assumes 5\.00%/,
    );
    expect(r.code).toBe(0);
    rmSync(join(dir, 'ledger.db'));
    delete process.env.PB_DOCTOR_KEY;
  });

  it('exits 1 naming the missing scope with a key that cannot sell back', async () => {
    process.env.PB_DOCTOR_KEY = 'sk_sim_nosell';
    const r = await runCli(['doctor', '--config', config]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAIL\s+main: scopes\s+the key lacks sell:cards, write:listings/);
    expect(r.stdout).toContain('1 problem(s).');
    expect(r.stdout).not.toContain('sk_sim_nosell');
    delete process.env.PB_DOCTOR_KEY;
  });
});

describe('operator commands on an embedded bot', () => {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const dir = tempDir('packbot-ops-');
  let configPath: string;
  let port: number;
  const config = () => loadBotConfig(configPath, { PB_TOKEN: TOKEN });

  beforeAll(async () => {
    port = await freePort();
    configPath = writeConfig(dir, {
      baseUrl: 'embedded',
      keyEnv: 'PB_UNSET_KEY',
      strategy: generousStrategy(dir),
      metricsPort: port,
      extra: '  token_env: PB_TOKEN',
    });
    const runner = await Runner.start(config(), { clock, logDestination: new LogSink() });
    await driveUntil(clock, START + 2 * HOUR_MS, 3);
    await runner.stop('test done');
  });
  afterAll(() => {
    delete process.env.PB_TOKEN;
  });

  it('status, vault, listings and orders work from the books with --json', async () => {
    const status = await runCli(['status', '--config', configPath, '--json']);
    expect(status.code).toBe(0);
    const s = JSON.parse(status.stdout);
    expect(s.source).toBe('ledger');
    expect(s.status.accounts[0].spend.total_usd).toBeGreaterThan(0);
    expect((await runCli(['status', '--config', configPath])).stdout).toContain('bot not running');

    const vault = JSON.parse((await runCli(['vault', '--config', configPath, '--json'])).stdout);
    expect(vault.cards.length).toBeGreaterThan(0);
    expect(vault.cards.every((c: { agree: boolean }) => c.agree)).toBe(true);
    const listings = JSON.parse((await runCli(['listings', '--config', configPath, '--json'])).stdout);
    expect(listings.listings.length).toBeGreaterThan(1);
    expect(
      listings.listings.every(
        (c: { api_listed: boolean; ledger_listing_usd: number }) => c.api_listed && c.ledger_listing_usd > 0,
      ),
    ).toBe(true);
    const orders = await runCli(['orders', '--config', configPath, '--json']);
    expect(JSON.parse(orders.stdout).orders.length).toBeGreaterThan(0);
  });

  it('score --config reads the embedded simulator as the bot left it, not a fresh world', async () => {
    const rows = async (path: string) => {
      const r = await runCli(['score', '--config', path, '--category', 'pokemon', '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      return (JSON.parse(r.stdout) as { pack_type: string; risk_level: string; ev: number }[])
        .map((x) => `${x.pack_type}/${x.risk_level} ${x.ev}`)
        .sort();
    };
    const freshDir = tempDir('packbot-ops-fresh-');
    const fresh = writeConfig(freshDir, {
      baseUrl: 'embedded',
      keyEnv: 'PB_UNSET_KEY',
      strategy: generousStrategy(freshDir),
      extra: '  token_env: PB_TOKEN',
    });
    const [traded, untouched] = [await rows(configPath), await rows(fresh)];
    expect(traded.length).toBe(untouched.length);
    // Two hours of the bot's and other users' openings moved some pool's expected value.
    expect(traded).not.toEqual(untouched);
    expect(await rows(configPath)).toEqual(traded);
  });

  it('delist --all needs --yes; with the bot stopped it delists with the key under the lock', async () => {
    const refused = await runCli(['delist', '--all', '--config', configPath]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('add --yes');
    const r = await runCli([
      'delist',
      '--all',
      '--yes',
      '--reason',
      'test',
      '--config',
      configPath,
      '--json',
    ]);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.via).toContain('directly');
    expect(out.cards.length).toBeGreaterThan(1);
    expect(out.cards.every((c: { result: string }) => c.result === 'delisted')).toBe(true);
    // The saved simulator state and the ledger agree: nothing listed, the cards held.
    const listings = JSON.parse((await runCli(['listings', '--config', configPath, '--json'])).stdout);
    expect(listings.listings).toEqual([]);
    const vault = JSON.parse((await runCli(['vault', '--config', configPath, '--json'])).stdout);
    const held = vault.cards.filter((c: { ledger_status: string }) => c.ledger_status === 'held');
    expect(held.length).toBe(out.cards.length);
    expect(held[0].ledger_decision).toMatch(/^hold: operator cli:.*: test$/);
  });

  it('with the bot running, status and delist go through its API', async () => {
    const runner = await Runner.start(config(), { clock, logDestination: new LogSink(), metricsPort: port });
    try {
      // With a control token configured every read needs it: without it in the shell, status says so.
      delete process.env.PB_TOKEN;
      const refused = await runCli(['status', '--config', configPath, '--json']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain('set PB_TOKEN in this shell');
      process.env.PB_TOKEN = TOKEN;
      const status = JSON.parse((await runCli(['status', '--config', configPath, '--json'])).stdout);
      expect(status.source).toBe('bot');
      const r = await runCli(['delist', '--card', 'no-such-card', '--config', configPath, '--json']);
      expect(JSON.parse(r.stdout)).toMatchObject({
        via: expect.stringContaining('through the bot'),
        ok: false,
      });
      expect(r.code).toBe(1);
    } finally {
      await runner.stop('test done');
    }
  });
});
