/**
 * Two accounts in one config: `/metrics` exports two balances (and two budgets, two counters of
 * packs), each labelled with its account and equal to what the service holds for that account,
 * instead of whichever account wrote last.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPES } from '../../src/api/schemas.js';
import { Runner } from '../../src/bot/runner.js';
import { loadBotConfig } from '../../src/config/bot-config.js';
import { HOUR_MS, VirtualClock } from '../../src/core/clock.js';
import { Market } from '../../src/market/market.js';
import { type SimServer, startSimServer } from '../../src/market/server.js';
import { devKeys } from '../../src/market/world.js';
import { driveUntil, KEY, LogSink, START, TrackingClock, testWorld } from '../bot/helpers.js';
import { generousStrategy, removeTempDirs, tempDir, writeConfig } from './helpers.js';

afterAll(removeTempDirs);

const ALT_KEY = 'sk_sim_second_account';

describe('two accounts in one config', () => {
  const virtual = new VirtualClock(START);
  const clock = new TrackingClock(virtual);
  const market = new Market(
    testWorld({
      accounts: [
        { id: 'acct_t', username: 'tester', balance: 5000 },
        { id: 'acct_u', username: 'second', balance: 1234 },
      ],
      keys: [
        ...(devKeys('acct_t') ?? []),
        { name: 'second', key: ALT_KEY, scopes: [...SCOPES], account: 'acct_u' },
      ],
    }),
    { clock: virtual, seed: 11 },
  );
  const dir = tempDir('packbot-two-');
  let server: SimServer;
  let runner: Runner;

  beforeAll(async () => {
    server = await startSimServer({ market, clock: virtual, port: 0 });
    const strategy = generousStrategy(dir);
    const path = writeConfig(dir, { baseUrl: server.url, strategy });
    // The second account, with its own key variable, after `main`.
    writeFileSync(
      path,
      readFileSync(path, 'utf8').replace(
        `    strategy: ${strategy}\n`,
        `    strategy: ${strategy}\n  - name: alt\n    key_env: PB_ALT_KEY\n    strategy: ${strategy}\n`,
      ),
    );
    const config = loadBotConfig(path, { PB_TEST_KEY: KEY, PB_ALT_KEY: ALT_KEY });
    expect(config.accounts.map((a) => a.name)).toEqual(['main', 'alt']);
    runner = await Runner.start(config, { clock, logDestination: new LogSink() });
    await driveUntil(clock, START + 2 * HOUR_MS, 5);
  });
  afterAll(async () => {
    await runner.stop('test done');
    await server.close();
  });

  it('exports two balances, each the service balance of its own account', async () => {
    const text = await (await fetch(`${runner.obs!.url}/metrics`)).text();
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.split(' ').pop());
    };
    const main = value('packbot_balance_usd{account="main"}');
    const alt = value('packbot_balance_usd{account="alt"}');
    expect(main).toBeCloseTo((await market.api(KEY).getAccount()).balance, 2);
    expect(alt).toBeCloseTo((await market.api(ALT_KEY).getAccount()).balance, 2);
    // Both traded, from different starting balances: the two series really are two accounts.
    expect(main).not.toBe(alt);
    expect(value('packbot_budget_min_balance_usd{account="main"}')).toBeDefined();
    expect(value('packbot_budget_min_balance_usd{account="alt"}')).toBeDefined();
    expect(value('packbot_orders_in_doubt{account="alt"}')).toBe(0);
    for (const account of ['main', 'alt'])
      expect(text, account).toMatch(
        new RegExp(`^packbot_packs_opened_total\\{[^}]*account="${account}"\\} [1-9]`, 'm'),
      );
    // No account-scoped series without its account.
    expect(text).not.toMatch(/^packbot_balance_usd /m);
  });
});
