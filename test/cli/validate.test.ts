import { readdirSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from '../temp-dirs.js';
import { runCli } from './run-cli.js';

afterEach(removeTempDirs);

const shipped = [
  ...readdirSync('strategies')
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `strategies/${f}`),
  ...readdirSync('config')
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `config/${f}`),
  ...readdirSync('examples')
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => `examples/${f}`),
];

describe('packbot validate', () => {
  it('accepts every shipped file', async () => {
    expect(shipped.length).toBeGreaterThanOrEqual(3);
    const { code, stdout, stderr } = await runCli([
      'validate',
      ...shipped,
      'test/fixtures/snapshot-hand.json',
    ]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    for (const f of shipped) expect(stdout).toContain(`${f}: ok`);
  });

  it('every shipped YAML points editors at its JSON Schema', async () => {
    const { readFileSync, existsSync } = await import('node:fs');
    for (const f of shipped) {
      const first = readFileSync(f, 'utf8').split('\n')[0]!;
      const m = /^# yaml-language-server: \$schema=(\.\.\/schemas\/[\w-]+\.schema\.json)$/.exec(first);
      expect(m, f).not.toBeNull();
      expect(existsSync(`${f.split('/')[0]}/${m![1]}`), f).toBe(true);
    }
  });

  it('reports every problem of every file with file:line:column and the field path', async () => {
    const { code, stdout, stderr } = await runCli([
      'validate',
      'test/fixtures/strategy-broken.yaml',
      'strategies/balanced.yaml',
      'test/fixtures/unknown-format.yaml',
      'missing.yaml',
    ]);
    expect(code).toBe(2);
    expect(stdout).toContain('strategies/balanced.yaml: ok');
    expect(stderr).toMatch(/strategy-broken\.yaml:5:17: open\.max_quantity: .*10/);
    expect(stderr).toMatch(/strategy-broken\.yaml:7:18: sell\.threshold_usd: .*0/);
    expect(stderr).toMatch(/strategy-broken\.yaml:9:13: sell\.list\.markup: .*2/);
    expect(stderr).toMatch(/strategy-broken\.yaml:11:\d+: sell\.list\.fill\.model/);
    expect(stderr).toMatch(
      /unknown-format\.yaml:1:9: format: unknown format 'packbot\.nothing\/v9'; expected one of: packbot\.strategy\/v1/,
    );
    expect(stderr).toMatch(/missing\.yaml: file not found/);
    expect(stderr).toMatch(/3 of 4 file\(s\) invalid/);
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it.each([
    ['syntax error', 'format: packbot.strategy/v1\nopen: [1, 2\n', /:\d+:\d+: /],
    ['no format', 'name: x\n', /:1:1: format: missing 'format' field/],
    ['not a mapping', '- 1\n- 2\n', /:1:1: expected a mapping/],
    [
      'misspelt field',
      'format: packbot.strategy/v1\nopen:\n  min_ev_ratoi: 1\n',
      /:2:1: open: Unrecognized key: "min_ev_ratoi"|:3:3: open/,
    ],
  ])('rejects %s', async (_n, text, message) => {
    const { writeFileSync } = await import('node:fs');
    const dir = tempDir('packbot-validate-');
    const file = `${dir}/bad.yaml`;
    writeFileSync(file, text);
    const { code, stderr } = await runCli(['validate', file]);
    expect(code).toBe(2);
    expect(stderr).toContain(file);
    expect(stderr).toMatch(message);
  });

  it('needs at least one file', async () => {
    const { code, stderr } = await runCli(['validate']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/at least one file/);
  });
});

describe('packbot validate CONFIG checks the files the config references', () => {
  it('reports a bad strategy and a bad world with their own file:line:column', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const dir = tempDir('packbot-validate-');
    writeFileSync(join(dir, 's.yaml'), 'format: packbot.strategy/v1\nsell:\n  list:\n    markup: 3\n');
    writeFileSync(join(dir, 'w.yaml'), 'format: packbot.world/v1\nname: 7\n');
    const config = join(dir, 'bot.yaml');
    writeFileSync(
      config,
      'format: packbot.config/v1\napi:\n  base_url: embedded\naccounts:\n  - name: main\n    strategy: s.yaml\nsim:\n  world: w.yaml\n',
    );
    const { code, stderr } = await runCli(['validate', config]);
    expect(code).toBe(2);
    expect(stderr).toContain(`${join(dir, 's.yaml')}:4:13: sell.list.markup:`);
    expect(stderr).toMatch(new RegExp(`${join(dir, 'w.yaml')}:2:7: name:`));
    expect(stderr).not.toMatch(/\n\s+at /);
  });

  it('does not need the API key variable to be set', async () => {
    const { writeFileSync } = await import('node:fs');
    const { join, resolve } = await import('node:path');
    const dir = tempDir('packbot-validate-');
    const config = join(dir, 'bot.yaml');
    writeFileSync(
      config,
      `format: packbot.config/v1\napi:\n  base_url: https://partner.example.com\n  key_env: PB_SURELY_UNSET\naccounts:\n  - name: main\n    strategy: ${resolve('strategies/balanced.yaml')}\n`,
    );
    const { code, stdout } = await runCli(['validate', config]);
    expect(code).toBe(0);
    expect(stdout).toContain(`${config}: ok`);
  });
});
