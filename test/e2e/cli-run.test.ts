/**
 * `packbot run` as users start it (the built CLI, a child process): on the embedded simulator it
 * opens a pack, sells back the low pulls in the window and lists the high ones, serves every
 * metric, never prints the key, and exits 0 on SIGTERM. Bad input is exit 2 with file:line.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { DESIGN_METRICS, removeTempDirs, tempDir, writeConfig } from './helpers.js';
import { built, startBot, stopBots } from './process.js';

afterEach(async () => {
  await stopBots();
  removeTempDirs();
});

const KEY = 'sk_sim_full';

describe.skipIf(!built())('packbot run (child process)', () => {
  it('trades on the embedded simulator, serves the metrics, stops on SIGTERM with exit 0, resumes', async () => {
    const dir = tempDir();
    const config = writeConfig(dir, { baseUrl: 'embedded', keyEnv: 'PB_UNSET_KEY' });
    const bot = startBot(['run', '--config', config]);
    const listening = await bot.waitFor('metrics server listening');
    const confirmed = await bot.waitFor('order confirmed');
    expect(confirmed.quantity).toBeGreaterThan(0);
    await bot.waitFor('sold back');
    await bot.waitFor('listed');
    const metrics = await (await fetch(`${String(listening.url)}/metrics`)).text();
    for (const name of DESIGN_METRICS) expect(metrics, name).toContain(name);
    expect(metrics).toMatch(/packbot_packs_opened_total\{[^}]+\} [1-9]/);
    expect(metrics).toMatch(/packbot_sellback_payout_usd_total\{account="main"\} [1-9]/);
    expect(metrics).toMatch(/packbot_listings_active\{account="main"\} [1-9]/);
    expect(await (await fetch(`${String(listening.url)}/readyz`)).json()).toEqual({ status: 'ready' });
    expect(metrics).not.toContain(KEY);

    bot.child.kill('SIGTERM');
    const { code } = await bot.exit;
    expect(code).toBe(0);
    expect(bot.lines.join('\n')).not.toContain(KEY);
    expect(bot.lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);

    // A restart picks up the same ledger.
    const again = startBot(['run', '--config', config]);
    await again.waitFor('packbot running');
    again.child.kill('SIGTERM');
    expect((await again.exit).code).toBe(0);
    expect(again.lines.some((l) => l.includes('embedded simulator state restored'))).toBe(true);
  });

  it('exits 2 with file:line:column and no stack trace on a bad config', async () => {
    const dir = tempDir();
    const path = join(dir, 'bad.yaml');
    writeFileSync(
      path,
      'format: packbot.config/v1\napi:\n  base_url: embedded\naccounts:\n  - name: Main!\n    strategy: nope.yaml\n',
    );
    const bot = startBot(['run', '--config', path]);
    const { code } = await bot.exit;
    expect(code).toBe(2);
    const err = bot.stderr.join('');
    expect(err).toContain(`${path}:5:`);
    expect(err).toContain('accounts[0].name');
    expect(err).not.toMatch(/\n\s+at /);
  });

  it('exits 2 on an unknown flag', async () => {
    const bot = startBot(['run', '--confg', 'x']);
    expect((await bot.exit).code).toBe(2);
  });
});
