/**
 * Everything is validated before any side effect: a config whose strategy or world is invalid
 * exits 2 naming that file's line and field, and leaves the working directory as it was (no data
 * dir, no ledger, no simulator state, no lock).
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from './helpers.js';
import { built, startBot, stopBots } from './process.js';

afterEach(async () => {
  await stopBots();
  removeTempDirs();
});

describe.skipIf(!built())('validation before side effects (child process)', () => {
  it.each([
    [
      'strategy',
      's.yaml',
      'format: packbot.strategy/v1\nsell:\n  list:\n    markup: 3\n',
      /s\.yaml:4:13: sell\.list\.markup/,
    ],
    ['world', 'w.yaml', 'format: packbot.world/v1\nname: 7\n', /w\.yaml:2:7: name/],
  ])('a bad %s exits 2 with nothing created', async (_what, file, text, message) => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 's.yaml'), 'format: packbot.strategy/v1\n');
    writeFileSync(join(cwd, file), text);
    writeFileSync(
      join(cwd, 'bot.yaml'),
      'format: packbot.config/v1\napi:\n  base_url: embedded\naccounts:\n  - name: main\n    strategy: s.yaml\nsim:\n  world: w.yaml\nmetrics:\n  port: 0\n',
    );
    if (file === 's.yaml') writeFileSync(join(cwd, 'w.yaml'), 'format: packbot.world/v1\n');
    const before = readdirSync(cwd).sort();
    const bot = startBot(['run', '--config', 'bot.yaml'], {}, cwd);
    expect((await bot.exit).code).toBe(2);
    const err = bot.stderr.join('');
    expect(err).toMatch(message);
    expect(err).not.toMatch(/\n\s+at /);
    expect(readdirSync(cwd).sort()).toEqual(before);
  });
});
