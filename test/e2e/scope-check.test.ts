/**
 * The scope check at start (`GET /me` against what the strategy needs), on the embedded simulator
 * with keys of chosen scopes: a missing scope stops the bot with exit-2 input error naming the
 * account and the scopes, before any order; dry-run needs only the read scopes.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { MINUTE_MS, VirtualClock } from '../../src/core/clock.js';
import { UserInputError } from '../../src/core/errors.js';
import { Ledger } from '../../src/store/ledger.js';
import { driveUntil, LogSink, START, TrackingClock } from '../bot/helpers.js';
import { ROOT, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterEach(removeTempDirs);

const KEYS = `keys:
  - name: sim-nosell
    key: sk_sim_nosell
    scopes: [read:catalog, read:account, rip:packs]
    account: acct_dev
  - name: sim-nopulls
    key: sk_sim_nopulls
    scopes: [read:catalog, read:account, rip:packs, sell:cards, write:listings]
    account: acct_dev
`;

/** open, sweep and reconcile loops of the one account. */
const SLEEPERS = 3;

function setup(key: string): { dir: string; config: string; env: Record<string, string> } {
  const dir = tempDir('packbot-scopes-');
  const world = join(dir, 'world.yaml');
  writeFileSync(world, readFileSync(join(ROOT, 'config/sim.yaml'), 'utf8').replace(/^keys:\n/m, KEYS));
  const config = writeConfig(dir, { baseUrl: 'embedded', extra: `sim:\n  world: ${world}\n` });
  return { dir, config, env: { PB_TEST_KEY: key } };
}

describe('scope check at start', () => {
  it('refuses a key that cannot sell back, naming the account and the scopes, before any order', async () => {
    const { dir, config, env } = setup('sk_sim_nosell');
    const sink = new LogSink();
    const err = await Runner.start(loadBotConfig(config, env), {
      clock: new VirtualClock(START),
      logDestination: sink,
      metricsPort: 0,
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(UserInputError);
    expect((err as Error).message).toMatch(
      /account 'main': the API key 'sim-nosell' lacks the scope\(s\) sell:cards, write:listings/,
    );
    const ledger = Ledger.open(join(dir, 'ledger.db'), { readonly: true });
    try {
      expect(Object.values(ledger.intentCounts()).every((n) => n === 0)).toBe(true);
    } finally {
      ledger.close();
    }
    expect(sink.text).not.toContain('sk_sim_nosell');
  });

  it('dry-run needs only the read scopes', async () => {
    const { config, env } = setup('sk_sim_read');
    const runner = await Runner.start(loadBotConfig(config, env, { forceDryRun: true }), {
      clock: new VirtualClock(START),
      logDestination: new LogSink(),
      metricsPort: 0,
    });
    await runner.stop('test done');
    expect(await runner.done).toBe(0);
  });

  it('runs and trades without read:pulls, with a warning, never asking the report', async () => {
    const { config, env } = setup('sk_sim_nopulls');
    const sink = new LogSink();
    const clock = new TrackingClock(new VirtualClock(START));
    const runner = await Runner.start(loadBotConfig(config, env), {
      clock,
      logDestination: sink,
      metricsPort: 0,
    });
    let ended = false;
    void runner.done.then(() => {
      ended = true;
    });
    // Orders go through (a report read after one would be a 403, which stops the runner): ten
    // simulated minutes, every loop asleep before the clock moves, so all that follows an order
    // has run before the check.
    await driveUntil(clock, START + 10 * MINUTE_MS, SLEEPERS);
    expect(runner.bots[0]!.purchases).toBeGreaterThan(0);
    expect(ended).toBe(false);
    await runner.stop('test done');
    expect(await runner.done).toBe(0);
    expect(sink.messages()).toContain(
      'API key lacks read:pulls: orders in doubt cannot be checked against the purchase report',
    );
  });
});
